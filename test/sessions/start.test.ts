/**
 * POST /v1/sessions: the answer, every row of the interface's session error table, the session
 * overlay (avatar, voice, look) and the race-free limits. interface.md "Session", "Sessions",
 * "Errors", "Limits"; contract.md "Environment", "Sessions: check, stop, direct".
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { forEachEngine, startTestApp, type TestApp } from '../support/app.js';
import {
  assertCoded,
  getSession,
  ISO_UTC,
  itemAt,
  makeAgent,
  openPlayer,
  PREMIUM_VOICE,
  startSession,
  started,
  stopSession,
  UUID,
  validationItems,
} from './helpers.js';

forEachEngine('session start', (engine) => {
  let t: TestApp;

  before(async () => {
    t = await startTestApp(engine);
  });
  after(() => t.close());

  describe('the 201 answer', () => {
    it('conversation mode by default: UUID id, active, agent_id, player_url, no ws_url key, null max on paid, ISO UTC created_at', async () => {
      const agentId = await makeAgent(t);
      const before = Date.now();
      const res = await startSession(t, { agent_id: agentId });
      const after = Date.now();
      assert.equal(res.status, 201, JSON.stringify(res.body));
      const s = res.body;
      assert.match(s.session_id, UUID);
      assert.equal(s.status, 'active');
      assert.equal(s.mode, 'conversation');
      assert.equal(s.agent_id, agentId);
      assert.ok(!('ws_url' in s), `conversation answer has a ws_url key: ${JSON.stringify(s)}`);
      assert.equal(s.max_session_seconds, null);
      assert.match(s.created_at, ISO_UTC);
      const created = Date.parse(s.created_at);
      assert.ok(created >= before - 1000 && created <= after + 1000, `created_at ${s.created_at} is not now`);
      assert.ok(s.player_url.startsWith(t.url + '/'), `player_url ${s.player_url} is not on this server`);
      assert.deepEqual(Object.keys(s).sort(), ['agent_id', 'created_at', 'max_session_seconds', 'mode', 'player_url', 'session_id', 'status']);
    });

    it('render mode carries a ws_url on this server with a token', async () => {
      const agentId = await makeAgent(t);
      const s = await started(t, { agent_id: agentId, mode: 'render' });
      assert.equal(s.mode, 'render');
      assert.equal(typeof s.ws_url, 'string');
      const url = new URL(s.ws_url);
      assert.equal(url.protocol, 'ws:');
      assert.equal(url.host, new URL(t.url).host);
      const token = url.searchParams.get('token');
      assert.ok(token && token.length >= 32, `ws_url token too short: ${s.ws_url}`);
      assert.ok(url.pathname.includes(s.session_id), 'ws_url names the session');
    });

    it('explicit mode conversation also has no ws_url key', async () => {
      const s = await started(t, { agent_id: await makeAgent(t), mode: 'conversation' });
      assert.equal(s.mode, 'conversation');
      assert.ok(!('ws_url' in s));
    });

    it('player_url is unique per session and ends in a long random key; ws tokens differ too', async () => {
      const agentId = await makeAgent(t, { concurrency_limit: 5 });
      const answers = [];
      for (let i = 0; i < 4; i++) answers.push(await started(t, { agent_id: agentId, mode: 'render' }));
      const keys = answers.map((a) => new URL(a.player_url).pathname.split('/').filter(Boolean).pop()!);
      assert.equal(new Set(answers.map((a) => a.player_url)).size, 4);
      assert.equal(new Set(answers.map((a) => new URL(a.ws_url).searchParams.get('token'))).size, 4);
      for (const key of keys) {
        assert.ok(key.length >= 22, `player key "${key}" is short (guessable)`);
        assert.match(key, /^[A-Za-z0-9_-]+$/);
      }
      // No shared prefix beyond chance: keys are not counters or timestamps.
      const common = (a: string, b: string) => {
        let i = 0;
        while (i < a.length && a[i] === b[i]) i++;
        return i;
      };
      assert.ok(common(keys[0], keys[1]) < 6 && common(keys[2], keys[3]) < 6, `player keys look sequential: ${keys.join(', ')}`);
      // The player key is not the session id.
      for (const a of answers) assert.ok(!a.player_url.includes(a.session_id));
    });

    it('a free account gets max_session_seconds 300 (FREE_SESSION_SECONDS default)', async () => {
      const free = await t.account('free');
      const agentId = await makeAgent(t, {}, free.key);
      const s = await started(t, { agent_id: agentId }, free.key);
      assert.equal(s.max_session_seconds, 300);
      await stopSession(t, s.session_id, free.key);
    });

    it('a sessions-only key can start sessions', async () => {
      const key = await t.keyFor(t.accountId, ['sessions']);
      const s = await started(t, { agent_id: await makeAgent(t) }, key);
      assert.equal(s.status, 'active');
    });
  });

  describe('error table', () => {
    it('402 insufficient_balance: paid account with balance 0; topping up lets it start', async () => {
      const paid = await t.account('paid');
      const agentId = await makeAgent(t, {}, paid.key);
      await t.context.accounts.update(paid.id, { balanceCents: 0 });
      assertCoded(await startSession(t, { agent_id: agentId }, paid.key), 402, 'insufficient_balance');
      await t.context.accounts.update(paid.id, { balanceCents: 1 });
      assert.equal((await startSession(t, { agent_id: agentId }, paid.key)).status, 201);
    });

    it('402 free_concurrency: a free account with a session running; after stopping it, another starts', async () => {
      const free = await t.account('free');
      const agentId = await makeAgent(t, {}, free.key);
      const first = await started(t, { agent_id: agentId, mode: 'render' }, free.key);
      assertCoded(await startSession(t, { agent_id: agentId, mode: 'render' }, free.key), 402, 'free_concurrency');
      assertCoded(await startSession(t, { agent_id: agentId }, free.key), 402, 'free_concurrency');
      await stopSession(t, first.session_id, free.key);
      const second = await started(t, { agent_id: agentId }, free.key);
      await stopSession(t, second.session_id, free.key);
    });

    it('402 paid_feature: a premium voice_id on a free account; the same voice starts on a paid one', async () => {
      const free = await t.account('free');
      const freeAgent = await makeAgent(t, {}, free.key);
      assertCoded(await startSession(t, { agent_id: freeAgent, voice_id: PREMIUM_VOICE }, free.key), 402, 'paid_feature');
      assertCoded(await startSession(t, { agent_id: freeAgent, mode: 'render', voice_id: PREMIUM_VOICE }, free.key), 402, 'paid_feature');
      const s = await started(t, { agent_id: await makeAgent(t), voice_id: PREMIUM_VOICE });
      const record = await getSession(t, s.session_id);
      assert.equal(record.voice_id, PREMIUM_VOICE);
      assert.equal(record.voice_provider, 'elevenlabs');
    });

    it("404 agent_not_found: a missing agent and another account's agent, answered alike", async () => {
      const other = await t.account('paid');
      const foreign = await makeAgent(t, {}, other.key);
      const missing = await startSession(t, { agent_id: 987_654_321 });
      const theirs = await startSession(t, { agent_id: foreign });
      assertCoded(missing, 404, 'agent_not_found');
      assertCoded(theirs, 404, 'agent_not_found');
      assert.equal(theirs.body.detail.message.replace(String(foreign), 'N'), missing.body.detail.message.replace('987654321', 'N'));
      // The owner can.
      assert.equal((await startSession(t, { agent_id: foreign }, other.key)).status, 201);
    });

    it('409 agent_building: conversation refused while the knowledge is built, render starts', async () => {
      const agentId = await makeAgent(t, { concurrency_limit: 3 });
      const other = await makeAgent(t);
      const saved = t.context.sessions.hooks.building;
      t.context.sessions.hooks.building = async (id) => id === agentId;
      try {
        assertCoded(await startSession(t, { agent_id: agentId }), 409, 'agent_building');
        assertCoded(await startSession(t, { agent_id: agentId, mode: 'conversation' }), 409, 'agent_building');
        const render = await started(t, { agent_id: agentId, mode: 'render' });
        assert.equal(render.mode, 'render');
        assert.equal((await startSession(t, { agent_id: other })).status, 201, 'another agent is not building');
      } finally {
        t.context.sessions.hooks.building = saved;
      }
      assert.equal((await startSession(t, { agent_id: agentId })).status, 201, 'once built, conversation starts');
    });

    it('409 concurrency_limit: the agent holds its limit; stopping one frees a place', async () => {
      const agentId = await makeAgent(t, { concurrency_limit: 2 });
      const a = await started(t, { agent_id: agentId });
      await started(t, { agent_id: agentId, mode: 'render' });
      assertCoded(await startSession(t, { agent_id: agentId }), 409, 'concurrency_limit');
      assertCoded(await startSession(t, { agent_id: agentId, mode: 'render' }), 409, 'concurrency_limit');
      await stopSession(t, a.session_id);
      assert.equal((await startSession(t, { agent_id: agentId })).status, 201);
      // Default concurrency_limit is 1.
      const single = await makeAgent(t);
      await started(t, { agent_id: single });
      assertCoded(await startSession(t, { agent_id: single }), 409, 'concurrency_limit');
    });

    it("422 voice_face_mismatch: a man's face with the agent's af_bella voice; a suitable voice_id fixes it", async () => {
      const agentId = await makeAgent(t, { concurrency_limit: 5 });
      assertCoded(await startSession(t, { agent_id: agentId, avatar_id: 'face02' }), 422, 'voice_face_mismatch');
      assertCoded(await startSession(t, { agent_id: agentId, voice_id: 'am_michael' }), 422, 'voice_face_mismatch');
      assertCoded(await startSession(t, { agent_id: agentId, mode: 'render', avatar_id: 'face02', voice_id: 'af_heart' }), 422, 'voice_face_mismatch');
      const s = await started(t, { agent_id: agentId, avatar_id: 'face02', voice_id: 'am_michael' });
      const record = await getSession(t, s.session_id);
      assert.equal(record.avatar_id, 'face02');
      assert.equal(record.voice_id, 'am_michael');
      // Another woman's face keeps the agent's voice.
      assert.equal((await startSession(t, { agent_id: agentId, avatar_id: 'face03' })).status, 201);
    });

    it('422 unknown_avatar', async () => {
      const agentId = await makeAgent(t);
      assertCoded(await startSession(t, { agent_id: agentId, avatar_id: 'face99' }), 422, 'unknown_avatar');
      assertCoded(await startSession(t, { agent_id: agentId, avatar_id: 'face99', voice_id: 'am_michael' }), 422, 'unknown_avatar');
    });

    describe('422 invalid_look', () => {
      let agentId: number;
      before(async () => {
        agentId = await makeAgent(t, { concurrency_limit: 20 });
      });
      const cases: Array<[string, unknown]> = [
        ['an unknown backdrop', { backdrop: 'moon_base' }],
        ['an unknown camera in cameras', { cameras: ['mid', 'drone'] }],
        ['an unknown start camera', { camera: 'drone' }],
        ['a start camera not among the cameras', { cameras: ['far'], camera: 'close' }],
      ];
      for (const [label, look] of cases) {
        it(label, async () => {
          assertCoded(await startSession(t, { agent_id: agentId, look }), 422, 'invalid_look');
          assertCoded(await startSession(t, { agent_id: agentId, mode: 'render', look }), 422, 'invalid_look');
        });
      }
      it('a known backdrop, cameras and start camera start', async () => {
        const backdrops = (await t.request('GET', '/v1/backdrops')).body as Array<{ backdrop_id: string }>;
        assert.ok(backdrops.length > 0);
        assert.equal(
          (await startSession(t, { agent_id: agentId, look: { backdrop: backdrops[0].backdrop_id, cameras: ['far', 'close'], camera: 'close' } })).status,
          201,
        );
        assert.equal((await startSession(t, { agent_id: agentId, look: { backdrop: null, camera: 'auto' } })).status, 201);
      });
    });

    describe('422 validation (FastAPI shape)', () => {
      let agentId: number;
      before(async () => {
        agentId = await makeAgent(t, { concurrency_limit: 20 });
      });
      it('an unknown request field: loc ["body", field], type extra_forbidden', async () => {
        const item = itemAt(await startSession(t, { agent_id: agentId, colour: 'red' }), ['body', 'colour']);
        assert.equal(item.type, 'extra_forbidden');
        assert.equal(item.input, 'red');
      });
      it('an unknown field inside look', async () => {
        const item = itemAt(await startSession(t, { agent_id: agentId, look: { glow: 2 } }), ['body', 'look', 'glow']);
        assert.equal(item.type, 'extra_forbidden');
      });
      it('agent_id missing, and mode not a mode', async () => {
        assert.equal(itemAt(await startSession(t, {}), ['body', 'agent_id']).type, 'missing');
        itemAt(await startSession(t, { agent_id: agentId, mode: 'video' }), ['body', 'mode']);
      });
      for (const face_light of [0.49, 1.51, 0, 3]) {
        it(`look.face_light ${face_light} is outside 0.5..1.5`, async () => {
          itemAt(await startSession(t, { agent_id: agentId, look: { face_light } }), ['body', 'look', 'face_light']);
        });
      }
      it('look.face_light 0.5 and 1.5 are accepted', async () => {
        for (const face_light of [0.5, 1.5]) {
          assert.equal((await startSession(t, { agent_id: agentId, look: { face_light } })).status, 201);
        }
      });
      it('a body that is not an object', async () => {
        validationItems(await startSession(t, [1, 2] as unknown as Record<string, unknown>));
      });
    });

    it('every coded error body is exactly {detail: {code, message}}', async () => {
      const res = await startSession(t, { agent_id: 123_456_789 });
      assert.equal(res.status, 404);
      assert.deepEqual(Object.keys(res.body), ['detail']);
      assert.deepEqual(Object.keys(res.body.detail).sort(), ['code', 'message']);
    });
  });

  describe('the session overlay leaves the agent unchanged', () => {
    it('avatar_id, voice_id and look apply to the session only', async () => {
      const backdrops = (await t.request('GET', '/v1/backdrops')).body as Array<{ backdrop_id: string }>;
      const agentId = await makeAgent(t, { studio: { backdrop: null, cameras: ['far', 'mid', 'close'], face_light: 1 } });
      const before = (await t.request('GET', `/v1/agent/${agentId}`)).body;
      const look = { backdrop: backdrops[backdrops.length - 1].backdrop_id, cameras: ['close', 'mid'], camera: 'close', face_light: 1.3 };
      const s = await started(t, { agent_id: agentId, avatar_id: 'face02', voice_id: 'am_michael', look });
      const after = (await t.request('GET', `/v1/agent/${agentId}`)).body;
      assert.deepEqual(after, before);
      assert.equal(after.avatar_id, 'face01');
      assert.equal(after.voice_id, 'af_bella');
      assert.equal(after.studio.backdrop, null);

      const record = await getSession(t, s.session_id);
      assert.equal(record.avatar_id, 'face02');
      assert.equal(record.voice_id, 'am_michael');
      // The visitor's page gets the session's face and look.
      const player = await openPlayer(s.player_url);
      try {
        const hello = player.messages.find((m) => m.type === 'hello');
        assert.equal(hello.face?.avatar_id, 'face02');
        assert.equal(hello.studio.backdrop?.backdrop_id, look.backdrop);
        assert.deepEqual(hello.studio.cameras, ['close', 'mid']);
        assert.equal(hello.studio.camera, 'close');
        assert.equal(hello.studio.face_light, 1.3);
      } finally {
        player.close();
      }
    });

    it("without an overlay the session takes the agent's settings", async () => {
      const agentId = await makeAgent(t, { avatar_id: 'face04', voice_id: 'am_adam', studio: { face_light: 0.7, cameras: ['far'] } });
      const s = await started(t, { agent_id: agentId });
      const record = await getSession(t, s.session_id);
      assert.equal(record.avatar_id, 'face04');
      assert.equal(record.voice_id, 'am_adam');
      const player = await openPlayer(s.player_url);
      try {
        const hello = player.messages.find((m) => m.type === 'hello');
        assert.equal(hello.studio.face_light, 0.7);
        assert.deepEqual(hello.studio.cameras, ['far']);
      } finally {
        player.close();
      }
    });
  });

  describe('races', () => {
    it('20 simultaneous starts against concurrency_limit 3 start exactly 3', async () => {
      const agentId = await makeAgent(t, { concurrency_limit: 3 });
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => startSession(t, { agent_id: agentId, mode: i % 2 ? 'render' : 'conversation' })));
      const ok = answers.filter((a) => a.status === 201);
      assert.equal(ok.length, 3, `statuses: ${answers.map((a) => a.status).join(',')}`);
      for (const a of answers.filter((x) => x.status !== 201)) assertCoded(a, 409, 'concurrency_limit');
      const active = await t.request('GET', `/v1/sessions?agent_id=${agentId}&status=active`);
      assert.equal(active.body.length, 3);
    });

    it('a free account: 10 simultaneous starts run exactly 1', async () => {
      const free = await t.account('free');
      const agentId = await makeAgent(t, {}, free.key);
      const answers = await Promise.all(Array.from({ length: 10 }, () => startSession(t, { agent_id: agentId, mode: 'render' }, free.key)));
      assert.equal(answers.filter((a) => a.status === 201).length, 1, `statuses: ${answers.map((a) => a.status).join(',')}`);
      for (const a of answers.filter((x) => x.status !== 201)) assertCoded(a, 402, 'free_concurrency');
    });
  });
});

forEachEngine('session capacity', (engine) => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(engine, { SESSION_CAPACITY: '3' });
  });
  after(() => t.close());

  it('SESSION_CAPACITY=3: 20 simultaneous starts across agents start exactly 3, the rest 503 no_capacity', async () => {
    const agents: number[] = [];
    for (let i = 0; i < 20; i++) agents.push(await makeAgent(t));
    const answers = await Promise.all(agents.map((agent_id) => startSession(t, { agent_id })));
    const ok = answers.filter((a) => a.status === 201);
    assert.equal(ok.length, 3, `statuses: ${answers.map((a) => a.status).join(',')}`);
    for (const a of answers.filter((x) => x.status !== 201)) assertCoded(a, 503, 'no_capacity');

    // Other accounts count too; a stop frees a place.
    const other = await t.account('paid');
    const otherAgent = await makeAgent(t, {}, other.key);
    assertCoded(await startSession(t, { agent_id: otherAgent }, other.key), 503, 'no_capacity');
    await stopSession(t, ok[0].body.session_id);
    assert.equal((await startSession(t, { agent_id: otherAgent }, other.key)).status, 201);
    const idle = agents[answers.findIndex((a) => a.status !== 201)];
    assertCoded(await startSession(t, { agent_id: idle }), 503, 'no_capacity');
  });
});
