/**
 * Barge-in and echo with a loud, long agent voice (issue 26, item 5).
 *
 *     node --import tsx bench/barge-in.ts [--runs 3]
 *
 * The agent's voice is the offline engine's real speech (about 13 s), peak-normalised to 0.95 of
 * full scale, Kokoro's level; the visitor is a LibriVox recording (pocketsphinx-testdata) at its
 * own level. The microphone gets the agent's voice back at a delay of 150 ms and a gain (as through
 * speakers), room noise, and the visitor from 3 s in (echo path known) or 0.4 s in (not yet).
 * Printed, for each echo gain, from the visitor's voice onset:
 * - voice stops: the listener's first decision that stops the agent's voice at the page: `pause`
 *   (bargeInStarted) now, the barge-in itself before pausing (run with pausing off, same audio);
 * - turn taken: the barge-in decision (the answer dropped, `interrupt`);
 * - whether the echo alone paused or interrupted the agent;
 * - a 250 ms voiced burst (a back-channel's length, cut from the visitor's recording) at 3 s: whether
 *   it paused the agent, and how long the agent stayed silent before resuming.
 * Times are on the clock of the audio pushed (the VAD's decisions depend on the audio only), so
 * machine load does not change them; `--runs` repeats everything to show it.
 */
import os from 'node:os';
import { VisitorListener } from '../src/conversation/listening/listener.js';
import { PocketsphinxRecognizer } from '../src/speech/recognition/pocketsphinx.js';
import { speechConfig } from '../src/core/config.js';
import { SpeechService } from '../src/speech/synthesis.js';
import { concat, librivox, silence, speechSpan, testdataInstalled } from '../test/recognition/recordings.js';

if (!testdataInstalled()) {
  console.error('pocketsphinx-testdata is not installed');
  process.exit(1);
}

const runsArg = process.argv.indexOf('--runs');
const RUNS = runsArg > 0 ? Number(process.argv[runsArg + 1]) : 1;
const CHUNK = 320;
/** A back-channel's length ("mm-hm"): what must pause the agent at most briefly and never interrupt it. */
const BURST_MS = 250;
const TEXT =
  'Thank you for asking. We are open every day from nine in the morning until six in the evening, and on Saturdays until noon. ' +
  'Parking is free for customers, and the entrance is on the side street next to the bakery.';
const quiet = { info() {}, warn() {}, error() {} };
const speech = new SpeechService(speechConfig({}, 'memory'), { logger: quiet, fliteWorkers: 1 });
const { pcm } = await speech.synthesizeAll({ text: TEXT, provider: 'kokoro', voiceId: 'af_heart', sampleRate: 16000 });
let max = 1;
for (const s of pcm) max = Math.max(max, Math.abs(s));
const agent = Int16Array.from(pcm, (s) => Math.round((s * 0.95 * 32767) / max));
const visitor = librivox()[2];
const onsetMs = speechSpan(visitor.pcm).startMs;
const burst = visitor.pcm.slice(Math.round(onsetMs * 16), Math.round((onsetMs + BURST_MS) * 16));
const roomNoise = (() => {
  let seed = 7;
  return Int16Array.from({ length: agent.length + 16000 }, () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return ((seed / 0x7fffffff) * 2 - 1) * 100;
  });
})();
const noiseAt = (i: number) => roomNoise[i] ?? 0;

interface Heard {
  pauses: number[];
  resumes: number[];
  bargeIns: number[];
}

/**
 * One conversation moment, in a closed loop as at a real page: the agent's voice plays (and comes
 * back through the speakers at `gain`, 150 ms late) until the listener pauses it, goes on when it
 * resumes it, and stops for good at the barge-in. `voice` is the visitor's side (already placed in time).
 */
async function run(gain: number, voice: Int16Array, pauseAfterMs?: number): Promise<Heard> {
  const heard: Heard = { pauses: [], resumes: [], bargeIns: [] };
  let clock = 1000;
  let playing = true;
  let stopped = false;
  let position = 0;
  const listener = new VisitorListener(
    new PocketsphinxRecognizer(),
    {
      bargeInStarted: () => {
        heard.pauses.push(clock);
        playing = false;
      },
      bargeInDropped: () => {
        heard.resumes.push(clock);
        playing = !stopped;
      },
      bargeIn: () => {
        heard.bargeIns.push(clock);
        playing = false;
        stopped = true;
      },
      turn: () => {},
    },
    { now: () => clock, pauseAfterMs },
  );
  listener.setAgentTalking(true);
  const total = agent.length + 8000;
  const played = new Int16Array(total + 4000); // what the speakers played, sample by sample
  const delay = 150 * 16;
  for (let i = 0; i < total; i += CHUNK) {
    const end = Math.min(total, i + CHUNK);
    const n = end - i;
    clock += (n * 1000) / 16000;
    if (playing && position < agent.length) {
      const out = agent.subarray(position, Math.min(agent.length, position + n));
      played.set(out, i);
      listener.agentAudio(out, 16000, clock - (n * 1000) / 16000);
      position += out.length;
    }
    listener.setAgentTalking(!stopped && position < agent.length);
    const mic = new Int16Array(n);
    for (let k = 0; k < n; k++) {
      const at = i + k;
      const echo = at >= delay ? played[at - delay] * gain : 0;
      mic[k] = Math.max(-32768, Math.min(32767, Math.round(echo + (voice[at] ?? 0) + noiseAt(at))));
    }
    listener.push(mic, clock);
    if ((i / CHUNK) % 8 === 0) await listener.idle();
  }
  await listener.idle();
  listener.close();
  return heard;
}

const rms = (p: Int16Array) => {
  let s = 0;
  let n = 0;
  for (const v of p)
    if (Math.abs(v) > 300) {
      s += (v / 32768) ** 2;
      n++;
    }
  return Math.sqrt(s / Math.max(1, n));
};
const db = (x: number) => (20 * Math.log10(x)).toFixed(1);
const after = (times: number[], onset: number) => (times.length ? `${Math.round(times[0] - onset)} ms` : '—');
console.log(`agent voice ${(agent.length / 16000).toFixed(1)} s, speech rms ${db(rms(agent))} dBFS; visitor rms ${db(rms(visitor.pcm))} dBFS`);
console.log(
  `load average ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}\n`,
);
for (let round = 1; round <= RUNS; round++) {
  if (RUNS > 1) console.log(`run ${round} of ${RUNS}\n`);
  console.log(
    `| echo gain | echo vs visitor | echo alone: pauses / interrupts | at 3 s: voice stops before → now | at 3 s: turn taken | at 0.4 s: voice stops before → now | at 0.4 s: turn taken | ${BURST_MS} ms burst at 3 s: paused for |`,
  );
  console.log('|---|---|---|---|---|---|---|---|');
  for (const gain of [0, 0.15, 0.3, 0.5, 0.7, 1.0, 1.6]) {
    const alone = await run(gain, new Int16Array(0));
    const cells: string[] = [];
    for (const startMs of [3000, 400]) {
      const voice = concat(silence(startMs), visitor.pcm);
      const onset = 1000 + startMs + onsetMs;
      const before = await run(gain, voice, 0);
      const now = await run(gain, voice);
      cells.push(`${after(before.bargeIns, onset)} → ${after(now.pauses, onset)}`, now.bargeIns.length ? after(now.bargeIns, onset) : 'not interrupted');
    }
    const b = await run(gain, concat(silence(3000), burst));
    const burstCell = b.bargeIns.length
      ? 'interrupted'
      : b.pauses.length
        ? b.resumes.length
          ? `${Math.round(b.resumes[0] - b.pauses[0])} ms, resumed`
          : 'paused, never resumed'
        : 'not paused';
    const ratio = gain ? `${db((gain * rms(agent)) / rms(visitor.pcm))} dB` : '—';
    const echoCell = `${alone.pauses.length ? `YES (${alone.pauses.length})` : 'no'} / ${alone.bargeIns.length ? 'YES' : 'no'}`;
    console.log(`| ${gain} | ${ratio} | ${echoCell} | ${cells[0]} | ${cells[1]} | ${cells[2]} | ${cells[3]} | ${burstCell} |`);
  }
  console.log('');
}
await speech.close();
