/**
 * The shared playback clock (src/realtime/hub.ts): it ticks a session only when something of it
 * is due (a 40 ms frame every eighth 5 ms tick), plays every frame on time all the same, and stops
 * once no session has anything to play, an interrupted one included.
 */
import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { RealtimeHub } from '../../src/realtime/hub.js';
import { RealtimeSession } from '../../src/realtime/session.js';
import { voiced } from '../support/render-client.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const hubs: RealtimeHub[] = [];
afterEach(() => {
  for (const hub of hubs.splice(0)) hub.stop();
});

function liveSession(hub: RealtimeHub, id: string) {
  const session = new RealtimeSession({
    sessionId: id,
    sampleRate: 24000,
    stage: { camera: 'mid', camera_mode: 'auto', hold: false, backdrop: null, cameras: ['mid'], face_light: 1 },
    speaker: async function* () {},
    findBackdrop: () => undefined,
  });
  const events: any[] = [];
  session.emit = (e) => events.push(e);
  let ticks = 0;
  const tick = session.tick.bind(session);
  session.tick = (now?: number) => {
    ticks++;
    tick(now);
  };
  hub.add(session);
  return { session, events, ticks: () => ticks };
}

const pcmBytes = (seconds: number) => {
  const pcm = voiced(seconds);
  return new Uint8Array(pcm.buffer, pcm.byteOffset, pcm.byteLength);
};

describe('shared playback clock', () => {
  it('ticks a session only when a frame or its end is due, and plays the audio on time', async () => {
    const hub = new RealtimeHub();
    hubs.push(hub);
    const { session, events, ticks } = liveSession(hub, 's1');
    session.audio(pcmBytes(0.4), 'u1');
    session.speakEnd();
    while (!events.some((e) => e.type === 'agent.speak_ended')) await sleep(5);
    const started = events.find((e) => e.type === 'agent.speak_started');
    const ended = events.find((e) => e.type === 'agent.speak_ended');
    assert.equal(ended.duration_seconds, 0.4);
    assert.ok(Math.abs(ended.at - started.at - 0.4) < 0.001, `played in ${ended.at - started.at} s of session time`);
    // 0.4 s is 80 ticks of the 5 ms clock; the frames are ten, and their end one more.
    assert.ok(ticks() <= 25, `ticked ${ticks()} times`);
    await sleep(20);
    assert.deepEqual(hub.clock, { sessions: 0, running: false });
  });

  it('stops the clock for a session interrupted while it waited for audio', async () => {
    const hub = new RealtimeHub();
    hubs.push(hub);
    const { session, events } = liveSession(hub, 's2');
    session.audio(pcmBytes(0.04), 'u2');
    // Unsealed: after 60 ms without audio it is starving, and no tick is due until audio comes.
    while (!events.some((e) => e.warning?.type === 'audio_starvation')) await sleep(5);
    assert.equal(hub.clock.running, true);
    session.interrupt('evt_stop');
    await sleep(30);
    assert.deepEqual(hub.clock, { sessions: 0, running: false });
  });
});

/** Blocks this process's event loop, as a long synchronous burst of work or a collection does. */
function stallLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy: no timer and no socket is served meanwhile
  }
}

describe('a stall of the node is not the caller starving', () => {
  // The caller sends 0.2 s, then its next piece 150 ms after that ran dry: in one case the node's
  // loop was free the whole time (the caller was late), in the other it was blocked, and the
  // piece is read only when the stall ends (the node was late).
  async function dryThenMore(stalled: boolean) {
    const hub = new RealtimeHub();
    hubs.push(hub);
    const { session, events } = liveSession(hub, stalled ? 'stalled' : 'starved');
    session.audio(pcmBytes(0.2), 'utt');
    const startedAt = session.now();
    await sleep(200); // the first 0.2 s plays out on a free loop
    if (stalled) stallLoop(150);
    else await sleep(150);
    session.audio(pcmBytes(0.2), undefined);
    session.speakEnd();
    await sleep(400);
    const ended = events.find((e) => e.type === 'agent.speak_ended');
    assert.ok(ended, 'the utterance ended');
    const warnings = events.filter((e) => e.type === 'warning').map((e) => e.warning.type);
    return { playedFor: ended.at - startedAt, warnings };
  }

  it('a caller that lets the audio run dry pauses the utterance (audio_starvation) and shifts its end', async () => {
    const { playedFor, warnings } = await dryThenMore(false);
    assert.deepEqual(warnings, ['audio_starvation']);
    // 0.4 s of audio took about 0.2 + 0.15 + 0.2 s: the pause is in the utterance.
    assert.ok(playedFor > 0.5, `ended ${playedFor.toFixed(3)} s after it started`);
  });

  it('a stall of the node catches up instead (playback_late): the rest of the utterance keeps its time', async () => {
    const { playedFor, warnings } = await dryThenMore(true);
    assert.deepEqual(warnings, ['playback_late']);
    // The audio that waited out the stall leaves at once: 0.4 s of audio ends about 0.4 s after its start.
    assert.ok(playedFor < 0.45, `ended ${playedFor.toFixed(3)} s after it started`);
  });
});
