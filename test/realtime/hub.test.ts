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
