/**
 * Barge-in and echo with a loud, long agent voice (issue 26, item 5). Kokoro speaks louder and
 * longer than flite; here the agent's voice is the offline engine's real synthesised speech,
 * peak-normalised to near full scale (Kokoro's level) and ~10 s long, and the visitor is a real
 * LibriVox recording. The echo reaches the microphone as through speakers: delayed, attenuated or
 * amplified (clipping), with a little room noise. The timing figure is in bench/listening.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { pocketsphinxMissing } from '../../src/speech/recognition/pocketsphinx.js';
import type { SpeechService } from '../../src/speech/synthesis.js';
import { makeService } from '../speech/helpers.js';
import { listen } from './support/listen.js';
import { addEcho, room, toPcm } from './support/room.js';
import { concat, echoOf, librivox, mix, silence, speechSpan, testdataInstalled, type Recording } from '../recognition/recordings.js';

const LOUD_AGENT =
  'Thank you for asking. We are open every day from nine in the morning until six in the evening, and on Saturdays until noon. ' +
  'Parking is free for customers, and the entrance is on the side street next to the bakery.';

/** Scales `pcm` so its peak is `peak` of full scale. */
function normalise(pcm: Int16Array, peak: number): Int16Array {
  let max = 1;
  for (const s of pcm) max = Math.max(max, Math.abs(s));
  const g = (peak * 32767) / max;
  return Int16Array.from(pcm, (s) => Math.max(-32768, Math.min(32767, Math.round(s * g))));
}

/** Low room noise (deterministic), about -50 dBFS. */
function roomNoise(length: number): Int16Array {
  let seed = 7;
  return Int16Array.from({ length }, () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return ((seed / 0x7fffffff) * 2 - 1) * 100;
  });
}

const skip = !testdataInstalled() ? 'pocketsphinx-testdata is not installed' : pocketsphinxMissing() ? 'pocketsphinx is not installed' : false;

describe('barge-in and echo with a loud, long agent voice', { skip, timeout: 180_000 }, () => {
  let speech: SpeechService;
  let agent: Int16Array;
  let clips: Recording[];

  before(async () => {
    speech = makeService();
    const { pcm } = await speech.synthesizeAll({ text: LOUD_AGENT, provider: 'kokoro', voiceId: 'af_heart', sampleRate: 16000 });
    agent = normalise(pcm, 0.95);
    clips = librivox();
  });
  after(() => speech?.close());

  test('the loud voice is long and near full scale (what the cases below stand on)', () => {
    assert.ok(agent.length / 16000 > 8, `${agent.length / 16000} s`);
    let max = 0;
    for (const s of agent) max = Math.max(max, Math.abs(s));
    assert.ok(max > 30000);
  });

  for (const [delayMs, gain] of [
    [80, 0.6],
    [200, 1.0],
    [300, 1.6],
  ]) {
    test(`the loud voice fed back (${delayMs} ms later, gain ${gain}) neither interrupts the agent nor becomes a turn`, async () => {
      const { listener, heard, play } = listen();
      listener.setAgentTalking(true);
      const mic = mix(echoOf(agent, gain, delayMs, agent.length + 8000), roomNoise(agent.length + 8000));
      await play(mic, agent);
      listener.setAgentTalking(false);
      await play(concat(silence(200), roomNoise(1500 * 16)).subarray(0, 1700 * 16));
      listener.close();
      assert.equal(heard.bargeIns.length, 0, 'the echo interrupted the agent');
      assert.equal(heard.pauses.length, 0, 'the echo paused the agent');
      assert.equal(heard.turns.length, 0, `the echo became a turn: ${heard.turns.map((t) => t.text).join(' | ')}`);
    });
  }

  for (const [firstGain, thenGain] of [
    [0.6, 0.6],
    [1.0, 1.0],
    [1.6, 1.6],
    [0.6, 1.0],
    [1.0, 1.6],
  ]) {
    const changes = firstGain !== thenGain;
    const label = changes ? `gain ${firstGain}, then at 5 s ${thenGain} and 40 ms later` : `gain ${firstGain}`;
    // At 1.6 the room drives the microphone into clipping (5–8 % of its samples): the echo is no
    // longer a linear copy of the agent's voice, and no longer correlates with it.
    test(`the loud voice through a reverberant room (${label}) never interrupts the agent${changes ? '' : ' nor pauses it'}`, async () => {
      const { listener, heard, play } = listen();
      listener.setAgentTalking(true);
      const length = agent.length + 8000;
      const change = 5 * 16000;
      const echo = new Float32Array(length);
      addEcho(echo, agent, room(firstGain), 150, 0, change);
      addEcho(echo, agent, room(thenGain), changes ? 190 : 150, change);
      await play(mix(toPcm(echo), roomNoise(length)), agent);
      listener.setAgentTalking(false);
      await play(roomNoise(1700 * 16));
      listener.close();
      assert.equal(heard.bargeIns.length, 0, 'the echo interrupted the agent');
      assert.equal(heard.turns.length, 0, `the echo became a turn: ${heard.turns.map((t) => t.text).join(' | ')}`);
      // A room that changes all at once (the volume turned up, the laptop moved) may pause the
      // agent once for a moment, until the canceller and the guard have the new path.
      if (changes)
        assert.ok(heard.pauses.length <= 1 && heard.resumes.length === heard.pauses.length, `paused ${heard.pauses.length}, resumed ${heard.resumes.length}`);
      else assert.equal(heard.pauses.length, 0, 'the echo paused the agent');
    });
  }

  for (const [label, echoGain, visitorGain, startMs] of [
    // Echo gain 0.3 of a full-scale voice: the echo is a little quieter than the visitor at the
    // microphone (a laptop's speakers at a normal volume). A visitor 5 dB or more under the echo is
    // not told from it (see bench/README.md, "Barge-in over a loud voice").
    ['over the echo of the loud voice, once its path is known', 0.3, 1.0, 3000],
    ['in the first second of the loud voice, before the echo path is known', 0.3, 1.0, 400],
    ['over an attenuated echo, at half level', 0.15, 0.5, 3000],
  ] as const) {
    test(`the visitor speaking ${label} interrupts the agent`, async () => {
      const { listener, heard, play } = listen();
      listener.setAgentTalking(true);
      const visitor = clips[2];
      const echo = echoOf(agent, echoGain, 150, agent.length);
      const voice = concat(silence(startMs), echoOf(visitor.pcm, visitorGain, 0, visitor.pcm.length));
      await play(mix(echo, voice, roomNoise(agent.length)), agent);
      listener.close();
      assert.equal(heard.bargeIns.length, 1, 'the visitor did not interrupt the agent');
      assert.ok(heard.pauses.length >= 1 && heard.pauses[0] <= heard.bargeIns[0], 'the voice paused no later than the barge-in');
      const onset = 1000 + startMs + speechSpan(visitor.pcm).startMs;
      assert.ok(heard.bargeIns[0] > onset, 'interrupted before the visitor spoke');
    });
  }

  test('a visitor shouting into the microphone (clipping it) over the echo is heard no later than at a normal level', async () => {
    // The guard stops judging the correlation when the echo drives the microphone into clipping;
    // a visitor's own clipping under a quieter echo must not stop it (and so hide the visitor).
    const visitor = clips[2];
    const echo = echoOf(agent, 0.6, 150, agent.length);
    const onset = 1000 + 400 + speechSpan(visitor.pcm).startMs;
    const bargeInAfter = async (gain: number) => {
      const { listener, heard, play } = listen();
      listener.setAgentTalking(true);
      const voice = Int16Array.from(visitor.pcm, (s) => Math.max(-32768, Math.min(32767, Math.round(s * gain))));
      await play(mix(echo, concat(silence(400), voice), roomNoise(agent.length)), agent);
      listener.close();
      assert.ok(heard.bargeIns.length >= 1, `the visitor at gain ${gain} did not interrupt the agent`);
      return heard.bargeIns[0] - onset;
    };
    const normal = await bargeInAfter(1.5);
    const shouting = await bargeInAfter(6);
    assert.ok(shouting <= normal, `shouting interrupted ${shouting} ms after the onset, at a normal level ${normal} ms`);
  });
});
