/**
 * The SDK's audio helpers: the resampler keeps a signal's frequency, amplitude and duration, and
 * band-limits when lowering the rate; conversion to PCM s16le is exact; a streamed conversion
 * equals the one-shot one.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { resample, toPcm16, convertStream, bytesToInt16, int16ToBytes, float32ToInt16, Resampler } from '../../sdk/src/index.js';

const sine = (frequency: number, rate: number, seconds: number, amplitude = 0.5) =>
  Float32Array.from({ length: Math.round(rate * seconds) }, (_, i) => amplitude * Math.sin((2 * Math.PI * frequency * i) / rate));

/** The strongest frequency (a direct DFT scan in 1 Hz steps around the expected one, and coarse elsewhere). */
function magnitudeAt(signal: Float32Array, rate: number, frequency: number): number {
  let re = 0;
  let im = 0;
  for (let i = 0; i < signal.length; i++) {
    re += signal[i] * Math.cos((2 * Math.PI * frequency * i) / rate);
    im -= signal[i] * Math.sin((2 * Math.PI * frequency * i) / rate);
  }
  return (2 * Math.hypot(re, im)) / signal.length;
}
function peakFrequency(signal: Float32Array, rate: number, from: number, to: number, step: number): number {
  let best = from;
  let bestMagnitude = -1;
  for (let f = from; f <= to; f += step) {
    const m = magnitudeAt(signal, rate, f);
    if (m > bestMagnitude) [best, bestMagnitude] = [f, m];
  }
  return best;
}
const rms = (x: Float32Array) => Math.sqrt(x.reduce((s, v) => s + v * v, 0) / x.length);

describe('@presence/sdk audio', () => {
  it('resamples a 1 kHz sine from 16 kHz to 24 kHz keeping its frequency, amplitude and length', () => {
    const input = sine(1000, 16000, 1);
    const output = resample(input, 16000, 24000);
    assert.equal(output.length, 24000);
    // Away from the edges (the filter's warm-up), the output is the same sine at the new rate.
    const middle = output.subarray(2400, 21600);
    assert.equal(peakFrequency(middle, 24000, 500, 1500, 10), 1000);
    assert.ok(Math.abs(magnitudeAt(middle, 24000, 1000) - 0.5) < 0.01, `amplitude ${magnitudeAt(middle, 24000, 1000)}`);
    const reference = sine(1000, 24000, 1);
    const worst = middle.reduce((m, v, i) => Math.max(m, Math.abs(v - reference[i + 2400])), 0);
    assert.ok(worst < 0.01, `largest deviation from the ideal sine ${worst}`);
  });

  it('keeps lengths exact for every socket rate, and band-limits when lowering the rate', () => {
    for (const [from, to] of [
      [44100, 24000],
      [48000, 16000],
      [22050, 24000],
      [8000, 24000],
    ]) {
      assert.equal(resample(new Float32Array(from * 2 + 7), from, to).length, Math.round(((from * 2 + 7) * to) / from));
    }
    // 15 kHz cannot exist at 24 kHz (Nyquist 12 kHz): it must not fold back as a 9 kHz alias.
    const aliasing = resample(sine(15000, 48000, 0.5), 48000, 24000).subarray(1200, 10800);
    assert.ok(rms(aliasing) < 0.01, `energy left of an out-of-band tone: ${rms(aliasing)}`);
    const kept = resample(sine(5000, 48000, 0.5), 48000, 24000).subarray(1200, 10800);
    assert.ok(Math.abs(rms(kept) - 0.5 / Math.SQRT2) < 0.01, 'an in-band tone keeps its level');
  });

  it('converts to PCM s16le exactly, and streams in chunks the same as in one go', async () => {
    const int16 = Int16Array.from([0, 1, -1, 32767, -32768, 12345]);
    assert.deepEqual(Array.from(toPcm16(int16, 24000)), Array.from(new Uint8Array(int16.buffer)));
    assert.deepEqual(Array.from(bytesToInt16(int16ToBytes(int16))), Array.from(int16));
    assert.deepEqual(Array.from(float32ToInt16(Float32Array.from([1, -1, 2, -2, 0.5]))), [32767, -32768, 32767, -32768, 16384]);

    const input = float32ToInt16(sine(440, 22050, 0.3));
    const whole = toPcm16(input, 22050, 24000);
    const bytes = int16ToBytes(input);
    const chunks = [bytes.subarray(0, 333), bytes.subarray(333, 5001), bytes.subarray(5001)];
    const parts: Uint8Array[] = [];
    for await (const part of convertStream(chunks, { inputRate: 22050 })) parts.push(part);
    const streamed = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    parts.reduce((at, p) => (streamed.set(p, at), at + p.length), 0);
    assert.deepEqual(Array.from(streamed), Array.from(whole));

    // Float32 little-endian input.
    const f32 = sine(440, 24000, 0.01);
    const f32Bytes = new Uint8Array(f32.buffer);
    const out: Uint8Array[] = [];
    for await (const part of convertStream([f32Bytes.subarray(0, 6), f32Bytes.subarray(6)], { inputRate: 24000, inputFormat: 'f32le' })) out.push(part);
    assert.deepEqual(Array.from(bytesToInt16(out.reduce((a, b) => Uint8Array.from([...a, ...b]), new Uint8Array(0)))), Array.from(float32ToInt16(f32)));
  });

  it('refuses a rate that is not positive', () => {
    assert.throws(() => new Resampler(0, 24000), RangeError);
  });
});
