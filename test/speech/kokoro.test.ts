/**
 * The real Kokoro pipeline (kokoro-js: tokenizer.json, voice style vectors, onnxruntime-node
 * inference, sentence streaming) on a tiny model with Kokoro's exact ONNX interface, generated
 * here by scripts/make-tiny-kokoro.ts; and the Kokoro-FastAPI client against a local fake.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { makeTinyKokoro, TINY_SAMPLES_PER_TOKEN, tinyTokenHz, KOKORO_VOCAB } from '../../scripts/make-tiny-kokoro.js';
import { concatInt16 } from '../../src/speech/audio.js';
import type { SpeechPiece } from '../../src/speech/synthesis.js';
import type { SpeechError } from '../../src/speech/errors.js';
import { fakeServer, makeService, sineBytes, tonePower, sleep } from './helpers.js';

const require = createRequire(import.meta.url);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'presence-tiny-kokoro-'));
const modelDir = makeTinyKokoro(path.join(dir, 'Kokoro-tiny'));
const lines: string[] = [];
const speech = makeService({ KOKORO_MODEL_DIR: modelDir }, lines);

before(() => speech.start());
after(async () => {
  await speech.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Mean |style| of the row kokoro-js picks for a text of `tokens` ids (pads included). */
function styleLoudness(voice: string, tokens: number): number {
  const bin = fs.readFileSync(path.join(path.dirname(require.resolve('kokoro-js')), '..', 'voices', `${voice}.bin`));
  const style = new Float32Array(bin.buffer, bin.byteOffset, bin.byteLength / 4);
  const row = Math.min(Math.max(tokens - 2, 0), 509);
  let sum = 0;
  for (let i = 0; i < 256; i++) sum += Math.abs(style[row * 256 + i]);
  return sum / 256;
}

async function collect(voiceId: string, text: string, sampleRate = 24000) {
  const chunks: SpeechPiece[] = [];
  for await (const c of speech.synthesize({ text, provider: 'kokoro', voiceId, sampleRate })) chunks.push(c);
  return chunks;
}

test('loads the model from KOKORO_MODEL_DIR and says so', () => {
  assert.ok(
    lines.some((l) => l.includes('Kokoro model loaded from KOKORO_MODEL_DIR')),
    lines.join('\n'),
  );
  assert.equal(speech.engineFor('kokoro', 'af_heart'), 'kokoro');
  assert.equal(speech.engineFor('kokoro', 'bm_george'), 'kokoro');
  // kokoro-js phonemises English only: other languages go to the offline engine.
  assert.equal(speech.engineFor('kokoro', 'ef_dora'), 'flite');
});

test('tokeniser, style vector and inference reach the graph: one 75 ms tone per phoneme token', async () => {
  const chunks = await collect('af_heart', 'Hello world.');
  const pcm = concatInt16(chunks.map((c) => c.pcm));
  assert.equal(pcm.length % TINY_SAMPLES_PER_TOKEN, 0);
  const tokens = pcm.length / TINY_SAMPLES_PER_TOKEN;
  // "həlˈoʊ wˈɜːld." is about 13 phoneme characters plus the two "$" pads.
  assert.ok(tokens >= 10 && tokens <= 20, `${tokens} tokens`);
  // First and last tokens are the "$" pad (id 0): its tone is tinyTokenHz(0).
  const first = pcm.subarray(0, TINY_SAMPLES_PER_TOKEN);
  assert.ok(tonePower(first, 24000, tinyTokenHz(0), 32768) > 10 * tonePower(first, 24000, tinyTokenHz(KOKORO_VOCAB['h']), 32768));
  // Loudness follows the style row kokoro-js chose for this length (peak of a Hann-windowed sine = gain * mean|style|).
  let peak = 0;
  for (const s of pcm) peak = Math.max(peak, Math.abs(s) / 32768);
  const expected = 3 * styleLoudness('af_heart', tokens);
  assert.ok(Math.abs(peak - expected) / expected < 0.03, `peak ${peak} vs style ${expected}`);
  const other = concatInt16((await collect('am_adam', 'Hello world.')).map((c) => c.pcm));
  let peak2 = 0;
  for (const s of other) peak2 = Math.max(peak2, Math.abs(s) / 32768);
  const expected2 = 3 * styleLoudness('am_adam', tokens);
  assert.ok(Math.abs(peak2 - expected2) / expected2 < 0.03, `am_adam peak ${peak2} vs ${expected2}`);
  assert.ok(
    chunks
      .flatMap((c) => c.words ?? [])
      .map((w) => w.word)
      .join(' ') === 'Hello world',
  );
});

test('streams sentence by sentence, first sentence first, resampled to 16 kHz', async () => {
  const t0 = performance.now();
  let first = 0;
  const chunks: SpeechPiece[] = [];
  for await (const c of speech.synthesize({
    text: 'Hi. This second sentence is a good deal longer than the first one. And a third.',
    provider: 'kokoro',
    voiceId: 'bf_emma',
    sampleRate: 16000,
  })) {
    first ||= performance.now() - t0;
    chunks.push(c);
  }
  assert.ok(chunks.length >= 3, `${chunks.length} chunks`);
  assert.ok(chunks[0].pcm.length < chunks[1].pcm.length, 'the short first sentence came out on its own');
  assert.ok(chunks.every((c) => c.sampleRate === 16000));
  const words = chunks.flatMap((c) => c.words ?? []);
  assert.equal(words[0].word, 'Hi');
  assert.ok(words.find((w) => w.word === 'third')!.start > words.find((w) => w.word === 'second')!.start);
  // Generous: this machine may be busy with other test files; the bench measures the real figure.
  assert.ok(first < 5000, `first audio after ${first} ms`);
});

test('a broken model folder falls back to the offline engine with a clear log line', async () => {
  const broken = path.join(dir, 'broken');
  fs.mkdirSync(broken);
  const log: string[] = [];
  const s = makeService({ KOKORO_MODEL_DIR: broken }, log);
  await s.start();
  assert.equal(s.engineFor('kokoro', 'af_heart'), 'flite');
  assert.ok(
    log.some((l) => /could not be loaded .*config.json is missing.*flite/.test(l)),
    log.join('\n'),
  );
  await s.close();
});

test('KOKORO_URL: Kokoro-FastAPI client streams raw 24 kHz PCM', async () => {
  const audio = sineBytes(300, 0.6);
  const fake = await fakeServer(async (req, res) => {
    res.writeHead(200, { 'content-type': 'audio/pcm' });
    for (let i = 0; i < audio.length; i += 4801) {
      res.write(audio.subarray(i, i + 4801)); // odd sizes: a sample split across pieces
      await sleep(5);
    }
    res.end();
  });
  const s = makeService({ KOKORO_URL: fake.url + '/' });
  try {
    assert.equal(s.engineFor('kokoro', 'jf_alpha'), 'kokoro-remote');
    const { pcm } = await s.synthesizeAll({ text: 'こんにちは。', provider: 'kokoro', voiceId: 'jf_alpha', sampleRate: 24000 });
    assert.deepEqual(Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength), audio);
    const req = fake.requests[0];
    assert.equal(req.url, '/v1/audio/speech');
    assert.deepEqual(JSON.parse(req.body), { model: 'kokoro', input: 'こんにちは。', voice: 'jf_alpha', response_format: 'pcm', stream: true, speed: 1 });
    await fake.close();
    await assert.rejects(
      s.synthesizeAll({ text: 'Hello.', provider: 'kokoro', voiceId: 'af_heart', sampleRate: 24000 }),
      (e: SpeechError) => e.code === 'provider_unavailable',
    );
  } finally {
    await s.close();
    await fake.close();
  }
});
