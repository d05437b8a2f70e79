/**
 * Speech benchmark: for each local engine, time to first audio and real-time factor for texts
 * of 1, 3 and 10 sentences, then concurrent syntheses (1, 2, 4, 8). Prints tables.
 *
 *   node --import tsx bench/speech.ts            (npm run bench:speech)
 *
 * Engines: flite (offline, always), Kokoro on KOKORO_MODEL_DIR when set, else Kokoro on the tiny
 * generated model (same kokoro-js pipeline, trivial network: its figures are the pipeline's own
 * overhead, not Kokoro-82M's inference time).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SpeechService } from '../src/speech/synthesis.js';
import { speechConfig } from '../src/core/config.js';
import { makeTinyKokoro } from '../scripts/make-tiny-kokoro.js';

const SENTENCES = [
  'Welcome to our store, I am happy to help you today.',
  'We have a wide range of running shoes in every size.',
  'Most of our customers prefer the lighter models for daily training.',
  'If you tell me how often you run, I can suggest a good pair.',
  'Our return policy gives you thirty days to change your mind.',
  'Shipping is free for orders over fifty dollars.',
  'You can also pick up your order in any of our shops.',
  'The new autumn collection arrived last week.',
  'It includes waterproof jackets and warm fleece layers.',
  'Is there anything else I can help you with?',
];
const text = (n: number) => SENTENCES.slice(0, n).join(' ');
const RATE = 24000;
const quiet = { info() {}, warn() {}, error() {} };

interface Run {
  first: number;
  total: number;
  audio: number;
}

async function once(speech: SpeechService, voiceId: string, n: number): Promise<Run> {
  const t0 = performance.now();
  let first = 0;
  let samples = 0;
  for await (const chunk of speech.synthesize({ text: text(n), provider: 'kokoro', voiceId, sampleRate: RATE })) {
    if (!first && chunk.pcm.length) first = performance.now() - t0;
    samples += chunk.pcm.length;
  }
  return { first, total: performance.now() - t0, audio: samples / RATE };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (x: number) => `${Math.round(x)} ms`;

function table(title: string, header: string[], rows: string[][]) {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  console.log(`\n${title}\n`);
  console.log(line(header));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const r of rows) console.log(line(r));
}

async function bench(label: string, speech: SpeechService, voiceId: string) {
  await speech.start();
  await once(speech, voiceId, 1); // warm
  const rows: string[][] = [];
  for (const n of [1, 3, 10]) {
    const runs: Run[] = [];
    for (let i = 0; i < 5; i++) runs.push(await once(speech, voiceId, n));
    const rtf = median(runs.map((r) => r.total / 1000 / r.audio));
    rows.push([
      String(n),
      ms(median(runs.map((r) => r.first))),
      ms(Math.max(...runs.map((r) => r.first))),
      `${median(runs.map((r) => r.audio)).toFixed(1)} s`,
      ms(median(runs.map((r) => r.total))),
      rtf.toFixed(3),
    ]);
  }
  table(
    `${label}: one synthesis at a time (median of 5; RTF = synthesis time / audio length)`,
    ['sentences', 'first audio', 'worst first', 'audio', 'total', 'RTF'],
    rows,
  );
  const crows: string[][] = [];
  for (const c of [1, 2, 4, 8]) {
    const t0 = performance.now();
    const runs = await Promise.all(Array.from({ length: c }, () => once(speech, voiceId, 3)));
    const wall = (performance.now() - t0) / 1000;
    const audio = runs.reduce((a, r) => a + r.audio, 0);
    crows.push([
      String(c),
      ms(median(runs.map((r) => r.first))),
      ms(Math.max(...runs.map((r) => r.first))),
      (wall / audio).toFixed(3),
      (audio / wall).toFixed(1),
    ]);
  }
  table(
    `${label}: concurrent syntheses of 3 sentences`,
    ['concurrent', 'median first audio', 'worst first audio', 'RTF (wall / audio)', 'audio s per wall s'],
    crows,
  );
}

console.log(
  `speech benchmark on ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'cpu'}), Node ${process.version}, load average ${os.loadavg()[0].toFixed(1)}`,
);

const flite = new SpeechService(speechConfig({}, path.resolve('./data')), { logger: quiet });
await bench('flite (offline engine)', flite, 'af_heart');
await flite.close();

let kokoroDir = process.env.KOKORO_MODEL_DIR;
let tmp: string | undefined;
let label = 'Kokoro (KOKORO_MODEL_DIR)';
if (!kokoroDir) {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'presence-bench-kokoro-'));
  kokoroDir = makeTinyKokoro(path.join(tmp, 'Kokoro-tiny'));
  label = 'Kokoro pipeline on the tiny generated model (pipeline overhead only, not Kokoro-82M inference)';
}
const kokoro = new SpeechService(speechConfig({ KOKORO_MODEL_DIR: kokoroDir }, path.resolve('./data')), { logger: quiet });
await bench(label, kokoro, 'af_heart');
await kokoro.close();
if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
