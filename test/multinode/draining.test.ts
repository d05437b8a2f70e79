/**
 * Draining a node before an upgrade (issue 29, step one): it starts no new sessions (503 no_capacity
 * with Retry-After, so a client tries again and the balancer's next pick is another node), /readyz
 * answers 503 "draining" with the sessions still live here, and those sessions run on until they end.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { forEachEngine, startTestApp, type TestApp } from '../support/app.js';
import { assertCoded, getSession, makeAgent, started, startSession, stopSession } from '../sessions/helpers.js';

forEachEngine('draining a node', (engine) => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(engine);
  });
  after(async () => {
    await t?.close();
  });

  test('a draining node refuses new sessions, says so on /readyz, and keeps its live ones until they end', async () => {
    const agentId = await makeAgent(t, { concurrency_limit: 5 });
    const live = await started(t, { agent_id: agentId });
    t.context.sessions.draining = true;
    try {
      const refused = await startSession(t, { agent_id: agentId });
      assertCoded(refused, 503, 'no_capacity');
      assert.equal(refused.headers.get('retry-after'), '5');

      const ready = await t.request('GET', '/readyz', { key: null });
      assert.equal(ready.status, 503);
      assert.deepEqual(ready.body, { status: 'draining', live_sessions: 1 });

      assert.equal((await getSession(t, live.session_id)).status, 'active', 'the live session runs on');
      await stopSession(t, live.session_id);
      const drained = await t.request('GET', '/readyz', { key: null });
      assert.deepEqual(drained.body, { status: 'draining', live_sessions: 0 }, 'the operator can now stop the node');
    } finally {
      t.context.sessions.draining = false;
    }
    await stopSession(t, (await started(t, { agent_id: agentId })).session_id);
  });
});
