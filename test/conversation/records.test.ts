/** Conversation records: one per session, transcript turns, and the durable ended hook. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { forEachEngine, startTestApp, type TestApp } from '../support/app.js';
import { makeAgent, started, stopSession, sleep } from '../sessions/helpers.js';
import type { EndedConversation } from '../../src/conversation/types.js';
import { until } from '../support/until.js';

forEachEngine('conversation records', (engine) => {
  let t: TestApp;
  const endedSeen: EndedConversation[] = [];
  let failNext = 0;
  before(async () => {
    t = await startTestApp(engine);
    t.context.conversations.onEnded.push(async (conversation) => {
      if (failNext > 0) {
        failNext--;
        throw new Error('hook down');
      }
      endedSeen.push(conversation);
    });
  });
  after(() => t.close());

  test('every session is a conversation: begun at start, its turns kept in order, ended once with its transcript', async () => {
    const agentId = await makeAgent(t, { name: 'Records agent' });
    const session = await started(t, { agent_id: agentId, mode: 'render' });
    const id = session.session_id;
    const records = t.context.conversations;
    await records.addTurn(id, { role: 'visitor', text: 'Do you open on Sundays?' });
    await records.addTurn(id, { role: 'agent', text: 'We are closed on Sundays.' });
    await records.addTurn(id, { role: 'visitor', text: 'Thanks, bye' });
    await stopSession(t, id);
    const seen = await until(() => endedSeen.find((c) => c.conversationId === id));
    assert.equal(seen.sessionId, id);
    assert.equal(seen.agentId, agentId);
    assert.equal(seen.agentName, 'Records agent');
    assert.equal(seen.mode, 'render');
    assert.equal(seen.endReason, 'stopped');
    assert.equal(seen.visitorTurns, 2);
    assert.deepEqual(
      seen.transcript.map((x) => [x.role, x.text]),
      [
        ['visitor', 'Do you open on Sundays?'],
        ['agent', 'We are closed on Sundays.'],
        ['visitor', 'Thanks, bye'],
      ],
    );
    assert.ok(seen.endedAt >= seen.startedAt);
    // Ending again (a second stop) announces nothing more.
    await t.request('POST', `/v1/sessions/${id}/stop`);
    await sleep(1500);
    assert.equal(endedSeen.filter((c) => c.conversationId === id).length, 1);
  });

  test('a hook that fails is run again until it succeeds', async () => {
    const agentId = await makeAgent(t, { name: 'Retry agent' });
    const session = await started(t, { agent_id: agentId, mode: 'render' });
    failNext = 1;
    await stopSession(t, session.session_id);
    const seen = await until(() => endedSeen.find((c) => c.conversationId === session.session_id), 20_000);
    assert.equal(seen.endReason, 'stopped');
    assert.equal(failNext, 0);
  });

  test("a transcript's words are searchable, and a category is added once", async () => {
    const agentId = await makeAgent(t, { name: 'Search agent' });
    const session = await started(t, { agent_id: agentId, mode: 'render' });
    const id = session.session_id;
    await t.context.conversations.addTurn(id, { role: 'visitor', text: 'I would like a refund for my order' });
    await t.context.conversations.tag(id, 'refunds');
    await t.context.conversations.tag(id, 'refunds');
    const row = await t.database.db
      .selectFrom('conversations')
      .select(['categories'])
      .where('id', '=', id)
      .where(sql<boolean>`search @@ plainto_tsquery('simple', 'refund')`)
      .executeTakeFirst();
    assert.deepEqual(row?.categories, ['refunds']);
    await stopSession(t, id);
  });

  test('a conversation left open by a stop between session end and record end is ended at the next start', async () => {
    const agentId = await makeAgent(t, { name: 'Recover agent' });
    const session = await started(t, { agent_id: agentId, mode: 'render' });
    const id = session.session_id;
    // As if the process died right after the session's end was written: the record stays open.
    await until(async () => (await t.database.db.selectFrom('conversations').select('id').where('id', '=', id).executeTakeFirst()) ?? undefined);
    await t.database.db
      .updateTable('sessions')
      .set({ status: 'ended', ended_at: new Date(), end_reason: 'stopped', duration_seconds: 1 })
      .where('id', '=', id)
      .execute();
    await t.context.conversations.recover();
    const seen = await until(() => endedSeen.find((c) => c.conversationId === id));
    assert.equal(seen.endReason, 'stopped');
    assert.equal(seen.durationSeconds, 1);
  });
});
