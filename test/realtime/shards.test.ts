/**
 * Real-time shards (REALTIME_SHARDS, src/realtime/shards), end to end through a real server with
 * two shard processes: render-mode sessions' sockets are authenticated here and handed to the
 * shard their id hashes to, which plays them; speak_text in a shard is voiced by this process's
 * speaker; HTTP commands and stops reach the shard; what is not a live render session (bad tokens,
 * unknown links, conversation mode, ended sessions) stays in this process; /metrics adds the
 * shards' figures; a killed shard is replaced and its sessions reconnect to it; closing the app
 * stops the shards. A shard is a separate process, so each of these can break on its own while
 * the same tests without shards (render-protocol, speak-text) still pass.
 *
 * One app for the whole file (shards take a few seconds to start); the last test closes it.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { startTestApp, type TestApp } from '../support/app.js';
import { RenderClient, PlayerClient, voiced, pieces } from '../support/render-client.js';
import { until } from '../support/until.js';
import { CLOSE_BAD_TOKEN, CLOSE_SERVER_RESTART, CLOSE_SESSION_ENDED } from '../../src/realtime/protocol.js';
import type { SpeakerFactory } from '../../src/realtime/service.js';

const SHARDS = 2;
const RATE = 24000;

/** What the test speaker was asked to voice, and whether it was told to stop. */
interface SpeakCall {
  text: string;
  voiceId: string;
  sessionId?: string;
  pid: number;
  pieces: number;
  aborted: boolean;
}
const calls: SpeakCall[] = [];

/** The audio the test speaker gives for one word: 0.1 s of voiced sound, so the mouth moves. */
const WORD = voiced(0.1, RATE);

/**
 * A stand-in for the speech layer: 0.1 s of audio per word, paced (one word every 30 ms) so that a
 * long text is still being voiced when an interrupt comes, as a real engine's would be. It runs in
 * whatever process calls it, so `pid` says which one voiced the text.
 */
const speakerFor: SpeakerFactory = (voice) =>
  async function* ({ text, signal }) {
    assert.equal(typeof text, 'string', 'speak_text voices a whole text');
    const call: SpeakCall = { text: text as string, voiceId: voice.voiceId, sessionId: voice.sessionId, pid: process.pid, pieces: 0, aborted: false };
    calls.push(call);
    signal.addEventListener('abort', () => (call.aborted = true), { once: true });
    for (const word of (text as string).split(/\s+/)) {
      if (signal.aborted) return;
      call.pieces++;
      yield { pcm: WORD, text: word };
      await new Promise((resolve) => setTimeout(resolve, 30));
    }
  };

let t: TestApp;
let agent: { id: number; avatar_id: string; voice_id: string };
/** Set once the app started closing (the last test), so `after` does not close it twice. */
let closing: Promise<void> | undefined;

async function renderSession(): Promise<any> {
  const started = await t.request('POST', '/v1/sessions', { body: { agent_id: agent.id, mode: 'render' } });
  assert.equal(started.status, 201, JSON.stringify(started.body));
  return started.body;
}

/** A render session with its render socket and its page connected. */
async function connected(session?: any): Promise<{ session: any; client: RenderClient; player: PlayerClient }> {
  session ??= await renderSession();
  const client = await RenderClient.open(session.ws_url);
  assert.equal(client.closeCode, undefined, `the render socket was closed with ${client.closeCode} ${client.closeReason}`);
  const player = await PlayerClient.open(session.player_url);
  return { session, client, player };
}

/** Streams `seconds` of audio as one utterance and waits for it to end; returns what was sent. */
async function play(client: RenderClient, seconds: number, eventId: string): Promise<Int16Array> {
  const audio = voiced(seconds, RATE);
  const ended = client.of('agent.speak_ended').length;
  for (const piece of pieces(audio, 0.05)) client.speak(piece, { event_id: eventId });
  client.send({ type: 'agent.speak_end' });
  await client.waitForType('agent.speak_ended', ended + 1);
  return audio;
}

/** Every sample the page received, in order. */
function received(player: PlayerClient): Int16Array {
  const out = new Int16Array(player.frames.reduce((n, f) => n + f.pcm.length, 0));
  let at = 0;
  for (const f of player.frames) {
    out.set(f.pcm, at);
    at += f.pcm.length;
  }
  return out;
}

/** Waits until the page has every sample of `audio` (its socket is separate from the render socket's). */
async function heard(player: PlayerClient, samples: number): Promise<void> {
  await until(() => received(player).length >= samples, 5000, `${samples} samples at the page (has ${received(player).length})`);
}

const alive = (pid: number | undefined) => {
  if (pid === undefined) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function metric(name: string): Promise<string[]> {
  const res = await fetch(`${t.url}/metrics`);
  assert.equal(res.status, 200);
  return (await res.text()).split('\n').filter((line) => line.startsWith(name));
}

async function metricValue(name: string): Promise<number> {
  const [line] = await metric(`${name} `);
  assert.ok(line, `/metrics has ${name}`);
  return Number(line.split(' ')[1]);
}

describe(`real-time shards (REALTIME_SHARDS=${SHARDS})`, () => {
  before(async () => {
    t = await startTestApp('pglite', { REALTIME_SHARDS: String(SHARDS) }, { speakerFor });
    // A face other than the default one: the page's hello must carry this session's face.
    const created = await t.request('POST', '/v1/agent/create', {
      body: { name: 'Sharded', avatar_id: 'face03', concurrency_limit: 100, studio: { cameras: ['far', 'mid'] } },
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    agent = created.body;
  });
  after(async () => {
    if (!closing) await t?.close();
  });

  it(`starts ${SHARDS} shard processes`, () => {
    const pids = t.context.shards!.pids();
    assert.equal(pids.length, SHARDS);
    assert.equal(new Set(pids).size, SHARDS);
    assert.ok(pids.every((pid) => pid !== process.pid && alive(pid)));
  });

  it('plays render sessions spread over both shards: connected, audio to the page, speak events, the face in hello', async () => {
    // Sessions until both shards carry at least one (the shard is a hash of the random id).
    const sessions: any[] = [];
    while (sessions.length < 3 || new Set(sessions.map((s) => t.context.shards!.shardOf(s.session_id))).size < SHARDS) {
      assert.ok(sessions.length < 24, 'session ids land on every shard');
      sessions.push(await renderSession());
    }
    const face = JSON.parse(JSON.stringify(t.context.studio.face(agent.avatar_id, t.accountId)));
    assert.equal(face.avatar_id, 'face03');
    const open = await Promise.all(sessions.map((s) => connected(s)));
    for (const { session, client, player } of open) {
      const state = client.of('session.state_updated')[0].event;
      assert.deepEqual([state.state, state.session_id, state.sample_rate], ['connected', session.session_id, RATE]);
      const hello = player.of('hello')[0];
      assert.equal(hello.session.session_id, session.session_id);
      assert.equal(hello.session.mode, 'render');
      assert.deepEqual(hello.face, face, "the page is shown the session's face");
      assert.deepEqual(hello.studio.cameras, ['far', 'mid']);
    }
    // All at once: each shard plays several sessions on its clock.
    const sent = await Promise.all(open.map(({ session, client }) => play(client, 0.4, `utt-${session.session_id}`)));
    for (const [i, { session, client, player }] of open.entries()) {
      const id = `utt-${session.session_id}`;
      assert.deepEqual(
        client.events.map((e) => e.event.type).filter((type) => type.startsWith('agent.speak')),
        ['agent.speak_started', 'agent.speak_ended'],
      );
      assert.equal(client.of('agent.speak_started')[0].event.source_event_id, id);
      assert.equal(client.of('agent.speak_ended')[0].event.duration_seconds, 0.4);
      await heard(player, sent[i].length);
      assert.deepEqual(Array.from(received(player)), Array.from(sent[i]), 'the page gets the audio byte for byte, in order');
      assert.ok(
        player.of('track').some((track: any) => track.utterance === id && track.mouth.values.some((v: number) => v > 0.2)),
        'lip-sync frames come with it',
      );
      // The live side is the shard's: this process never opened the session.
      assert.equal(t.context.realtime.get(session.session_id), undefined);
      client.close();
      player.close();
    }
  });

  it("voices speak_text with this process's speaker and plays it at the page", async () => {
    const { session, client, player } = await connected();
    const text = 'Hello from the main process today';
    client.send({ type: 'agent.speak_text', event_id: 'said', text });
    const ended = await client.waitForType('agent.speak_ended', 1, 10_000);
    assert.equal(ended.event.source_event_id, 'said');
    const call = calls.find((c) => c.sessionId === session.session_id);
    assert.ok(call, 'the speaker given to the app was asked to voice the text');
    assert.equal(call.pid, process.pid, 'in the main process');
    assert.equal(call.text, text);
    assert.equal(call.voiceId, agent.voice_id, "in the session's voice");
    const words = text.split(' ').length;
    assert.equal(ended.event.duration_seconds, (words * WORD.length) / RATE);
    await heard(player, words * WORD.length);
    const expected = new Int16Array(words * WORD.length);
    for (let i = 0; i < words; i++) expected.set(WORD, i * WORD.length);
    assert.deepEqual(Array.from(received(player)), Array.from(expected), "the page gets the speaker's audio byte for byte");
    assert.equal(client.of('error').length, 0);
    client.close();
    player.close();
  });

  it("interrupt stops a speak_text being voiced, down to this process's speaker", async () => {
    const { session, client, player } = await connected();
    const text = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ');
    client.send({ type: 'agent.speak_text', event_id: 'long', text });
    await client.waitForType('agent.speak_started', 1, 10_000);
    // A little of it has played (and the speaker, at 30 ms a word, is still voicing the rest).
    await until(() => player.frames.length >= 3, 5000, 'the first frames at the page');
    client.send({ type: 'agent.interrupt', event_id: 'stop-now' });
    const interrupted = await client.waitForType('agent.speak_interrupted');
    const cleared = await client.waitForType('agent.audio_buffer_cleared');
    assert.equal(interrupted.event.source_event_id, 'long');
    assert.equal(cleared.event.source_event_id, 'stop-now');
    await until(() => player.of('interrupt').length > 0, 2000, 'the page to be told to stop');
    const call = calls.find((c) => c.sessionId === session.session_id);
    assert.ok(call);
    await until(() => call.aborted, 2000, "the main process's speaker to be told to stop");
    assert.ok(call.pieces < 40, `the speaker stopped after ${call.pieces} of 40 words`);
    // Nothing more plays: the session is idle and answers at once.
    client.send({ type: 'stage.get', event_id: 'after' });
    await client.waitForType('stage.updated');
    assert.equal(client.of('agent.speak_ended').length, 0);
    assert.equal(client.of('agent.state_updated').at(-1)!.event.new_state, 'idle');
    client.close();
    player.close();
  });

  it('carries out HTTP commands in the shard: a camera cut and a cue reach the render socket and the page', async () => {
    const { session, client, player } = await connected();
    const cut = await t.request('POST', `/v1/sessions/${session.session_id}/commands`, { body: { type: 'stage.camera', camera: 'far', event_id: 'cut' } });
    assert.equal(cut.status, 202, JSON.stringify(cut.body));
    const updated = await client.waitForType('stage.updated');
    assert.equal(updated.event.source_event_id, 'cut');
    assert.equal(updated.event.stage.camera, 'far');
    await until(() => player.of('camera').length > 0, 2000, 'the camera message at the page');
    assert.equal(player.of('camera')[0].camera, 'far');
    const cue = await t.request('POST', `/v1/sessions/${session.session_id}/commands`, { body: { type: 'agent.cue', cue: 'surprised', intensity: 0.6 } });
    assert.equal(cue.status, 202, JSON.stringify(cue.body));
    await until(() => player.of('expression').length > 0, 2000, 'the expression at the page');
    assert.deepEqual([player.of('expression')[0].name, player.of('expression')[0].intensity], ['surprised', 0.6]);
    // A camera the session does not have is refused by the shard, on the render socket.
    const close = await t.request('POST', `/v1/sessions/${session.session_id}/commands`, {
      body: { type: 'stage.camera', camera: 'close', event_id: 'no-such-camera' },
    });
    assert.equal(close.status, 202);
    const error = await client.waitForType('error');
    assert.deepEqual([error.event.error.type, error.event.error.source_event_id], ['stage_error', 'no-such-camera']);
    client.close();
    player.close();
  });

  it('warns audio_starvation from a shard when the caller lets an unsealed utterance run dry (interface: warning)', async () => {
    const { client, player } = await connected();
    client.speak(voiced(0.2, RATE), { event_id: 'slow' });
    const warning = await client.waitForType('warning', 1, 3000);
    // The shard's loop kept time: the caller, not the node, let it run dry.
    assert.equal(warning.event.warning.type, 'audio_starvation');
    assert.equal(warning.event.warning.source_event_id, 'slow');
    assert.equal(client.of('agent.speak_ended').length, 0, 'an unsealed utterance does not end by itself');
    client.close();
    player.close();
  });

  it('stop ends the session in the shard: the render socket closes with session-ended, the page is told ended', async () => {
    const { session, client, player } = await connected();
    const stopped = await t.request('POST', `/v1/sessions/${session.session_id}/stop`);
    assert.equal(stopped.status, 200, JSON.stringify(stopped.body));
    assert.equal(await client.waitClose(), CLOSE_SESSION_ENDED);
    await until(() => player.of('ended').length > 0 && player.closeCode !== undefined, 5000, 'the page to be told the session ended');
    assert.equal(player.of('ended')[0].reason, stopped.body.end_reason);
    assert.equal(player.closeCode, 1000);
    // An ended session stays here: its page is answered `ended`, its token refused.
    const again = await pageOf(session.player_url);
    assert.deepEqual(again, { ended: stopped.body.end_reason, code: 1000 });
    const render = await RenderClient.open(session.ws_url);
    assert.equal(await render.waitClose(), CLOSE_BAD_TOKEN);
  });

  it('keeps in this process what is not a live render session: bad tokens, unknown links, conversation mode', async () => {
    const session = await renderSession();
    const bad = await RenderClient.open(session.ws_url.replace(/token=[^&]+/, 'token=st_not-the-token'));
    assert.equal(await bad.waitClose(), CLOSE_BAD_TOKEN);
    assert.equal(bad.closeReason, 'bad or expired token');
    const unknown = await pageOf(`${t.url}/p/no-such-player-key`);
    assert.equal(unknown.code, 4004);
    // A key no link can have (NUL bytes, which the database refuses to compare) is an unknown link too.
    assert.equal((await pageOf(`${t.url}/p/%00%00`)).code, 4004);
    const conversation = await t.request('POST', '/v1/sessions', { body: { agent_id: agent.id, mode: 'conversation' } });
    assert.equal(conversation.status, 201, JSON.stringify(conversation.body));
    const page = await PlayerClient.open(conversation.body.player_url);
    const hello = page.of('hello')[0];
    assert.equal(hello.session.session_id, conversation.body.session_id);
    assert.equal(hello.session.mode, 'conversation');
    assert.equal(hello.face.avatar_id, 'face03');
    assert.ok(t.context.realtime.get(conversation.body.session_id), "the conversation's live side is in this process");
    page.close();
    await t.request('POST', `/v1/sessions/${conversation.body.session_id}/stop`);
  });

  it("adds the shards' figures to /metrics: live sessions, frames relayed, each shard's memory", async () => {
    const liveBefore = await metricValue('presence_live_sessions');
    const ownBefore = t.context.realtime.hub.size;
    const { client, player } = await connected();
    // The new session is live in a shard, not here, and counted.
    await until(async () => (await metricValue('presence_live_sessions')) === liveBefore + 1, 5000, 'the new session counted');
    assert.equal(t.context.realtime.hub.size, ownBefore);
    const framesBefore = await metricValue('presence_frames_relayed_total');
    const sent = await play(client, 0.4, 'counted');
    await heard(player, sent.length);
    const framesAfter = await metricValue('presence_frames_relayed_total');
    assert.equal(framesAfter - framesBefore, player.frames.length, 'every frame the shard relayed is counted');
    const memory = await metric('presence_shard_resident_memory_bytes{');
    assert.equal(memory.length, SHARDS);
    for (let i = 0; i < SHARDS; i++) {
      const line = memory.find((l) => l.startsWith(`presence_shard_resident_memory_bytes{shard="${i}"} `));
      assert.ok(line, `a memory line for shard ${i}`);
      assert.ok(Number(line.split(' ')[1]) > 10 * 1024 * 1024, line);
    }
    client.close();
    player.close();
  });

  it('replaces a shard killed with SIGKILL; its session reconnects and plays again, the other shard carries on', async () => {
    const pool = t.context.shards!;
    // One session on each shard; shard 0 is killed.
    const on: any[] = [];
    while (on[0] === undefined || on[1] === undefined) {
      const s = await renderSession();
      on[pool.shardOf(s.session_id)] ??= s;
    }
    const victim = await connected(on[0]);
    const bystander = await connected(on[1]);
    const pids = pool.pids();
    const killed = pids[0]!;
    assert.equal(pool.pids().length, SHARDS);
    process.kill(killed, 'SIGKILL');
    // Its sockets went with it (the process held them); the caller and the page reconnect.
    await victim.client.waitClose();
    await until(() => !alive(killed), 5000, 'the killed shard gone');
    const replaced = await until(() => pool.pids().find((pid) => !pids.includes(pid)), 10_000, 'a new shard process');
    assert.ok(alive(replaced));
    assert.deepEqual(pool.pids(), [replaced, pids[1]], 'the new process is shard 0; shard 1 is the same');
    // The new shard opens the session again from the row that comes with its sockets.
    const again = await connected(on[0]);
    assert.equal(again.client.of('session.state_updated')[0].event.state, 'connected');
    assert.equal(again.player.of('hello')[0].face.avatar_id, 'face03');
    const sent = await play(again.client, 0.3, 'after-restart');
    await heard(again.player, sent.length);
    assert.deepEqual(Array.from(received(again.player)), Array.from(sent));
    // The other shard's session was not touched.
    assert.equal(bystander.client.closeCode, undefined);
    const played = await play(bystander.client, 0.2, 'bystander');
    await heard(bystander.player, played.length);
    for (const c of [victim, again, bystander]) {
      c.client.close();
      c.player.close();
    }
  });

  it('a session stopped while its shard restarts stays ended: its page, handed over in the meantime, is told so; figures stay labelled by shard', async () => {
    const pool = t.context.shards!;
    let session: any;
    do session = await renderSession();
    while (pool.shardOf(session.session_id) !== 0);
    const killed = pool.pids()[0]!;
    process.kill(killed, 'SIGKILL');
    await until(() => pool.pids()[0] === undefined, 5000, 'shard 0 restarting');
    // While shard 0 is down, /metrics has shard 1's memory under its own label, not shard 0's.
    const memory = await metric('presence_shard_resident_memory_bytes');
    assert.deepEqual(
      memory.map((line) => line.match(/shard="(\d+)"/)?.[1]),
      ['1'],
    );
    // Live sessions without shard 0's: what the node must count again once the new shard is up.
    const withoutShard0 = await metricValue('presence_live_sessions');
    // The page is authenticated while the session is active, and waits for the new shard; the
    // session is stopped meanwhile.
    const opening = PlayerClient.open(session.player_url);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const stopped = await t.request('POST', `/v1/sessions/${session.session_id}/stop`);
    assert.equal(stopped.body.status, 'ended');
    const player = await opening;
    await until(() => player.closeCode !== undefined, 10_000, 'the page closed');
    assert.equal(player.of('ended')[0]?.reason, stopped.body.end_reason);
    // The new shard (handed only this page since it started) does not keep the ended session live.
    await until(() => pool.pids()[0] !== undefined, 10_000, 'shard 0 back');
    await until(async () => (await metric('presence_shard_resident_memory_bytes')).length === SHARDS, 10_000, 'both shards answering');
    assert.equal(await metricValue('presence_live_sessions'), withoutShard0);
  });

  it('closing the app stops the shards: open sockets are told 1012, the processes exit, close finishes', async () => {
    const { client, player } = await connected();
    const pids = t.context.shards!.pids();
    assert.equal(pids.length, SHARDS);
    let closed = false;
    closing = t.close().then(() => {
      closed = true;
    });
    assert.equal(await client.waitClose(), CLOSE_SERVER_RESTART);
    await until(() => player.closeCode !== undefined, 5000, 'the page closed');
    assert.equal(player.closeCode, CLOSE_SERVER_RESTART);
    assert.ok(!player.of('ended').length, 'the page is not told the session ended');
    await until(() => pids.every((pid) => !alive(pid)), 5000, 'every shard process gone');
    // And the close itself finishes: a server stopping (src/server.ts) waits for it before it closes
    // the database, and gives up with exit code 1 after 15 s.
    await until(() => closed, 10_000, 'app.close() to finish');
  });
});

/** Opens a page's socket and says how it ended: the `ended` reason it was told, and the close code. */
async function pageOf(playerUrl: string): Promise<{ ended?: string; code: number }> {
  const socket = new WebSocket(`${playerUrl.replace(/^http/, 'ws')}/ws`);
  let ended: string | undefined;
  socket.on('message', (data, isBinary) => {
    if (isBinary) return;
    const message = JSON.parse(data.toString());
    if (message.type === 'ended') ended = message.reason;
  });
  socket.on('error', () => {});
  const code = await new Promise<number>((resolve) => socket.on('close', (c) => resolve(c)));
  return ended === undefined ? { code } : { ended, code };
}
