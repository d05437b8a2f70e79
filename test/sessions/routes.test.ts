/**
 * Checking, stopping and directing sessions, their permission, and the render socket's
 * credentials and close codes. contract.md "Sessions: check, stop, direct", "Permissions";
 * interface.md "Authentication" 6, "Render-mode streaming protocol" (connection rules, close codes).
 */
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { forEachEngine, startTestApp, type TestApp } from '../support/app.js';
import { assertCoded, Client, getSession, ISO_UTC, itemAt, makeAgent, renderSocket, sleep, started, stopSession } from './helpers.js';

forEachEngine('session routes', (engine) => {
  let t: TestApp;

  before(async () => {
    t = await startTestApp(engine);
  });
  after(() => t.close());

  describe('stop and get', () => {
    it('stop: status ended, end_reason stopped, ended_at, duration_seconds; GET agrees', async () => {
      const s = await started(t, { agent_id: await makeAgent(t), mode: 'render' });
      const active = await getSession(t, s.session_id);
      assert.equal(active.status, 'active');
      assert.equal(active.ended_at, null);
      assert.equal(active.end_reason, null);
      assert.equal(active.duration_seconds, null);
      for (const key of ['session_id', 'mode', 'agent_id', 'player_url', 'max_session_seconds', 'created_at'] as const)
        assert.deepEqual(active[key], s[key], key);
      assert.ok(!('ws_url' in active), 'the record does not repeat the secret ws_url');

      await sleep(300);
      const stopped = await stopSession(t, s.session_id);
      assert.equal(stopped.session_id, s.session_id);
      assert.equal(stopped.status, 'ended');
      assert.equal(stopped.end_reason, 'stopped');
      assert.match(stopped.ended_at, ISO_UTC);
      assert.ok(Date.parse(stopped.ended_at) >= Date.parse(s.created_at));
      assert.equal(typeof stopped.duration_seconds, 'number');
      assert.ok(stopped.duration_seconds >= 0.25 && stopped.duration_seconds < 5, `duration ${stopped.duration_seconds}`);
      const expected = (Date.parse(stopped.ended_at) - Date.parse(stopped.created_at)) / 1000;
      assert.ok(Math.abs(stopped.duration_seconds - expected) < 0.05, `duration ${stopped.duration_seconds} vs ended_at - created_at ${expected}`);
      assert.deepEqual(await getSession(t, s.session_id), stopped);
    });

    it('stopping an ended session answers it unchanged', async () => {
      const s = await started(t, { agent_id: await makeAgent(t) });
      const first = await stopSession(t, s.session_id);
      await sleep(200);
      const again = await stopSession(t, s.session_id);
      assert.deepEqual(again, first);
    });

    it("GET and stop of another account's session answer 404 exactly like a missing one", async () => {
      const other = await t.account('paid');
      const theirs = await started(t, { agent_id: await makeAgent(t, {}, other.key) }, other.key);
      const missing = crypto.randomUUID();
      for (const route of ['', '/stop']) {
        const method = route ? 'POST' : 'GET';
        const a = await t.request(method, `/v1/sessions/${theirs.session_id}${route}`);
        const b = await t.request(method, `/v1/sessions/${missing}${route}`);
        assertCoded(a, 404, 'session_not_found');
        assertCoded(b, 404, 'session_not_found');
        assert.equal(a.body.detail.message.replace(theirs.session_id, 'ID'), b.body.detail.message.replace(missing, 'ID'));
      }
      const cmd = await t.request('POST', `/v1/sessions/${theirs.session_id}/commands`, { body: { type: 'agent.interrupt' } });
      assertCoded(cmd, 404, 'session_not_found');
      // Untouched: still running for its owner.
      assert.equal((await getSession(t, theirs.session_id, other.key)).status, 'active');
    });

    it('deleting the agent ends its running sessions (render socket 4001); the records and metered seconds remain', async () => {
      const agentId = await makeAgent(t, { concurrency_limit: 2 });
      const a = await started(t, { agent_id: agentId, mode: 'render' });
      const b = await started(t, { agent_id: agentId });
      const socket = await renderSocket(a.ws_url);
      const del = await t.request('DELETE', `/v1/agent/${agentId}?confirm=true`);
      assert.ok(del.status === 204 || del.status === 200, `delete: ${del.status} ${JSON.stringify(del.body)}`);
      assert.equal(await socket.closeCodeWithin(), 4001);
      for (const s of [a, b]) {
        const record = await getSession(t, s.session_id);
        assert.equal(record.status, 'ended');
        assert.equal(record.agent_id, agentId);
        const rows = await t.database.db.selectFrom('usage_records').select('seconds').where('session_id', '=', s.session_id).execute();
        assert.equal(rows.length, 1);
      }
    });

    it('a non-UUID session id answers 422 at ["path", "session_id"]', async () => {
      for (const [method, suffix] of [
        ['GET', ''],
        ['POST', '/stop'],
        ['POST', '/commands'],
      ] as const) {
        const res = await t.request(method, `/v1/sessions/not-a-uuid${suffix}`, suffix === '/commands' ? { body: { type: 'agent.interrupt' } } : {});
        itemAt(res, ['path', 'session_id']);
      }
    });
  });

  describe('GET /v1/sessions', () => {
    let key: string;
    let agentA: number;
    let agentB: number;
    const ids: string[] = []; // in start order
    const stoppedIds = new Set<string>();
    const list = (query = '') => t.request('GET', `/v1/sessions${query}`, { key });

    before(async () => {
      const account = await t.account('paid');
      key = account.key;
      agentA = await makeAgent(t, { concurrency_limit: 100 }, key);
      agentB = await makeAgent(t, { concurrency_limit: 100 }, key);
      for (let i = 0; i < 55; i++) {
        const s = await started(t, { agent_id: i % 5 === 0 ? agentB : agentA, mode: i % 2 ? 'render' : 'conversation' }, key);
        ids.push(s.session_id);
      }
      for (const i of [3, 10, 54]) {
        await stopSession(t, ids[i], key);
        stoppedIds.add(ids[i]);
      }
    });

    it("newest first, default limit 50, only this account's sessions", async () => {
      const res = await list();
      assert.equal(res.status, 200);
      assert.equal(res.body.length, 50);
      assert.deepEqual(
        res.body.map((r: any) => r.session_id),
        [...ids].reverse().slice(0, 50),
      );
      for (let i = 1; i < res.body.length; i++) assert.ok(res.body[i - 1].created_at >= res.body[i].created_at);
      const mine = await t.request('GET', '/v1/sessions?limit=200');
      assert.ok(!mine.body.some((r: any) => ids.includes(r.session_id)), "another account's list shows none of these");
    });

    it('limit and offset page through all of them', async () => {
      const all = (await list('?limit=200')).body.map((r: any) => r.session_id);
      assert.deepEqual(all, [...ids].reverse());
      const page = (await list('?limit=10&offset=20')).body.map((r: any) => r.session_id);
      assert.deepEqual(page, all.slice(20, 30));
      assert.equal((await list('?limit=1')).body.length, 1);
      assert.deepEqual(
        (await list('?offset=50')).body.map((r: any) => r.session_id),
        all.slice(50),
      );
      assert.deepEqual((await list('?offset=1000')).body, []);
    });

    it('status filter', async () => {
      const ended = (await list('?status=ended')).body;
      assert.deepEqual(new Set(ended.map((r: any) => r.session_id)), stoppedIds);
      for (const r of ended) {
        assert.equal(r.status, 'ended');
        assert.equal(r.end_reason, 'stopped');
      }
      const active = (await list('?status=active&limit=200')).body;
      assert.equal(active.length, 52);
      assert.ok(active.every((r: any) => r.status === 'active'));
    });

    it('agent_id filter, combined with status', async () => {
      const b = (await list(`?agent_id=${agentB}&limit=200`)).body;
      assert.equal(b.length, 11);
      assert.ok(b.every((r: any) => r.agent_id === agentB));
      const bEnded = (await list(`?agent_id=${agentB}&status=ended`)).body;
      assert.deepEqual(
        bEnded.map((r: any) => r.session_id),
        [ids[10]],
      );
      assert.deepEqual((await list('?agent_id=987654321')).body, []);
    });

    for (const [query, loc] of [
      ['?limit=0', ['query', 'limit']],
      ['?limit=201', ['query', 'limit']],
      ['?limit=abc', ['query', 'limit']],
      ['?offset=-1', ['query', 'offset']],
      ['?status=running', ['query', 'status']],
      ['?agent_id=x', ['query', 'agent_id']],
    ] as const) {
      it(`422 for ${query}`, async () => {
        itemAt(await list(query), [...loc]);
      });
    }

    it('limit 200 is accepted', async () => {
      assert.equal((await list('?limit=200')).status, 200);
    });
  });

  describe('POST /v1/sessions/{id}/commands', () => {
    let render: any;
    let conversation: any;
    before(async () => {
      render = await started(t, { agent_id: await makeAgent(t), mode: 'render' });
      conversation = await started(t, { agent_id: await makeAgent(t) });
    });
    const command = (id: string, body: unknown) => t.request('POST', `/v1/sessions/${id}/commands`, { body });

    it('202 with a generated event_id; a given event_id is echoed', async () => {
      const a = await command(render.session_id, { type: 'agent.start_listening' });
      assert.equal(a.status, 202, JSON.stringify(a.body));
      assert.equal(typeof a.body.event_id, 'string');
      assert.ok(a.body.event_id.length > 0);
      const b = await command(render.session_id, { type: 'agent.stop_listening' });
      assert.notEqual(b.body.event_id, a.body.event_id);
      const c = await command(render.session_id, { type: 'stage.camera', camera: 'close', event_id: 'my-event-1' });
      assert.equal(c.status, 202);
      assert.deepEqual(c.body, { event_id: 'my-event-1' });
    });

    it('the command reaches the render socket (stage.camera → stage.updated)', async () => {
      const socket = await renderSocket(render.ws_url);
      try {
        const res = await command(render.session_id, { type: 'stage.camera', camera: 'far', hold: true, event_id: 'cam-far' });
        assert.equal(res.status, 202);
        const updated = await socket.message((m) => m.type === 'stage.updated' && m.stage?.camera === 'far');
        assert.equal(updated.stage.camera, 'far');
      } finally {
        socket.close();
      }
    });

    it('works in conversation mode too, for every HTTP command', async () => {
      const bodies = [
        { type: 'agent.cue', cue: 'smile', intensity: 0.5 },
        { type: 'agent.interrupt' },
        { type: 'agent.start_listening' },
        { type: 'agent.stop_listening' },
        { type: 'stage.camera', camera: 'auto' },
        { type: 'stage.backdrop', backdrop: null },
        { type: 'agent.speak_text', text: 'Hello there', event_id: 'say-1' },
      ];
      for (const body of bodies) {
        const res = await command(conversation.session_id, body);
        assert.equal(res.status, 202, `${body.type}: ${JSON.stringify(res.body)}`);
        assert.equal(typeof res.body.event_id, 'string');
      }
      assert.equal((await getSession(t, conversation.session_id)).status, 'active');
    });

    for (const [label, body] of [
      ['an unknown command type', { type: 'agent.dance' }],
      ['agent.speak (audio) over HTTP', { type: 'agent.speak', audio: Buffer.alloc(480).toString('base64') }],
      ['agent.speak_end over HTTP', { type: 'agent.speak_end' }],
      ['session.configure over HTTP', { type: 'session.configure', sample_rate: 16000 }],
      ['no type', { camera: 'far' }],
      ['a bad camera', { type: 'stage.camera', camera: 'drone' }],
      ['speak_text over 5000 characters', { type: 'agent.speak_text', text: 'a'.repeat(5001) }],
    ] as const) {
      it(`422 for ${label}`, async () => {
        const res = await command(render.session_id, body);
        assert.equal(res.status, 422, JSON.stringify(res.body));
        assert.ok(Array.isArray(res.body.detail), JSON.stringify(res.body));
        assert.equal(res.body.detail[0].loc[0], 'body');
      });
    }

    it('on an ended session: 409', async () => {
      const s = await started(t, { agent_id: await makeAgent(t) });
      assert.equal((await command(s.session_id, { type: 'agent.interrupt' })).status, 202);
      await stopSession(t, s.session_id);
      const res = await command(s.session_id, { type: 'agent.interrupt' });
      assert.equal(res.status, 409, JSON.stringify(res.body));
      assert.equal(typeof res.body.detail?.code, 'string');
      assert.equal(typeof res.body.detail?.message, 'string');
    });
  });

  describe('permission: sessions', () => {
    it('a key without `sessions` gets 403 missing_permission on every /v1/sessions route, GET included', async () => {
      const agentId = await makeAgent(t);
      const s = await started(t, { agent_id: agentId });
      const key = await t.keyFor(t.accountId, ['read', 'setup', 'delete']);
      const routes: Array<[string, string, unknown?]> = [
        ['POST', '/v1/sessions', { agent_id: agentId }],
        ['GET', '/v1/sessions'],
        ['GET', '/v1/sessions?status=active'],
        ['GET', `/v1/sessions/${s.session_id}`],
        ['POST', `/v1/sessions/${s.session_id}/commands`, { type: 'agent.interrupt' }],
        ['POST', `/v1/sessions/${s.session_id}/stop`],
      ];
      for (const [method, path, body] of routes) {
        assertCoded(await t.request(method, path, { key, body }), 403, 'missing_permission');
      }
      assert.equal((await getSession(t, s.session_id)).status, 'active', 'the refused stop did nothing');
    });

    it('a sessions-only key can use every /v1/sessions route but not other routes', async () => {
      const agentId = await makeAgent(t);
      const key = await t.keyFor(t.accountId, ['sessions']);
      const s = await started(t, { agent_id: agentId }, key);
      assert.equal((await t.request('GET', '/v1/sessions', { key })).status, 200);
      assert.equal((await t.request('GET', `/v1/sessions/${s.session_id}`, { key })).status, 200);
      assert.equal((await t.request('POST', `/v1/sessions/${s.session_id}/commands`, { key, body: { type: 'agent.interrupt' } })).status, 202);
      assert.equal((await t.request('POST', `/v1/sessions/${s.session_id}/stop`, { key })).status, 200);
      assertCoded(await t.request('GET', '/v1/agent/list', { key }), 403, 'missing_permission');
    });

    it('no key: 401 invalid_api_key', async () => {
      assertCoded(await t.request('GET', '/v1/sessions', { key: null }), 401, 'invalid_api_key');
      assertCoded(await t.request('POST', '/v1/sessions', { key: null, body: { agent_id: 1 } }), 401, 'invalid_api_key');
    });
  });

  describe('render socket', () => {
    const withToken = (wsUrl: string, token: string) => {
      const url = new URL(wsUrl);
      url.searchParams.set('token', token);
      return url.toString();
    };
    const withoutToken = (wsUrl: string) => {
      const url = new URL(wsUrl);
      url.searchParams.delete('token');
      return url.toString();
    };

    it('ws_url exactly as returned connects: session.state_updated connected', async () => {
      const s = await started(t, { agent_id: await makeAgent(t), mode: 'render' });
      const socket = await renderSocket(s.ws_url);
      const hello = socket.messages[0];
      assert.equal(hello.type, 'session.state_updated');
      assert.equal(hello.state, 'connected');
      socket.close();
    });

    it("a bad token, a missing token, and another session's token close with 4003", async () => {
      const agentId = await makeAgent(t, { concurrency_limit: 2 });
      const s = await started(t, { agent_id: agentId, mode: 'render' });
      const other = await started(t, { agent_id: agentId, mode: 'render' });
      const otherToken = new URL(other.ws_url).searchParams.get('token')!;
      for (const url of [withToken(s.ws_url, 'st_wrong'), withoutToken(s.ws_url), withToken(s.ws_url, otherToken)]) {
        const socket = new Client(url);
        assert.equal(await socket.closeCodeWithin(), 4003, url);
        assert.ok(!socket.messages.some((m) => m.type === 'session.state_updated'), 'nothing is sent before the refusal');
      }
    });

    it('the token works as an Authorization: Bearer header instead of the query; a bad header token is refused', async () => {
      const s = await started(t, { agent_id: await makeAgent(t), mode: 'render' });
      const token = new URL(s.ws_url).searchParams.get('token')!;
      const socket = new Client(withoutToken(s.ws_url), { authorization: `Bearer ${token}` });
      const connected = await socket.message((m) => m.type === 'session.state_updated');
      assert.equal(connected.state, 'connected');
      socket.close();
      const bad = new Client(withoutToken(s.ws_url), { authorization: 'Bearer st_nope' });
      assert.equal(await bad.closeCodeWithin(), 4003);
    });

    it('after the session ends the socket closes 4001 and the token is refused with 4003', async () => {
      const s = await started(t, { agent_id: await makeAgent(t), mode: 'render' });
      const socket = await renderSocket(s.ws_url);
      await stopSession(t, s.session_id);
      assert.equal(await socket.closeCodeWithin(), 4001);
      const again = new Client(s.ws_url);
      assert.equal(await again.closeCodeWithin(), 4003);
      const token = new URL(s.ws_url).searchParams.get('token')!;
      const header = new Client(withoutToken(s.ws_url), { authorization: `Bearer ${token}` });
      assert.equal(await header.closeCodeWithin(), 4003);
    });

    it('sample_rate=12345 closes with 4000; a listed rate connects', async () => {
      const s = await started(t, { agent_id: await makeAgent(t), mode: 'render' });
      const bad = new Client(`${s.ws_url}&sample_rate=12345`);
      assert.equal(await bad.closeCodeWithin(), 4000);
      const good = await renderSocket(`${s.ws_url}&sample_rate=16000`);
      assert.equal(good.messages[0].sample_rate, 16000);
      good.close();
    });

    it('a second connection replaces the first, which closes with 4002; the new one keeps working', async () => {
      const s = await started(t, { agent_id: await makeAgent(t), mode: 'render' });
      const first = await renderSocket(s.ws_url);
      const second = await renderSocket(s.ws_url);
      try {
        assert.equal(await first.closeCodeWithin(), 4002);
        second.ws.send(JSON.stringify({ type: 'stage.get', event_id: 'g1' }));
        await second.message((m) => m.type === 'stage.updated');
        assert.equal(second.closeCode, undefined);
        await stopSession(t, s.session_id);
        assert.equal(await second.closeCodeWithin(), 4001);
      } finally {
        second.close();
      }
    });

    it('a conversation-mode session has no render socket: its id with any token is refused', async () => {
      const s = await started(t, { agent_id: await makeAgent(t) });
      const socket = new Client(`${t.wsUrl}/v1/sessions/${s.session_id}/render?token=st_guess`);
      assert.equal(await socket.closeCodeWithin(), 4003);
    });
  });
});
