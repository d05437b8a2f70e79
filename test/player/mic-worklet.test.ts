/**
 * The page's microphone resampler (src/player/client/mic-worklet.ts) without a browser: context
 * rates to 16 kHz keep speech-band tones at their frequency and level, suppress what would alias
 * above 8 kHz, and give the same samples whatever the block sizes the audio thread delivers.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Downsampler, MIC_RATE } from '../../src/player/client/mic-worklet.js';

function tone(rate: number, hz: number, seconds: number): Float32Array {
  return Float32Array.from({ length: Math.round(rate * seconds) }, (_, i) => 0.5 * Math.sin((2 * Math.PI * hz * i) / rate));
}

function run(rate: number, input: Float32Array, blocks: number[] = [128]): number[] {
  const d = new Downsampler(rate);
  const out: number[] = [];
  let at = 0;
  let b = 0;
  while (at < input.length) {
    const size = blocks[b++ % blocks.length];
    d.push(input.subarray(at, at + size), (s) => out.push(s));
    at += size;
  }
  return out;
}

const rms = (x: number[]) => Math.sqrt(x.reduce((s, v) => s + v * v, 0) / x.length);

/** Amplitude of frequency `hz` in `x` at rate MIC_RATE (single-bin DFT). */
function amplitudeAt(x: number[], hz: number): number {
  let re = 0,
    im = 0;
  for (let i = 0; i < x.length; i++) {
    re += x[i] * Math.cos((2 * Math.PI * hz * i) / MIC_RATE);
    im += x[i] * Math.sin((2 * Math.PI * hz * i) / MIC_RATE);
  }
  return (2 * Math.hypot(re, im)) / x.length;
}

for (const rate of [48000, 44100, 16000]) {
  test(`${rate} Hz → 16 kHz: a 1 kHz tone keeps its frequency and level, at the right number of samples`, () => {
    const out = run(rate, tone(rate, 1000, 1));
    assert.ok(Math.abs(out.length - MIC_RATE) <= 2, `${out.length} samples for one second`);
    const steady = out.slice(200);
    assert.ok(Math.abs(amplitudeAt(steady, 1000) - 0.5) < 0.02, `1 kHz amplitude ${amplitudeAt(steady, 1000).toFixed(3)}`);
    assert.ok(Math.abs(rms(steady) - 0.5 / Math.SQRT2) < 0.02);
  });
}

test('48 kHz → 16 kHz: a 14 kHz tone (above the new Nyquist) is suppressed, not folded to 2 kHz', () => {
  const out = run(48000, tone(48000, 14000, 1)).slice(200);
  const folded = amplitudeAt(out, 2000);
  assert.ok(folded < 0.5 / 100, `alias at 2 kHz: ${folded.toFixed(4)} (tone 0.5; < −40 dB wanted)`);
});

test('the same output whatever the block sizes (phase and filter state carried across blocks)', () => {
  const input = tone(44100, 440, 0.5);
  const whole = run(44100, input, [input.length]);
  const blocky = run(44100, input, [128, 1, 37, 300, 5]);
  assert.equal(blocky.length, whole.length);
  for (let i = 0; i < whole.length; i++) assert.ok(Math.abs(whole[i] - blocky[i]) < 1e-9, `sample ${i}`);
});
