/**
 * How sessions end on their own and what they cost: max duration (FREE_SESSION_SECONDS), the
 * player page never opened (PLAYER_OPEN_SECONDS), metering into usage_records, and the free
 * plan's monthly minutes (FREE_MONTHLY_SECONDS). Timings are shortened through the environment.
 * interface.md "Session", "Limits"; contract.md "Environment", "Sessions: check, stop, direct".
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { forEachEngine, startTestApp, type TestApp } from '../support/app.js';
import {
  assertCoded,
  getSession,
  makeAgent,
  openPlayer,
  PREMIUM_VOICE,
  renderSocket,
  sleep,
  startSession,
  started,
  stopSession,
  waitEnded,
} from './helpers.js';

// Short, with room for a loaded machine: the player must be open before PLAYER_OPEN_SECONDS.
const FREE_SESSION_SECONDS = 3;
const PLAYER_OPEN_SECONDS = 2;

forEachEngine('session lifecycle', (engine) => {
  let t: TestApp;

  before(async () => {
    t = await startTestApp(engine, {
      FREE_SESSION_SECONDS: String(FREE_SESSION_SECONDS),
      PLAYER_OPEN_SECONDS: String(PLAYER_OPEN_SECONDS),
      // A month's free seconds a little above one session's maximum: a session ends by max_duration
      // first, and a second one runs out of the month's seconds.
      FREE_MONTHLY_SECONDS: String(FREE_SESSION_SECONDS + 1),
    });
  });
  after(() => t.close());

  /** The usage_records rows of a session. */
  const usage = (sessionId: string) => t.database.db.selectFrom('usage_records').selectAll().where('session_id', '=', sessionId).execute();

  // Independent accounts and agents: the scenarios wait on timers, so they run side by side.
  describe('ending on its own', { concurrency: true }, () => {
    it('max duration: a free session ends with max_duration at FREE_SESSION_SECONDS, closing the render socket with 4001', async () => {
      const free = await t.account('free');
      const agentId = await makeAgent(t, {}, free.key);
      const s = await started(t, { agent_id: agentId, mode: 'render' }, free.key);
      assert.equal(s.max_session_seconds, FREE_SESSION_SECONDS, 'FREE_SESSION_SECONDS sets max_session_seconds');
      const player = await openPlayer(s.player_url);
      const render = await renderSocket(s.ws_url);
      try {
        assert.equal(await render.closeCodeWithin((FREE_SESSION_SECONDS + 3) * 1000), 4001);
        const waited = (Date.now() - Date.parse(s.created_at)) / 1000;
        assert.ok(waited > FREE_SESSION_SECONDS - 0.5, `closed after ${waited} s, before max_session_seconds`);
        const record = await waitEnded(t, s.session_id, free.key);
        assert.equal(record.status, 'ended');
        assert.equal(record.end_reason, 'max_duration');
        assert.ok(Math.abs(record.duration_seconds - FREE_SESSION_SECONDS) < 1, `duration ${record.duration_seconds}`);
        // The visitor's page is told too.
        const ended = await player.message((m) => m.type === 'ended');
        assert.equal(ended.reason, 'max_duration');
      } finally {
        render.close();
        player.close();
      }
    });

    it('a conversation-mode free session ends by max duration too, and is metered', async () => {
      const free = await t.account('free');
      const agentId = await makeAgent(t, {}, free.key);
      const s = await started(t, { agent_id: agentId }, free.key);
      assert.equal(s.max_session_seconds, FREE_SESSION_SECONDS);
      const player = await openPlayer(s.player_url);
      try {
        const record = await waitEnded(t, s.session_id, free.key);
        assert.equal(record.end_reason, 'max_duration');
        assert.ok(Math.abs(record.duration_seconds - FREE_SESSION_SECONDS) < 1, `duration ${record.duration_seconds}`);
        const rows = await usage(s.session_id);
        assert.equal(rows.length, 1);
        assert.equal(rows[0].account_id, free.id);
        assert.equal(rows[0].agent_id, agentId);
        assert.equal(rows[0].voice_provider, 'kokoro');
        assert.ok(Math.abs(Number(rows[0].seconds) - record.duration_seconds) < 0.01, `metered ${rows[0].seconds} vs duration ${record.duration_seconds}`);
      } finally {
        player.close();
      }
    });

    it('player never opened within PLAYER_OPEN_SECONDS: ended with player_timeout (render socket closes 4001)', async () => {
      const agentId = await makeAgent(t);
      const s = await started(t, { agent_id: agentId, mode: 'render' });
      const render = await renderSocket(s.ws_url);
      try {
        assert.equal(await render.closeCodeWithin((PLAYER_OPEN_SECONDS + 3) * 1000), 4001);
      } finally {
        render.close();
      }
      const record = await waitEnded(t, s.session_id);
      assert.equal(record.status, 'ended');
      assert.equal(record.end_reason, 'player_timeout');
      assert.ok(
        record.duration_seconds >= PLAYER_OPEN_SECONDS - 0.2 && record.duration_seconds < PLAYER_OPEN_SECONDS + 2,
        `duration ${record.duration_seconds}`,
      );
      assert.equal((await usage(s.session_id)).length, 1, 'a timed-out session is metered');
    });

    it('conversation mode: player never opened ends with player_timeout', async () => {
      const s = await started(t, { agent_id: await makeAgent(t) });
      const record = await waitEnded(t, s.session_id);
      assert.equal(record.end_reason, 'player_timeout');
    });

    it('opening the player (hello received) prevents the player timeout; a paid session has no max', async () => {
      const agentId = await makeAgent(t);
      const s = await started(t, { agent_id: agentId, mode: 'render' });
      assert.equal(s.max_session_seconds, null);
      const player = await openPlayer(s.player_url);
      try {
        const hello = player.messages.find((m) => m.type === 'hello');
        assert.equal(hello.session.session_id, s.session_id);
        // Past both the player window and the free plan's max.
        await sleep((Math.max(PLAYER_OPEN_SECONDS, FREE_SESSION_SECONDS) + 1) * 1000);
        assert.equal((await getSession(t, s.session_id)).status, 'active');
        assert.equal((await usage(s.session_id)).length, 0, 'no usage row while running');
      } finally {
        player.close();
      }
      const stopped = await stopSession(t, s.session_id);
      assert.equal(stopped.end_reason, 'stopped');
    });
  });

  describe('metering', { concurrency: true }, () => {
    it('a stopped session is metered once: account, agent, voice provider, seconds = duration', async () => {
      const paid = await t.account('paid');
      const agentId = await makeAgent(t, {}, paid.key);
      const s = await started(t, { agent_id: agentId, mode: 'render' }, paid.key);
      const player = await openPlayer(s.player_url);
      await sleep(1200);
      const stopped = await stopSession(t, s.session_id, paid.key);
      player.close();
      assert.ok(stopped.duration_seconds >= 1.1 && stopped.duration_seconds < 3, `duration ${stopped.duration_seconds}`);
      await stopSession(t, s.session_id, paid.key);
      const rows = await usage(s.session_id);
      assert.equal(rows.length, 1, 'stopping twice meters once');
      assert.equal(rows[0].account_id, paid.id);
      assert.equal(rows[0].agent_id, agentId);
      assert.equal(rows[0].voice_provider, 'kokoro');
      assert.ok(Math.abs(Number(rows[0].seconds) - stopped.duration_seconds) < 0.01, `metered ${rows[0].seconds} vs ${stopped.duration_seconds}`);
    });

    it("the voice provider metered is the session's (a premium voice_id), not the agent's", async () => {
      const paid = await t.account('paid');
      const agentId = await makeAgent(t, {}, paid.key);
      const s = await started(t, { agent_id: agentId, voice_id: PREMIUM_VOICE }, paid.key);
      await stopSession(t, s.session_id, paid.key);
      const rows = await usage(s.session_id);
      assert.equal(rows.length, 1);
      assert.equal(rows[0].voice_provider, 'elevenlabs');
    });

    it('402 free_minutes_exhausted: a free account that used FREE_MONTHLY_SECONDS this month cannot start', async () => {
      const free = await t.account('free');
      const agentId = await makeAgent(t, {}, free.key);
      // The first session uses FREE_SESSION_SECONDS of the month's FREE_SESSION_SECONDS + 1 …
      const s = await started(t, { agent_id: agentId }, free.key);
      const player = await openPlayer(s.player_url);
      assert.equal((await waitEnded(t, s.session_id, free.key)).end_reason, 'max_duration');
      player.close();
      // … the second runs out of the rest while it runs …
      const s2 = await started(t, { agent_id: agentId }, free.key);
      const player2 = await openPlayer(s2.player_url);
      assert.equal((await waitEnded(t, s2.session_id, free.key)).end_reason, 'free_minutes_exhausted');
      player2.close();
      // … and then no session starts this month.
      assertCoded(await startSession(t, { agent_id: agentId }, free.key), 402, 'free_minutes_exhausted');
      assertCoded(await startSession(t, { agent_id: agentId, mode: 'render' }, free.key), 402, 'free_minutes_exhausted');
      // Another free account on the same server still has its minutes.
      const fresh = await t.account('free');
      const other = await started(t, { agent_id: await makeAgent(t, {}, fresh.key) }, fresh.key);
      await stopSession(t, other.session_id, fresh.key);
      // Paid accounts have no monthly minutes.
      const paid = await t.account('paid');
      const paidAgent = await makeAgent(t, {}, paid.key);
      const p = await started(t, { agent_id: paidAgent }, paid.key);
      await sleep(1100);
      await stopSession(t, p.session_id, paid.key);
      assert.equal((await startSession(t, { agent_id: paidAgent }, paid.key)).status, 201);
    });
  });
});
