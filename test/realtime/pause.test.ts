/**
 * Pausing the agent's voice (issue 26, item 5: the visitor may be speaking over it) on the session's
 * own clock: nothing leaves while it is paused, and on resume the utterance goes on with exactly
 * the next sample, timed later by the pause, its timed actions moved with it; an interrupt while
 * paused drops it and counts only what was heard before the pause. The page hears of both
 * (`pause`, `resume` with the shift).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RealtimeSession } from '../../src/realtime/session.js';
import { decodeFrame } from '../../src/realtime/frame-codec.js';
import type { PlayerMessage } from '../../src/realtime/player-protocol.js';

const RATE = 16000;
/** One second of samples that are all different, so a lost or repeated one shows. */
const SPEECH = Int16Array.from({ length: RATE }, (_, i) => i - 8000);

function session() {
  let clock = 0;
  const s = new RealtimeSession({
    sessionId: 'ses_pause',
    sampleRate: RATE,
    stage: { camera: 'mid', camera_mode: 'auto', hold: false, backdrop: null, cameras: ['mid'], face_light: 1 },
    speaker: async function* () {
      yield { pcm: SPEECH.slice(), text: 'hello there' };
    },
    findBackdrop: () => undefined,
    now: () => clock,
  });
  const events: any[] = [];
  s.emit = (e) => events.push(e);
  const messages: PlayerMessage[] = [];
  const frames: { t: number; samples: Int16Array }[] = [];
  s.player.add({
    readyState: 1,
    bufferedAmount: 0,
    send: (d: string | Buffer) => {
      if (typeof d === 'string') messages.push(JSON.parse(d));
      else {
        const frame = decodeFrame(new Uint8Array(d))!;
        frames.push({ t: frame.t, samples: frame.samples.slice() });
      }
    },
    close() {},
    terminate() {},
  } as never);
  /** Advances the clock to `to` in 10 ms ticks, as the hub does. */
  const runTo = (to: number) => {
    while (clock < to - 1e-9) {
      clock = Math.min(to, Math.round((clock + 0.01) * 1000) / 1000);
      s.tick(clock);
    }
  };
  return { s, events, messages, frames, runTo, now: () => clock };
}

async function speaking() {
  const x = session();
  x.s.speak({ eventId: 'answer_1', text: 'hello there' });
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  x.s.tick(0);
  return x;
}

test('pause holds the voice; resume goes on with the next sample, later by the pause, nothing lost or repeated', async () => {
  const { s, events, messages, frames, runTo } = await speaking();
  runTo(0.4);
  assert.equal(s.pause(), true);
  assert.equal(s.pause(), false, 'already paused');
  const before = frames.length;
  const heardEnd = frames.at(-1)!.t + frames.at(-1)!.samples.length / RATE;
  runTo(1.2);
  assert.equal(frames.length, before, 'nothing left while paused');
  assert.equal(s.state, 'talking', 'the agent still holds the turn while the barge-in is decided');
  s.resume();
  runTo(2.5);
  const pause = messages.find((m) => m.type === 'pause') as { t: number };
  const resume = messages.find((m) => m.type === 'resume') as { t: number; shift: number };
  assert.ok(Math.abs(pause.t - 0.4) < 1e-9 && Math.abs(resume.t - 1.2) < 1e-9);
  assert.ok(Math.abs(resume.shift - 0.8) < 1e-9, `shift ${resume.shift}`);
  // The samples the page got are the utterance's, each once, in order.
  const played = Int16Array.from(frames.flatMap((f) => Array.from(f.samples)));
  assert.deepEqual(played, SPEECH);
  // The first frame after the pause continues the last one, moved by the pause.
  assert.ok(Math.abs(frames[before].t - (heardEnd + resume.shift)) < 1e-6, `${frames[before].t} vs ${heardEnd + resume.shift}`);
  const ended = events.find((e) => e.type === 'agent.speak_ended');
  assert.equal(ended.duration_seconds, 1);
  assert.ok(Math.abs(ended.at - 1.8) < 1e-3, `ended at ${ended.at}`);
  assert.equal(events.filter((e) => e.type === 'agent.speak_interrupted').length, 0);
  s.close();
});

test('a cue timed into the utterance waits with it through the pause', async () => {
  const { s, messages, runTo } = await speaking();
  s.action({ kind: 'cue', atSeconds: 0.6, payload: { name: 'smile', intensity: 1 }, eventId: 'cue_1' }, 0.6);
  runTo(0.3);
  s.pause();
  runTo(1.0);
  assert.equal(messages.filter((m) => m.type === 'expression').length, 0, 'not during the pause');
  s.resume();
  runTo(2.0);
  const cue = messages.find((m) => m.type === 'expression') as { t: number };
  assert.ok(Math.abs(cue.t - 1.3) < 1e-6, `cue at ${cue.t}, 0.6 s into the utterance after a 0.7 s pause`);
  s.close();
});

test('an interrupt while paused drops the rest; what was heard ends at the pause', async () => {
  const { s, events, messages, frames, runTo } = await speaking();
  runTo(0.3);
  s.pause();
  runTo(0.8);
  s.interrupt('evt_cut');
  const count = frames.length;
  runTo(2);
  assert.equal(frames.length, count, 'nothing after the interrupt');
  assert.equal(s.paused, false);
  assert.ok(messages.some((m) => m.type === 'interrupt'));
  const cut = events.find((e) => e.type === 'agent.speak_interrupted');
  assert.ok(cut.played_seconds <= 0.3 + 0.04 && cut.played_seconds >= 0.26, `played ${cut.played_seconds} s`);
  assert.equal(s.state, 'idle');
  s.close();
});

test('nothing to pause when the agent is not speaking; resume without a pause does nothing', () => {
  const { s, messages } = session();
  assert.equal(s.pause(), false);
  s.resume();
  assert.equal(messages.filter((m) => m.type === 'pause' || m.type === 'resume').length, 0);
  s.close();
});

test("the agent's audio is dated by when it is due (the echo canceller's reference), on the real clock only", () => {
  const setup = {
    sessionId: 'ses_due',
    sampleRate: RATE,
    stage: { camera: 'mid' as const, camera_mode: 'auto' as const, hold: false, backdrop: null, cameras: ['mid' as const], face_light: 1 },
    speaker: async function* () {},
    findBackdrop: () => undefined,
  } satisfies ConstructorParameters<typeof RealtimeSession>[0];
  const before = performance.now();
  const real = new RealtimeSession({ ...setup });
  const after = performance.now();
  // Session time 2.5 s is 2,500 ms after the session's own start, whenever this line runs.
  const due = real.performanceTimeOf(2.5)!;
  assert.ok(due >= before + 2500 && due <= after + 2500, `${due} not within [${before + 2500}, ${after + 2500}]`);
  assert.ok(Math.abs(real.performanceTimeOf(3)! - due - 500) < 1e-6);
  // A test's clock has no place on performance.now(): the listener then dates audio when it is sent.
  const virtual = new RealtimeSession({ ...setup, now: () => 0 });
  assert.equal(virtual.performanceTimeOf(2.5), undefined);
});
