/** The reports tests' shared data: two accounts, their agents and conversations recorded as the conversation capability records them. */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { startTestApp, type Engine, type TestApp } from '../support/app.js';
import { until } from '../support/until.js';
import { makeAgent } from '../sessions/helpers.js';

export interface ReportsFixture {
  t: TestApp;
  acct: { id: number; key: string };
  other: { id: number; key: string };
  alice: number;
  bob: number;
  /** Conversation ids by name: c1, c2, c3 (ended), running, foreign (the other account's). */
  ids: Record<string, string>;
}

export async function startReportsApp(engine: Engine): Promise<ReportsFixture> {
  const ids: Record<string, string> = {};
  let t: TestApp;
  let acct: { id: number; key: string };
  let other: { id: number; key: string };
  let alice: number;
  let bob: number;
  /** A conversation as the conversation capability records it (begin, turns, end). */
  async function record(
    name: string,
    o: {
      accountId: number;
      agentId: number;
      visitorId?: string;
      start: string;
      seconds?: number;
      turns: Array<[role: 'visitor' | 'agent', text: string, details?: Record<string, unknown>]>;
      category?: string;
    },
  ) {
    const id = crypto.randomUUID();
    ids[name] = id;
    const started = new Date(o.start);
    const session = { id, account_id: o.accountId, agent_id: o.agentId, mode: 'conversation' as const, created_at: started };
    await t.context.conversations.begin({ session, visitorId: o.visitorId ?? null });
    let at = started.getTime();
    for (const [role, text, details] of o.turns) await t.context.conversations.addTurn(id, { role, text, at: new Date((at += 5000)), details });
    if (o.category) await t.context.conversations.tag(id, o.category);
    if (o.seconds !== undefined) {
      await t.context.conversations.end({
        ...session,
        ended_at: new Date(started.getTime() + o.seconds * 1000),
        duration_seconds: o.seconds,
        end_reason: 'stopped',
      });
    }
    return id;
  }

  t = await startTestApp(engine);
  acct = await t.account('paid');
  other = await t.account('paid');
  alice = await makeAgent(t, { name: 'Alice desk' }, acct.key);
  bob = await makeAgent(t, { name: 'Bob, the "night" desk' }, acct.key);
  const otherAgent = await makeAgent(t, { name: 'Elsewhere' }, other.key);
  // An inbox handoff on Alice: every ended conversation of hers is handed off once.
  const rule = await t.request('POST', `/v1/agent/${alice}/v2/rules`, {
    key: acct.key,
    body: { name: 'Every chat', details: [], destination: { type: 'inbox', template: 'A chat ended' } },
  });
  assert.equal(rule.status, 200, JSON.stringify(rule.body));

  await record('c1', {
    accountId: acct.id,
    agentId: alice,
    visitorId: 'v_1',
    start: '2026-01-10T10:00:00Z',
    seconds: 120,
    turns: [
      ['visitor', 'I want a refund please'],
      [
        'agent',
        'Sure, refunds take five days.',
        { source: 'answer', answered: true, latency_ms: { end_of_turn: 0, recognised: 0, first_text: 300, first_audio: 500, heard: 650 } },
      ],
      ['visitor', 'Thanks'],
    ],
  });
  await record('c2', {
    accountId: acct.id,
    agentId: alice,
    visitorId: 'v_2',
    start: '2026-01-10T23:59:59Z',
    seconds: 30,
    category: 'lead',
    turns: [
      ['visitor', 'What are your opening hours?'],
      ['agent', "I don't know that yet.", { source: 'answer', answered: false, gap_id: 7, latency_ms: { first_text: 700, first_audio: 900, heard: 1050 } }],
    ],
  });
  await record('c3', {
    accountId: acct.id,
    agentId: bob,
    visitorId: 'v_1',
    start: '2026-01-12T08:00:00Z',
    seconds: 600,
    turns: [
      ['visitor', 'Line one, with a comma\n"quoted" line two'],
      ['agent', 'Noted.', { source: 'answer', answered: false, gap_id: 7 }],
      ['agent', 'Anything else?', { source: 'answer', answered: false, gap_id: 8 }],
    ],
  });
  // Still running (no end), begun now.
  await record('running', { accountId: acct.id, agentId: bob, start: new Date(Date.now() - 2000).toISOString(), turns: [['visitor', 'hello there']] });
  // Another account's conversation that matches the same words and visitor.
  await record('foreign', {
    accountId: other.id,
    agentId: otherAgent,
    visitorId: 'v_1',
    start: '2026-01-10T12:00:00Z',
    seconds: 50,
    turns: [['visitor', 'refund refund']],
  });
  await until(
    async () => (await t.request('GET', `/v1/reports/conversations/${ids.c2}`, { key: acct.key })).body.handoffs_delivered === 1 || undefined,
    30_000,
    'the handoff of c2',
  );
  await until(
    async () => (await t.request('GET', `/v1/reports/conversations/${ids.c1}`, { key: acct.key })).body.handoffs_delivered === 1 || undefined,
    30_000,
    'the handoff of c1',
  );
  return { t, acct, other, alice, bob, ids };
}

/** Names the conversations of a list answer by their fixture names. */
export function namesOf(fixture: ReportsFixture, items: Array<{ conversation_id: string }>): Array<string | undefined> {
  return items.map((i) => Object.keys(fixture.ids).find((k) => fixture.ids[k] === i.conversation_id));
}
