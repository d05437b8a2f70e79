/** The CSV export streams in keyset batches: more rows than one batch, ties of start time, none lost or repeated. */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, test } from 'node:test';
import { forEachEngine, type TestApp } from '../support/app.js';
import { assertCoded, itemAt, makeAgent } from '../sessions/helpers.js';
import { startReportsApp } from './support.js';

forEachEngine('reports: CSV export in batches', (engine) => {
  let t: TestApp;
  let acct: { id: number; key: string };
  let other: { id: number; key: string };
  let alice: number;
  let bob: number;
  let ids: Record<string, string>;
  before(async () => {
    ({ t, acct, other, alice, bob, ids } = await startReportsApp(engine));
  });
  after(() => t?.close());

  const get = (path: string, key = acct.key) => t.request('GET', path, { key });
  const listIds = async (query: string) => {
    const res = await get(`/v1/reports/conversations${query}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return (res.body.items as any[]).map((i) => Object.keys(ids).find((k) => ids[k] === i.conversation_id));
  };

  test('the CSV export streams in batches: more rows than one batch, none lost or repeated', async () => {
    const many = await t.account('paid');
    const agent = await makeAgent(t, { name: 'Busy' }, many.key);
    const base = Date.parse('2026-03-01T00:00:00Z');
    // 1,203 conversations, several sharing a start (the keyset must not skip ties).
    for (let i = 0; i < 1203; i += 50) {
      await Promise.all(
        Array.from({ length: Math.min(50, 1203 - i) }, (_, k) => {
          const created = new Date(base + Math.floor((i + k) / 3) * 1000);
          return t.context.conversations.begin({
            session: { id: crypto.randomUUID(), account_id: many.id, agent_id: agent, mode: 'render', created_at: created },
            agentName: 'Busy',
            visitorId: null,
          });
        }),
      );
    }
    const text = await (await fetch(`${t.url}/v1/reports/export/conversations`, { headers: { authorization: `Bearer ${many.key}` } })).text();
    const rows = text.trim().split('\r\n').slice(1);
    assert.equal(rows.length, 1203);
    assert.equal(new Set(rows.map((r) => r.split(',')[0])).size, 1203);
    const starts = rows.map((r) => r.split(',')[6]!);
    assert.deepEqual([...starts].sort().reverse(), starts, 'newest first');
  });
});
