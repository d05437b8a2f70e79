/**
 * Barge-in and echo with a loud, long agent voice (issue 26, item 5).
 *
 *     node --import tsx bench/barge-in.ts
 *
 * The agent's voice is the offline engine's real speech (about 10 s), peak-normalised to 0.95 of
 * full scale, Kokoro's level; the visitor is a LibriVox recording (pocketsphinx-testdata) at its
 * own level. The microphone gets the agent's voice back at a delay of 150 ms and a gain (as through
 * speakers), room noise, and the visitor from 3 s in (echo path known) or 0.4 s in (not yet).
 * Printed: for each echo gain, the time from the visitor's voice onset to the listener's barge-in
 * decision (what sends `interrupt` to the page), and whether the echo alone was taken for the
 * visitor. The page then stops the audio at its next render quantum after the message arrives.
 */
import os from 'node:os';
import { VisitorListener } from '../src/conversation/listening/listener.js';
import { PocketsphinxRecognizer } from '../src/speech/recognition/pocketsphinx.js';
import { speechConfig } from '../src/core/config.js';
import { SpeechService } from '../src/speech/synthesis.js';
import { concat, echoOf, librivox, mix, silence, speechSpan, testdataInstalled } from '../test/recognition/recordings.js';

if (!testdataInstalled()) {
  console.error('pocketsphinx-testdata is not installed');
  process.exit(1);
}

const CHUNK = 320;
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
let seed = 7;
const noise = (n: number) =>
  Int16Array.from({ length: n }, () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return ((seed / 0x7fffffff) * 2 - 1) * 100;
  });

async function run(mic: Int16Array): Promise<number[]> {
  const bargeIns: number[] = [];
  let clock = 1000;
  const listener = new VisitorListener(new PocketsphinxRecognizer(), { bargeIn: () => bargeIns.push(clock), turn: () => {} }, { now: () => clock });
  listener.setAgentTalking(true);
  for (let i = 0; i < mic.length; i += CHUNK) {
    const end = Math.min(mic.length, i + CHUNK);
    clock += ((end - i) * 1000) / 16000;
    if (i < agent.length) listener.agentAudio(agent.subarray(i, Math.min(agent.length, end)), 16000, clock - ((end - i) * 1000) / 16000);
    listener.push(mic.slice(i, end), clock);
    if ((i / CHUNK) % 8 === 0) await listener.idle();
  }
  await listener.idle();
  listener.close();
  return bargeIns;
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
console.log(`agent voice ${(agent.length / 16000).toFixed(1)} s, speech rms ${db(rms(agent))} dBFS; visitor rms ${db(rms(visitor.pcm))} dBFS`);
console.log(
  `load average ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}\n`,
);
console.log('| echo gain | echo vs visitor | echo alone interrupts | visitor at 3 s: barge-in after onset | visitor at 0.4 s: barge-in after onset |');
console.log('|---|---|---|---|---|');
for (const gain of [0, 0.15, 0.3, 0.5, 0.7, 1.0, 1.6]) {
  const echo = echoOf(agent, gain, 150, agent.length + 8000);
  const alone = await run(mix(echo, noise(echo.length)));
  const cells: string[] = [];
  for (const startMs of [3000, 400]) {
    const mic = mix(echo, concat(silence(startMs), visitor.pcm), noise(echo.length));
    const onset = 1000 + startMs + speechSpan(visitor.pcm).startMs;
    const b = await run(mic);
    cells.push(b.length ? `${Math.round(b[0] - onset)} ms` : 'not interrupted');
  }
  const ratio = gain ? `${db((gain * rms(agent)) / rms(visitor.pcm))} dB` : '—';
  console.log(`| ${gain} | ${ratio} | ${alone.length ? 'YES' : 'no'} | ${cells[0]} | ${cells[1]} |`);
}
await speech.close();
