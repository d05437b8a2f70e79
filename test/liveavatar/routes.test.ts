/** The LiveAvatar-compatible routes' refusals, envelope and CORS (contract.md), on both engines. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { forEachEngine, startTestApp, type Engine, type TestApp } from '../support/app.js';
import crypto from 'node:crypto';
import net from 'node:net';
import { PlayerClient, sleep, voiced } from '../support/render-client.js';
import { sql } from 'kysely';
import { until } from '../support/until.js';

async function call(app: TestApp, method: string, path: string, init: { headers?: Record<string, string>; body?: unknown } = {}) {
  const response = await fetch(`${app.url}${path}`, {
    method,
    headers: { ...(init.body !== undefined && { 'Content-Type': 'application/json' }), ...init.headers },
    ...(init.body !== undefined && { body: JSON.stringify(init.body) }),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : null };
}

const token = (app: TestApp, body: unknown, key = app.key) => call(app, 'POST', '/v1/sessions/token', { headers: { 'X-API-KEY': key }, body });
const withToken = (t: string, origin?: string) => ({ Authorization: `Bearer ${t}`, 'Content-Type': 'application/json', ...(origin && { Origin: origin }) });

/** LiveAvatar's error envelope, with Presence's detail kept. */
function assertEnvelopeError(answer: { status: number; body: any }, status: number, code: string) {
  assert.equal(answer.status, status, JSON.stringify(answer.body));
  assert.equal(answer.body.code, status);
  assert.equal(answer.body.data, null);
  assert.equal(answer.body.detail.code, code);
  assert.equal(typeof answer.body.message, 'string');
  assert.equal(answer.body.message, answer.body.detail.message);
}

forEachEngine('LiveAvatar-compatible routes', (engine: Engine) => {
  let app: TestApp;
  let agentId: number;
  before(async () => {
    app = await startTestApp(engine, { LIVEAVATAR_TOKEN_SECONDS: '2' });
    agentId = (await app.request('POST', '/v1/agent/create', { body: { name: 'Agent' } })).body.id;
  });
  after(() => app.close());

  test('the token route: key in X-API-KEY or Bearer with `sessions`; LITE only; the agent must be the account’s', async () => {
    assertEnvelopeError(await token(app, { mode: 'LITE', avatar_id: String(agentId) }, 'sk_live_not_a_real_key_000000'), 401, 'invalid_api_key');
    const readOnly = await app.keyFor(app.accountId, ['read']);
    assertEnvelopeError(await token(app, { mode: 'LITE', avatar_id: String(agentId) }, readOnly), 403, 'permission_denied');
    const full = await token(app, { mode: 'FULL', avatar_id: String(agentId) });
    assertEnvelopeError(full, 422, 'mode_not_supported');
    assert.match(full.body.message, /conversation-mode session \(POST \/v1\/sessions\)/);
    assertEnvelopeError(await token(app, { avatar_id: String(agentId) }), 422, 'mode_not_supported');
    assertEnvelopeError(await token(app, { mode: 'LITE', avatar_id: '999999' }), 404, 'agent_not_found');
    assertEnvelopeError(await token(app, { mode: 'LITE', avatar_id: 'Angela-inblackskirt-20220820' }), 404, 'agent_not_found');
    assertEnvelopeError(await token(app, { mode: 'LITE' }), 422, 'invalid_request');
    const other = await app.account('paid');
    assertEnvelopeError(await token(app, { mode: 'LITE', avatar_id: String(agentId) }, other.key), 404, 'agent_not_found');

    const bearer = await call(app, 'POST', '/v1/sessions/token', {
      headers: { Authorization: `Bearer ${app.key}` },
      body: { mode: 'LITE', avatar_id: String(agentId), video_settings: { quality: 'high' } },
    });
    assert.equal(bearer.status, 200);
    assert.equal(bearer.body.code, 1000);
    assert.deepEqual(bearer.body.data.warnings, ['video_settings is not used by Presence']);
    assert.equal(bearer.headers.get('access-control-allow-origin'), null, 'the token route has no CORS');
    // The JWT's payload is what the SDK decodes.
    const payload = JSON.parse(Buffer.from(bearer.body.data.session_token.split('.')[1], 'base64url').toString());
    assert.equal(payload.session_id, bearer.body.data.session_id);
    assert.deepEqual(payload.start_session_data, { mode: 'LITE', avatar_id: String(agentId) });
  });

  test('start: a forged, tampered or expired token is refused; stop before start ends the token', async () => {
    assertEnvelopeError(await call(app, 'POST', '/v1/sessions/start'), 401, 'invalid_session_token');
    assertEnvelopeError(await call(app, 'POST', '/v1/sessions/start', { headers: withToken('abc.def.ghi') }), 401, 'invalid_session_token');
    const { body } = await token(app, { mode: 'LITE', avatar_id: String(agentId) });
    const [header, payload, signature] = body.data.session_token.split('.');
    const forged = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), session_id: '00000000-0000-4000-8000-000000000000' }),
    ).toString('base64url');
    assertEnvelopeError(
      await call(app, 'POST', '/v1/sessions/start', { headers: withToken(`${header}.${forged}.${signature}`) }),
      401,
      'invalid_session_token',
    );
    assertEnvelopeError(await call(app, 'POST', '/v1/sessions/start', { headers: withToken(app.key) }), 401, 'invalid_session_token');

    // Stopped before it started: the token can no longer start.
    assert.equal((await call(app, 'POST', '/v1/sessions/stop', { headers: withToken(body.data.session_token) })).status, 200);
    assertEnvelopeError(await call(app, 'POST', '/v1/sessions/start', { headers: withToken(body.data.session_token) }), 409, 'session_ended');
    assertEnvelopeError(await call(app, 'POST', '/v1/sessions/keep-alive', { headers: withToken(body.data.session_token) }), 409, 'session_not_started');

    const late = await token(app, { mode: 'LITE', avatar_id: String(agentId) });
    await sleep(2200);
    assertEnvelopeError(await call(app, 'POST', '/v1/sessions/start', { headers: withToken(late.body.data.session_token) }), 401, 'token_expired');
  });

  test('start once; keep-alive and stop with the token or an API key; DELETE /v1/sessions; the session is a render session like any', async () => {
    const { body } = await token(app, { mode: 'LITE', avatar_id: String(agentId) });
    const t = body.data.session_token;
    const started = await call(app, 'POST', '/v1/sessions/start', { headers: withToken(t) });
    assert.equal(started.status, 200);
    assert.equal(started.body.code, 1000);
    assert.match(started.body.data.ws_url, /^ws:\/\/127\.0\.0\.1:\d+\/v1\/sessions\/[0-9a-f-]{36}\/render\?token=st_/);
    assert.equal(started.body.data.player_url, body.data.player_url);
    assert.ok(!('livekit_url' in started.body.data) && !('livekit_client_token' in started.body.data));
    assertEnvelopeError(await call(app, 'POST', '/v1/sessions/start', { headers: withToken(t) }), 409, 'session_already_started');

    const sessionId = body.data.session_id;
    const listed = (await app.request('GET', '/v1/sessions?status=active')).body as any[];
    assert.ok(listed.some((s) => s.session_id === sessionId && s.mode === 'render'));

    assert.deepEqual((await call(app, 'POST', '/v1/sessions/keep-alive', { headers: withToken(t) })).body, { code: 1000, message: 'success', data: {} });
    assert.equal(
      (await call(app, 'POST', '/v1/sessions/keep-alive', { headers: { Authorization: `Bearer ${app.key}` }, body: { session_id: sessionId } })).status,
      200,
    );
    assertEnvelopeError(await call(app, 'POST', '/v1/sessions/keep-alive', { headers: { Authorization: `Bearer ${app.key}` } }), 422, 'session_id_required');
    const stranger = await app.account('paid');
    assertEnvelopeError(
      await call(app, 'POST', '/v1/sessions/stop', { headers: { 'X-API-KEY': stranger.key }, body: { session_id: sessionId } }),
      404,
      'session_not_found',
    );
    assert.equal((await app.request('GET', `/v1/sessions/${sessionId}`)).body.status, 'active', 'another account cannot stop it');

    const deleted = await call(app, 'DELETE', '/v1/sessions', { headers: { Authorization: `Bearer ${t}` } });
    assert.deepEqual(deleted.body, { code: 1000, message: 'success', data: {} });
    const record = (await app.request('GET', `/v1/sessions/${sessionId}`)).body;
    assert.equal(record.status, 'ended');
    assert.equal(record.end_reason, 'stopped');
    assert.equal((await call(app, 'DELETE', '/v1/sessions', { headers: { Authorization: `Bearer ${t}` } })).status, 200, 'idempotent');
    assertEnvelopeError(await call(app, 'POST', '/v1/sessions/keep-alive', { headers: withToken(t) }), 409, 'session_ended');
  });

  test('a page that reads while its token is claimed but its session not yet written keeps waiting, then goes live', async () => {
    const { body } = await token(app, { mode: 'LITE', avatar_id: String(agentId) });
    const { session_id: sessionId, session_token: t, player_url: playerUrl } = body.data;
    // The claim commits before the session's row: hold the token in that state while the page polls.
    await sql`UPDATE liveavatar_tokens SET started_at = now() WHERE session_id = ${sessionId}`.execute(app.database.db);
    // PlayerClient.open waits up to 5 s for the hello: a page refused (4004) in the gap never gets one.
    const opening = PlayerClient.open(playerUrl);
    await sleep(1500); // three polls of the waiting page
    await sql`UPDATE liveavatar_tokens SET started_at = NULL WHERE session_id = ${sessionId}`.execute(app.database.db);
    assert.equal((await call(app, 'POST', '/v1/sessions/start', { headers: withToken(t) })).status, 200);
    const page = await opening;
    assert.equal(page.closeCode, undefined);
    page.close();
    assert.equal((await call(app, 'POST', '/v1/sessions/stop', { headers: withToken(t) })).status, 200);
  });

  test('browser routes answer CORS preflights and requests with the origin echoed and credentials', async () => {
    for (const path of ['/v1/sessions/start', '/v1/sessions/keep-alive', '/v1/sessions/stop', '/v1/sessions']) {
      const preflight = await fetch(`${app.url}${path}`, {
        method: 'OPTIONS',
        headers: { Origin: 'https://shop.example', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'authorization, content-type' },
      });
      assert.equal(preflight.status, 204, path);
      assert.equal(preflight.headers.get('access-control-allow-origin'), 'https://shop.example');
      assert.equal(preflight.headers.get('access-control-allow-credentials'), 'true');
      assert.match(preflight.headers.get('access-control-allow-methods') ?? '', /POST/);
      assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /authorization/);
      assert.equal(preflight.headers.get('access-control-max-age'), '600');
      assert.match(preflight.headers.get('vary') ?? '', /Origin/);
    }
    // An error is readable by the page too.
    const refused = await call(app, 'POST', '/v1/sessions/start', { headers: withToken('not-a-token', 'https://shop.example') });
    assert.equal(refused.status, 401);
    assert.equal(refused.headers.get('access-control-allow-origin'), 'https://shop.example');
    assert.equal(refused.headers.get('access-control-allow-credentials'), 'true');
    assert.equal(refused.headers.get('set-cookie'), null);
  });

  test('a whole utterance sent with the upgrade itself, before the socket is authenticated, is played, not dropped', async () => {
    const { body } = await token(app, { mode: 'LITE', avatar_id: String(agentId) });
    const started = (await call(app, 'POST', '/v1/sessions/start', { headers: withToken(body.data.session_token) })).body.data;
    const url = new URL(started.ws_url);
    const piece = Buffer.from(voiced(0.02).buffer).toString('base64');
    const messages = [
      ...Array.from({ length: 300 }, () => ({ type: 'agent.speak', event_id: 'evt_early', audio: piece })),
      { type: 'agent.speak_end', event_id: 'evt_early' },
    ];
    // One TCP write carries the upgrade request and every frame: they all reach the server before
    // its token lookup can answer (more than the 64 the socket used to hold).
    const socket = net.connect(Number(url.port), url.hostname);
    await new Promise((resolve) => socket.once('connect', resolve));
    const upgrade = `GET ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${crypto.randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`;
    socket.write(Buffer.concat([Buffer.from(upgrade), ...messages.map((m) => maskedTextFrame(JSON.stringify(m)))]));
    let received = '';
    socket.on('data', (chunk) => (received += chunk.toString('latin1')));
    await until(() => received.includes('agent.speak_ended'), 20_000, 'speak_ended');
    assert.match(received, /^HTTP\/1\.1 101/);
    assert.equal(received.split('"agent.speak_started"').length - 1, 1, 'one utterance');
    assert.doesNotMatch(received, /"type":"error"/);
    const ended = JSON.parse(
      received.slice(received.lastIndexOf('{', received.indexOf('agent.speak_ended')), received.indexOf('}', received.indexOf('agent.speak_ended')) + 1),
    );
    assert.equal(ended.source_event_id, 'evt_early');
    assert.ok(Math.abs(ended.duration_seconds - 6) < 0.01, `all 300 pieces (6 s) played: ${ended.duration_seconds} s`);
    socket.destroy();
  });
});

/** A client's masked WebSocket text frame (RFC 6455 §5.2), for frames sent with the upgrade. */
function maskedTextFrame(text: string): Buffer {
  const payload = Buffer.from(text);
  const length = payload.length;
  const header = length < 126 ? Buffer.from([0x81, 0x80 | length]) : Buffer.from([0x81, 0x80 | 126, length >> 8, length & 0xff]);
  if (length > 0xffff) throw new Error('frame too long for this helper');
  const mask = crypto.randomBytes(4);
  const masked = Buffer.from(payload.map((byte, i) => byte ^ mask[i % 4]!));
  return Buffer.concat([header, mask, masked]);
}
