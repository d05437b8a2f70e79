/**
 * The LiveAvatar-compatible routes, driven by HeyGen's real web SDK (@heygen/liveavatar-web-sdk)
 * in Node: `ws` as its WebSocket, a one-method RTCPeerConnection stub for livekit-client's Room.
 * "Their server" mints the token with X-API-KEY; the SDK starts, speaks, interrupts, keeps alive and
 * stops; each step is checked through Presence's own API and the player page's socket.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import WebSocket from 'ws';
import { forEachEngine, startTestApp, type Engine, type TestApp } from '../support/app.js';
import { PlayerClient, sleep, voiced } from '../support/render-client.js';
import { until } from '../support/until.js';

/** Every message the SDK's socket received, in order: the SDK itself drops most of them. */
const received: Array<Record<string, any>> = [];
class RecordingWebSocket extends WebSocket {
  constructor(url: string) {
    super(url);
    this.on('message', (data, isBinary) => {
      if (!isBinary) received.push(JSON.parse(String(data)));
    });
  }
}
Object.assign(globalThis, {
  WebSocket: RecordingWebSocket,
  RTCPeerConnection: class {
    close() {}
  },
});
// Imported after the globals exist: livekit-client reads them when the SDK's Room is made.
const { LiveAvatarSession, AgentEventsEnum } = await import('@heygen/liveavatar-web-sdk');

function base64Pcm(seconds: number): string {
  return Buffer.from(voiced(seconds).buffer).toString('base64');
}

async function mint(app: TestApp, agentId: number | string, key = app.key, extra: Record<string, unknown> = {}) {
  const answer = await fetch(`${app.url}/v1/sessions/token`, {
    method: 'POST',
    headers: { 'X-API-KEY': key, 'Content-Type': 'application/json' },
    body: JSON.stringify({ mode: 'LITE', avatar_id: String(agentId), is_sandbox: false, ...extra }),
  });
  return { status: answer.status, body: (await answer.json()) as any };
}

forEachEngine('LiveAvatar web SDK against Presence', (engine: Engine) => {
  let app: TestApp;
  let agentId: number;
  before(async () => {
    app = await startTestApp(engine, { LIVEAVATAR_IDLE_SECONDS: '3' });
    agentId = (await app.request('POST', '/v1/agent/create', { body: { name: 'LiveAvatar agent' } })).body.id;
  });
  after(() => app.close());

  test('their server mints a token; the unchanged SDK starts, speaks, interrupts, keeps alive and stops', async () => {
    const minted = await mint(app, agentId);
    assert.equal(minted.status, 200);
    assert.equal(minted.body.code, 1000);
    const { session_id: sessionId, session_token: token, player_url: playerUrl, warnings } = minted.body.data;
    assert.deepEqual(warnings, ['is_sandbox is not used by Presence']);

    const session = new LiveAvatarSession(token, { apiUrl: app.url });
    assert.equal(session.mode, 'LITE', 'the SDK reads the mode from the JWT');
    const spoken: Array<{ type: string; id: string }> = [];
    session.on(AgentEventsEnum.AVATAR_SPEAK_STARTED, (e: any) => spoken.push({ type: 'started', id: e.event_id }));
    session.on(AgentEventsEnum.AVATAR_SPEAK_ENDED, (e: any) => spoken.push({ type: 'ended', id: e.event_id }));

    // The page opened before the session starts waits for it, then goes live.
    const pageOpening = PlayerClient.open(playerUrl);
    received.length = 0;
    await session.start();
    assert.equal(session.sessionId, sessionId);
    const page = await pageOpening;

    const record = (await app.request('GET', `/v1/sessions/${sessionId}`)).body;
    assert.equal(record.status, 'active');
    assert.equal(record.mode, 'render');
    assert.equal(record.agent_id, agentId);
    assert.equal(record.player_url, playerUrl);

    // repeatAudio sends every piece the moment it is called: nothing may be dropped.
    session.repeatAudio(base64Pcm(1.2));
    await until(() => spoken.some((s) => s.type === 'ended'), 10_000, 'speak_ended after the utterance');
    assert.deepEqual(
      spoken.map((s) => s.type),
      ['started', 'ended'],
    );
    const heardSeconds = page.frames.reduce((sum, f) => sum + f.pcm.length, 0) / 24000;
    assert.ok(heardSeconds > 1.1, `the page received the whole utterance (${heardSeconds.toFixed(2)} s)`);

    // An interrupt cuts a long utterance: interrupted and cleared, and no speak_ended for it.
    spoken.length = 0;
    session.repeatAudio(base64Pcm(6));
    await until(() => spoken.some((s) => s.type === 'started'), 10_000, 'speak_started');
    session.interrupt();
    await until(() => received.some((m) => m.type === 'agent.speak_interrupted'), 5000, 'speak_interrupted');
    assert.ok(received.some((m) => m.type === 'agent.audio_buffer_cleared'));
    await sleep(300);
    assert.ok(!spoken.some((s) => s.type === 'ended'), 'no speak_ended for the cut utterance');

    // Keep-alive holds the session past the idle time (3 s here); then stop ends it.
    for (let i = 0; i < 3; i++) {
      await session.keepAlive();
      await sleep(1500);
    }
    assert.equal((await app.request('GET', `/v1/sessions/${sessionId}`)).body.status, 'active', 'kept alive past LIVEAVATAR_IDLE_SECONDS');
    await session.stop();
    await until(async () => (await app.request('GET', `/v1/sessions/${sessionId}`)).body.status === 'ended', 5000, 'ended by stop');
    assert.equal((await app.request('GET', `/v1/sessions/${sessionId}`)).body.end_reason, 'stopped');
    await until(() => page.closeCode !== undefined, 5000, 'the page is told');

    // Stop is idempotent; a second start is refused in the envelope.
    const again = await fetch(`${app.url}/v1/sessions/stop`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    });
    assert.equal(again.status, 200);
    assert.deepEqual(await again.json(), { code: 1000, message: 'success', data: {} });
    const restart = await fetch(`${app.url}/v1/sessions/start`, { method: 'POST', headers: { Authorization: `Bearer ${token}` } });
    assert.equal(restart.status, 409);
    const body = (await restart.json()) as any;
    assert.equal(body.code, 409);
    assert.equal(body.detail.code, 'session_ended');
    assert.equal(body.data, null);
  });

  test('a session with no command or keep-alive for LIVEAVATAR_IDLE_SECONDS ends idle_timeout', async () => {
    const { body } = await mint(app, agentId);
    const session = new LiveAvatarSession(body.data.session_token, { apiUrl: app.url });
    await session.start();
    session.repeatAudio(base64Pcm(0.5));
    await until(async () => (await app.request('GET', `/v1/sessions/${body.data.session_id}`)).body.status === 'ended', 15_000, 'idle end');
    assert.equal((await app.request('GET', `/v1/sessions/${body.data.session_id}`)).body.end_reason, 'idle_timeout');
  });

  test('avatar_id finds the agent by its liveavatar_avatar_id; the SDK reads the start answer', async () => {
    const uuid = '4c1b7a52-9a4e-4f0e-9a0f-2b8a9f4f6c11';
    const patched = await app.request('PATCH', `/v1/agent/${agentId}`, { body: { liveavatar_avatar_id: uuid } });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.liveavatar_avatar_id, uuid);
    const other = (await app.request('POST', '/v1/agent/create', { body: { name: 'Second' } })).body.id;
    const clash = await app.request('PATCH', `/v1/agent/${other}`, { body: { liveavatar_avatar_id: uuid } });
    assert.equal(clash.status, 409);
    assert.equal(clash.body.detail.code, 'liveavatar_avatar_id_taken');

    const { body } = await mint(app, uuid.toUpperCase(), app.key, { max_session_duration: 120 });
    const session = new LiveAvatarSession(body.data.session_token, { apiUrl: app.url });
    await session.start();
    assert.equal(session.maxSessionDuration, 120);
    const record = (await app.request('GET', `/v1/sessions/${body.data.session_id}`)).body;
    assert.equal(record.agent_id, agentId);
    assert.equal(record.max_session_seconds, 120);
    await session.stop();
    await until(async () => (await app.request('GET', `/v1/sessions/${body.data.session_id}`)).body.status === 'ended', 5000, 'stopped');
  });
});
