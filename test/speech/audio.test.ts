import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Resampler, resampleInt16 } from '../../src/speech/resample.js';
import { SentenceSplitter, splitSentences } from '../../src/speech/sentences.js';
import { decodeWav, encodeWav, floatToInt16 } from '../../src/speech/audio.js';
import { tonePower } from './helpers.js';

function sine(hz: number, rate: number, seconds: number, amp = 0.5) {
  const x = new Float32Array(Math.round(rate * seconds));
  for (let i = 0; i < x.length; i++) x[i] = amp * Math.sin((2 * Math.PI * hz * i) / rate);
  return x;
}

test('1 kHz resampled 24k -> 16k keeps its frequency and length, streamed in pieces', async () => {
  const input = sine(1000, 24000, 1);
  const r = new Resampler(24000, 16000);
  const parts: Float32Array[] = [];
  for (let i = 0; i < input.length; i += 480) parts.push(await r.push(input.subarray(i, i + 480)));
  parts.push(await r.flush());
  r.close();
  const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  assert.equal(out.length, 16000, 'one second in, one second out');
  const body = out.subarray(800, 15200); // skip the filter's start-up
  const at1k = tonePower(body, 16000, 1000);
  for (const hz of [500, 1500, 3000, 6000, 7000]) assert.ok(tonePower(body, 16000, hz) < at1k / 1000, `energy leaked to ${hz} Hz`);
  // Amplitude kept: a 0.5 sine has power 0.0625 -> Goertzel |X|^2/N^2 = A^2/4
  assert.ok(Math.abs(at1k - 0.0625) < 0.01, `1 kHz power ${at1k}`);
});

test('a 10 kHz tone (above the 8 kHz Nyquist of 16 kHz) is filtered out, not aliased to 6 kHz', async () => {
  const pcm = floatToInt16(sine(10000, 24000, 1));
  const out = await resampleInt16(pcm, 24000, 16000);
  const body = out.subarray(800, 15200);
  // Sample dropping would fold 10 kHz onto 16 - 10 = 6 kHz at nearly full power (0.0625).
  const alias = tonePower(body, 16000, 6000, 32768);
  assert.ok(alias < 1e-6, `aliasing at 6 kHz: ${alias}`);
});

test('upsampling 16k -> 48k keeps a 440 Hz tone', async () => {
  const out = await resampleInt16(floatToInt16(sine(440, 16000, 0.5)), 16000, 48000);
  assert.equal(out.length, 24000);
  const body = out.subarray(2000, 22000);
  assert.ok(tonePower(body, 48000, 440, 32768) > 0.05);
  assert.ok(tonePower(body, 48000, 15560, 32768) < 1e-6, 'image of 440 Hz around 16 kHz');
});

test('sentence splitter: sentences leave as soon as they are complete', () => {
  const s = new SentenceSplitter();
  assert.deepEqual(s.push('Hello there'), []);
  assert.deepEqual(s.push('.'), [], 'waits for the character after the dot');
  assert.deepEqual(s.push(' How are'), ['Hello there.']);
  assert.deepEqual(s.push(' you?'), []);
  assert.deepEqual(s.push(' Fine'), ['How are you?']);
  assert.deepEqual(s.end(), ['Fine']);
});

test('sentence splitter: abbreviations, decimals and long sentences', () => {
  assert.deepEqual(splitSentences('Dr. Smith paid $3.50 today. Then he left!'), ['Dr. Smith paid $3.50 today.', 'Then he left!']);
  assert.deepEqual(splitSentences('We met in the U.S. last year, e.g. in May. Good.'), ['We met in the U.S. last year, e.g. in May.', 'Good.']);
  assert.deepEqual(splitSentences('Line one\nLine two'), ['Line one', 'Line two']);
  const long = splitSentences(`${'word '.repeat(30)}and then, ${'more '.repeat(40)}end.`, { maxChars: 200 });
  assert.ok(long.length >= 2 && long.every((x) => x.length <= 200), JSON.stringify(long));
});

test('sentence splitter: the first piece may end at a clause, later ones do not', () => {
  const s = new SentenceSplitter({ firstClauseChars: 12 });
  assert.deepEqual(s.push('Welcome to our store, I am happy to help'), ['Welcome to our store,']);
  assert.deepEqual(s.push(' you today, really. Next one, here.'), ['I am happy to help you today, really.']);
  assert.deepEqual(s.end(), ['Next one, here.']);
  assert.deepEqual(splitSentences('Hi, there. Fine.', { firstClauseChars: 12 }), ['Hi, there.', 'Fine.']);
});

test('WAV encode/decode round trip', () => {
  const pcm = new Int16Array([0, 1000, -1000, 32767, -32768]);
  const d = decodeWav(encodeWav(pcm, 22050));
  assert.equal(d.sampleRate, 22050);
  assert.deepEqual([...d.pcm], [...pcm]);
});
