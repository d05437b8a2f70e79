/**
 * @presence/sdk against a real server: the typed client creates the agent and the session, and
 * RenderSession speaks through the real render socket. Audio must reach the player page
 * byte-exact, queue_full must make speak() wait (never drop), and a refused or closed socket must
 * reject the waiting calls instead of hanging.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import WebSocket from 'ws';
import { startTestApp, type TestApp } from '../support/app.js';
import { PlayerClient, concat } from '../support/render-client.js';
import { until } from '../support/until.js';
import {
  createPresenceClient,
  RenderSession,
  PresenceApiError,
  RenderSocketClosedError,
  RenderConnectTimeoutError,
  SpeakInterruptedError,
  CloseCodes,
  EVENT_TYPES,
  COMMAND_TYPES,
  type PresenceClient,
  type RenderEventOf,
  type RenderEvent,
} from '../../sdk/src/index.js';
import * as server from '../../src/realtime/protocol.js';
import { RenderEvents } from '../../src/reference/render-protocol.js';

let t: TestApp;
let presence: PresenceClient;
let agentId: number;

/** Noise, so a misplaced or dropped sample shows. */
function noise(seconds: number, seed = 1): Int16Array {
  let s = seed;
  return Int16Array.from({ length: Math.round(seconds * 24000) }, () => ((s = (s * 1103515245 + 12345) >>> 0) >>> 16) - 32768);
}

async function startRender() {
  const session = await presence.post('/v1/sessions', { body: { agent_id: agentId, mode: 'render' } });
  assert.ok(session.ws_url, 'a render session has a ws_url');
  return session;
}

describe('@presence/sdk RenderSession', () => {
  before(async () => {
    t = await startTestApp('pglite');
    presence = createPresenceClient({ baseUrl: t.url, apiKey: t.key });
    const agent = await presence.post('/v1/agent/create', { body: { name: 'SDK', concurrency_limit: 50, studio: { cameras: ['far', 'mid'] } } });
    agentId = agent.id;
  });
  after(async () => {
    await t.close();
  });

  it('speaks PCM that reaches the player page byte-exact, with typed events naming the utterance', async () => {
    const started = await startRender();
    const player = await PlayerClient.open(started.player_url);
    const session = await RenderSession.connect(started.ws_url!, { WebSocket });
    const seen: RenderEvent[] = [];
    session.on('event', (event) => seen.push(event));
    const audio = noise(1.3);
    const bytes = new Uint8Array(audio.buffer);
    // As a stream of odd-sized chunks: the SDK re-pieces them into whole samples.
    const chunks = [bytes.subarray(0, 1001), bytes.subarray(1001, 40_001), bytes.subarray(40_001)];
    const utterance = await session.speak(
      (async function* () {
        yield* chunks;
      })(),
      { eventId: 'hello-1', text: 'Hello there' },
    );
    assert.equal(utterance.id, 'hello-1');
    const ended: RenderEventOf<'agent.speak_ended'> = await session.waitFor('agent.speak_ended');
    assert.equal(await utterance.played(), 'ended');
    assert.equal(ended.source_event_id, 'hello-1');
    assert.equal(ended.duration_seconds, 1.3);
    await until(() => player.frames.reduce((n, f) => n + f.pcm.length, 0) >= audio.length, 5000, 'all audio reached the page');
    assert.deepEqual(Array.from(concat(...player.frames.map((f) => f.pcm))), Array.from(audio), 'byte-exact at the page');
    const types = seen.map((e) => e.type).filter((type) => type.startsWith('agent.'));
    assert.deepEqual(types, ['agent.state_updated', 'agent.speak_started', 'agent.speak_ended', 'agent.state_updated']);
    // The SDK's own acknowledgements (stage.get) are not passed on as events.
    assert.ok(!seen.some((e) => e.type === 'stage.updated'));
    session.close();
    player.close();
  });

  it('continues an utterance across speak() calls with end: false, as one utterance at the page', async () => {
    const started = await startRender();
    const player = await PlayerClient.open(started.player_url);
    const session = await RenderSession.connect(started.ws_url!, { WebSocket });
    const first = noise(0.3, 5);
    const second = noise(0.4, 9);
    const opened = await session.speak(first, { eventId: 'two-parts', end: false });
    const continued = await session.speak(second);
    assert.equal(continued.id, 'two-parts');
    assert.equal(await opened.played(), 'ended');
    const ended = await continued.played();
    assert.equal(ended, 'ended');
    await until(() => player.frames.reduce((n, f) => n + f.pcm.length, 0) >= first.length + second.length, 5000, 'all audio reached the page');
    assert.deepEqual(Array.from(concat(...player.frames.map((f) => f.pcm))), Array.from(concat(first, second)));
    session.close();
    player.close();
  });

  it('speaks text, sets cue, camera, backdrop and listening, and rejects a stage command the session cannot do', async () => {
    const started = await startRender();
    const session = await RenderSession.connect(started.ws_url!, { WebSocket });
    // Waits are set up before the command: its events may arrive before the command resolves.
    const startedEvent = session.waitFor('agent.speak_started', (e) => e.source_event_id === 'text-1', 20_000);
    const utterance = await session.speakText('Hello from the SDK.', { eventId: 'text-1' });
    const speakStarted = await startedEvent;
    assert.equal(typeof speakStarted.at, 'number');
    assert.equal(await utterance.played(), 'ended');
    await session.cue('smile', { intensity: 0.5 });
    await session.camera('auto');
    const listening = session.waitFor('agent.state_updated', (e) => e.new_state === 'listening');
    await session.startListening();
    await listening;
    await session.stopListening();
    const stage = await session.getStage();
    assert.equal(stage.camera_mode, 'auto');
    await assert.rejects(session.backdrop('no-such-backdrop'), (error: any) => error.name === 'RenderCommandError' && error.type === 'stage_error');
    await assert.rejects(session.camera('close'), (error: any) => error.type === 'stage_error', 'close is not among the session cameras');
    session.close();
  });

  it('interrupts: the playing utterance resolves as interrupted and speak calls not yet sent reject', async () => {
    const started = await startRender();
    const session = await RenderSession.connect(started.ws_url!, { WebSocket });
    const playing = session.waitFor('agent.speak_started');
    const long = await session.speak(noise(4));
    await playing;
    // A speak whose source never ends: it is still sending when interrupt() comes.
    let release!: () => void;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    const pending = session.speak(
      (async function* () {
        yield new Uint8Array(4800);
        await blocked;
        yield new Uint8Array(4800);
      })(),
      { eventId: 'cut-short' },
    );
    const cleared = await session.interrupt();
    release();
    await assert.rejects(pending, SpeakInterruptedError);
    assert.equal(await long.played(), 'interrupted');
    assert.ok(Array.isArray(cleared.dropped_utterances));
    // The session goes on: the next speak plays.
    const next = await session.speak(noise(0.2));
    assert.equal(await next.played(), 'ended');
    session.close();
  });

  it('waits out queue_full: speak() resolves once its audio was accepted, and nothing is dropped', async () => {
    const started = await startRender();
    const session = await RenderSession.connect(started.ws_url!, { WebSocket, pieceSeconds: 4, queueRetryMs: 250 });
    const refusals: string[] = [];
    session.on('backpressure', (b) => refusals.push(b.message));
    // Four-second pieces until the server's 120 s bound refuses one; then one more, then the end.
    const piece = new Uint8Array(4 * 24000 * 2);
    let sent = 0;
    const source = (async function* () {
      let afterRefusal = 0;
      while (afterRefusal < 1) {
        if (refusals.length) afterRefusal++;
        sent++;
        yield piece;
      }
    })();
    const utterance = await session.speak(source, { eventId: 'fills-the-queue' });
    assert.ok(refusals.length >= 1, 'the server refused audio with queue_full at least once');
    assert.match(refusals[0], /120 s/);
    assert.ok(sent * 4 > server.MAX_QUEUED_SECONDS, `sent ${sent * 4} s`);
    // Everything sent was accepted: the server received all of it.
    const interruptedEvent = session.waitFor('agent.speak_interrupted');
    await session.interrupt();
    const interrupted = await interruptedEvent;
    assert.equal(interrupted.source_event_id, utterance.id);
    assert.equal(interrupted.received_seconds, sent * 4);
    assert.equal(await utterance.played(), 'interrupted');
    session.close();
  });

  it('rejects a refused socket (bad token, 4003) and a silent one (connect timeout) instead of hanging', async () => {
    const started = await startRender();
    const bad = started.ws_url!.replace(/token=[^&]+/, 'token=not-the-token');
    await assert.rejects(
      RenderSession.connect(bad, { WebSocket }),
      (error: unknown) => error instanceof RenderSocketClosedError && error.code === CloseCodes.BAD_TOKEN,
    );
    const silent = net.createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as net.AddressInfo).port;
    try {
      await assert.rejects(
        RenderSession.connect(`ws://127.0.0.1:${port}/v1/sessions/x/render?token=y`, { WebSocket, connectTimeoutMs: 500 }),
        RenderConnectTimeoutError,
      );
    } finally {
      silent.close();
    }
  });

  it('rejects waiting and later calls when the session ends (4001), and does not reconnect', async () => {
    const started = await startRender();
    const session = await RenderSession.connect(started.ws_url!, { WebSocket });
    const closes: number[] = [];
    session.on('close', (c) => closes.push(c.code));
    let reconnecting = false;
    session.on('reconnecting', () => (reconnecting = true));
    const never = new Promise<void>(() => {});
    const playing = session.waitFor('agent.speak_started');
    // A source that sends one piece and then never ends.
    const pending = session.speak(
      (async function* () {
        yield new Uint8Array(24000);
        await never;
      })(),
    );
    await playing;
    await presence.post('/v1/sessions/{session_id}/stop', { params: { path: { session_id: started.session_id } } });
    await until(() => closes.length > 0, 5000, 'the session closed');
    assert.deepEqual(closes, [CloseCodes.SESSION_ENDED]);
    assert.equal(reconnecting, false);
    await assert.rejects(session.speakText('too late'), (error: unknown) => error instanceof RenderSocketClosedError && error.code === 4001);
    await assert.rejects(session.cue('smile'), RenderSocketClosedError);
    // The call reading that source is not left hanging: it rejects with the close.
    await assert.rejects(pending, (error: unknown) => error instanceof RenderSocketClosedError && error.code === 4001);
  });

  it('throws typed errors: 404 with detail.code, and 422 with the validation list', async () => {
    await assert.rejects(presence.post('/v1/sessions', { body: { agent_id: 999_999, mode: 'render' } }), (error: unknown) => {
      assert.ok(error instanceof PresenceApiError);
      assert.equal(error.status, 404);
      assert.equal(error.detail.code, 'agent_not_found');
      assert.match(error.detail.message, /\S/);
      return true;
    });
    // An unknown field (the typed body forbids it; a JavaScript caller may still send it).
    await assert.rejects(presence.post('/v1/sessions', { body: { agent_id: agentId, mode: 'render', colour: 'red' } as never }), (error: unknown) => {
      assert.ok(error instanceof PresenceApiError);
      assert.equal(error.status, 422);
      assert.equal(error.detail.code, 'validation_error');
      assert.ok(error.errors.length >= 1);
      assert.ok(
        error.errors.some((issue) => issue.loc.includes('body')),
        JSON.stringify(error.errors),
      );
      return true;
    });
  });

  it('keeps its protocol constants and message types equal to the server', () => {
    assert.deepEqual(CloseCodes, {
      BAD_SAMPLE_RATE: server.CLOSE_BAD_SAMPLE_RATE,
      SESSION_ENDED: server.CLOSE_SESSION_ENDED,
      REPLACED: server.CLOSE_REPLACED,
      BAD_TOKEN: server.CLOSE_BAD_TOKEN,
      RATE_LIMITED: server.CLOSE_RATE_LIMITED,
      INTERNAL_ERROR: server.CLOSE_INTERNAL_ERROR,
      SERVER_RESTART: server.CLOSE_SERVER_RESTART,
    });
    assert.deepEqual([...EVENT_TYPES].sort(), RenderEvents.map((schema) => (schema.shape.type as { value: string }).value).sort());
    assert.deepEqual([...COMMAND_TYPES].sort(), server.RenderCommand.options.map((schema) => schema.shape.type.value).sort());
  });
});
