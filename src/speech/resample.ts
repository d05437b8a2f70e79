/**
 * Streaming sample-rate conversion with libsamplerate (band-limited sinc interpolation, in WASM),
 * not sample dropping: 24 kHz speech taken to 16 kHz keeps its spectrum below 8 kHz and does not
 * fold the rest back as aliasing. One Resampler per stream: the filter state carries across
 * pieces so there are no clicks at piece boundaries.
 */
import { createRequire } from 'node:module';
import { floatToInt16, int16ToFloat } from './audio.js';

const require = createRequire(import.meta.url);
const libsamplerate = require('@alexanderolsen/libsamplerate-js') as typeof import('@alexanderolsen/libsamplerate-js');

/** SINC_MEDIUM: about 12 ms of CPU per second of 24 kHz mono audio; 97 dB stop-band. */
const QUALITY = libsamplerate.ConverterType.SRC_SINC_MEDIUM_QUALITY;

type Src = Awaited<ReturnType<typeof libsamplerate.create>>;

/**
 * Creating a converter instantiates a WASM module (45-120 ms), far too slow for the first audio
 * of an answer. Converters are therefore kept per rate pair and reset (re-initialised, which
 * clears the filter state) when handed out again.
 */
const idle = new Map<string, Src[]>();
const MAX_IDLE_PER_PAIR = 8;

async function acquire(from: number, to: number): Promise<Src> {
  const free = idle.get(`${from}:${to}`);
  const src = free?.pop();
  if (src) {
    src.converterType = QUALITY; // destroy + init: a clean filter state
    return src;
  }
  return libsamplerate.create(1, from, to, { converterType: QUALITY });
}

function release(src: Src): void {
  const key = `${src.inputSampleRate}:${src.outputSampleRate}`;
  const free = idle.get(key) ?? [];
  if (free.length >= MAX_IDLE_PER_PAIR) {
    src.destroy();
    return;
  }
  free.push(src);
  idle.set(key, free);
}

/** Creates converters ahead of need for the given rate pairs (one each). */
export async function prewarmResamplers(pairs: Array<[number, number]>): Promise<void> {
  for (const [from, to] of pairs) {
    if (from === to || idle.get(`${from}:${to}`)?.length) continue;
    release(await libsamplerate.create(1, from, to, { converterType: QUALITY }));
  }
}

export class Resampler {
  private src: Src | undefined;
  private pending: Promise<Src> | undefined;
  private inFrames = 0;
  private outFrames = 0;

  constructor(
    readonly inputRate: number,
    readonly outputRate: number,
  ) {}

  get passthrough(): boolean {
    return this.inputRate === this.outputRate;
  }

  private async converter(): Promise<Src> {
    if (this.src) return this.src;
    this.pending ??= acquire(this.inputRate, this.outputRate);
    this.src = await this.pending;
    return this.src;
  }

  async push(samples: Float32Array): Promise<Float32Array> {
    if (this.passthrough) return samples;
    if (samples.length === 0) return new Float32Array(0);
    const src = await this.converter();
    this.inFrames += samples.length;
    const out = src.full(samples).slice();
    this.outFrames += out.length;
    return out;
  }

  async pushInt16(samples: Int16Array): Promise<Int16Array> {
    if (this.passthrough) return samples;
    return floatToInt16(await this.push(int16ToFloat(samples)));
  }

  /** Drains the filter's delay line so the output is as long as the input (in time). */
  async flush(): Promise<Float32Array> {
    if (this.passthrough || !this.src) return new Float32Array(0);
    const expected = Math.round((this.inFrames * this.outputRate) / this.inputRate);
    const parts: Float32Array[] = [];
    let guard = 0;
    while (this.outFrames < expected && guard++ < 64) {
      const out = this.src.full(new Float32Array(256)).slice();
      parts.push(out);
      this.outFrames += out.length;
    }
    const total = parts.reduce((n, p) => n + p.length, 0);
    const joined = new Float32Array(total);
    let offset = 0;
    for (const p of parts) {
      joined.set(p, offset);
      offset += p.length;
    }
    const keep = Math.max(0, joined.length - (this.outFrames - expected));
    this.outFrames = expected;
    return joined.subarray(0, keep);
  }

  async flushInt16(): Promise<Int16Array> {
    return floatToInt16(await this.flush());
  }

  close(): void {
    if (this.src) release(this.src);
    else this.pending?.then(release, () => {});
    this.src = undefined;
    this.pending = undefined;
  }
}

/** Whole-buffer convenience (previews, fillers). */
export async function resampleInt16(pcm: Int16Array, from: number, to: number): Promise<Int16Array> {
  if (from === to) return pcm;
  const r = new Resampler(from, to);
  try {
    const a = await r.pushInt16(pcm);
    const b = await r.flushInt16();
    const out = new Int16Array(a.length + b.length);
    out.set(a);
    out.set(b, a.length);
    return out;
  } finally {
    r.close();
  }
}
