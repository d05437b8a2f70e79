/** Pieces of the handoff tests: a recorded conversation with visitor values, ended through the real durable path. */
import crypto from 'node:crypto';
import type { TestApp } from '../support/app.js';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export { until } from '../support/until.js';

/**
 * A conversation of the agent: begun with the visitor values the website passed, the turns
 * recorded in order, then ended (its durable ended job runs the handoff hook). Answers its id.
 */
export async function conversation(
  t: TestApp,
  agentId: number,
  turns: Array<['visitor' | 'agent', string]>,
  visitor: Record<string, string> = {},
  accountId = t.accountId,
): Promise<string> {
  const id = crypto.randomUUID();
  const createdAt = new Date(Date.now() - 60_000);
  const session = { id, account_id: accountId, agent_id: agentId, mode: 'conversation' as const, created_at: createdAt };
  await t.context.conversations.begin({ session, visitor });
  for (const [role, text] of turns) await t.context.conversations.addTurn(id, { role, text });
  await t.context.conversations.end({ ...session, ended_at: new Date(), duration_seconds: 60, end_reason: 'stopped' });
  return id;
}

export async function makeAgent(t: TestApp, name = 'Ava', key?: string): Promise<number> {
  const res = await t.request('POST', '/v1/agent/create', { key, body: { name } });
  if (res.status !== 200) throw new Error(`agent create: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id;
}
