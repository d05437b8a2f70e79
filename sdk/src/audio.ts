/**
 * Audio helpers: convert Float32 or Int16 audio at any rate to the socket's PCM s16le (24 kHz by
 * default) with a small windowed-sinc resampler, streaming or in one go, and turn byte streams
 * into sample streams. Pure TypeScript: runs in browsers and Node.
 */

/** Taps each side of the interpolation point (at the narrower of the two rates). */
const HALF_TAPS = 16;

const sinc = (x: number) => (x === 0 ? 1 : Math.sin(Math.PI * x) / (Math.PI * x));
/** Blackman window over |x| < half. */
const blackman = (x: number, half: number) => {
  const r = (x / half + 1) / 2; // 0 … 1 across the window
  return r <= 0 || r >= 1 ? 0 : 0.42 - 0.5 * Math.cos(2 * Math.PI * r) + 0.08 * Math.cos(4 * Math.PI * r);
};

/**
 * A streaming resampler: push input in any chunks, get output samples as soon as they can be
 * computed, then flush() for the tail. The output has exactly round(input × to / from) samples in
 * total. Band-limited: when lowering the rate the filter's cutoff follows the new Nyquist, so
 * nothing above it folds back as aliasing.
 */
export class Resampler {
  private readonly step: number;
  private readonly cutoff: number;
  private readonly half: number;
  /** Input not yet consumed, with `half` samples of left context kept. */
  private buffer = new Float32Array(0);
  /** Index in `buffer` of the next output's position (fractional). */
  private position: number;
  private inputTotal = 0;
  private outputTotal = 0;

  constructor(
    readonly fromRate: number,
    readonly toRate: number,
  ) {
    if (!(fromRate > 0 && toRate > 0)) throw new RangeError('sample rates must be positive');
    this.step = fromRate / toRate;
    this.cutoff = Math.min(1, toRate / fromRate);
    this.half = Math.ceil(HALF_TAPS / this.cutoff);
    // Start with `half` zeros of left context so the first output sits on input sample 0.
    this.buffer = new Float32Array(this.half);
    this.position = this.half;
  }

  /** Adds input (Float32 in -1…1, or Int16) and returns the output samples now computable, in -1…1. */
  push(input: Float32Array | Int16Array): Float32Array {
    const samples = input instanceof Int16Array ? int16ToFloat32(input) : input;
    this.inputTotal += samples.length;
    const joined = new Float32Array(this.buffer.length + samples.length);
    joined.set(this.buffer);
    joined.set(samples, this.buffer.length);
    this.buffer = joined;
    return this.produce(false);
  }

  /** Ends the stream: returns the remaining output (the input is taken as silent past its end). */
  flush(): Float32Array {
    const padded = new Float32Array(this.buffer.length + this.half + 1);
    padded.set(this.buffer);
    this.buffer = padded;
    return this.produce(true);
  }

  private produce(final: boolean): Float32Array {
    const total = Math.round((this.inputTotal * this.toRate) / this.fromRate);
    const out: number[] = [];
    const { half, cutoff, buffer } = this;
    while (this.outputTotal < total) {
      const t = this.position;
      if (!final && Math.floor(t) + half >= buffer.length) break;
      let sum = 0;
      const first = Math.max(0, Math.floor(t) - half + 1);
      const last = Math.min(buffer.length - 1, Math.floor(t) + half);
      for (let k = first; k <= last; k++) {
        const x = t - k;
        sum += buffer[k] * cutoff * sinc(cutoff * x) * blackman(x, half);
      }
      out.push(sum);
      this.outputTotal++;
      this.position += this.step;
    }
    // Drop consumed input, keeping `half` samples of left context.
    const drop = Math.max(0, Math.floor(this.position) - half);
    if (drop > 0) {
      this.buffer = this.buffer.slice(drop);
      this.position -= drop;
    }
    return Float32Array.from(out);
  }
}

/** Resamples a whole signal; output length round(length × to / from). */
export function resample(input: Float32Array | Int16Array, fromRate: number, toRate: number): Float32Array {
  if (fromRate === toRate) return input instanceof Int16Array ? int16ToFloat32(input) : Float32Array.from(input);
  const resampler = new Resampler(fromRate, toRate);
  const head = resampler.push(input);
  const tail = resampler.flush();
  const out = new Float32Array(head.length + tail.length);
  out.set(head);
  out.set(tail, head.length);
  return out;
}

/**
 * Converts audio (Float32 in -1…1 or Int16, mono, at `fromRate`) to PCM s16le bytes at `toRate`
 * (default 24 kHz, the socket's default): what speak() sends.
 */
export function toPcm16(input: Float32Array | Int16Array, fromRate: number, toRate = 24000): Uint8Array {
  if (fromRate === toRate && input instanceof Int16Array) return int16ToBytes(input);
  return int16ToBytes(float32ToInt16(resample(input, fromRate, toRate)));
}

export function int16ToFloat32(input: Int16Array): Float32Array {
  const out = new Float32Array(input.length);
  for (let i = 0; i < input.length; i++) out[i] = input[i] / 32768;
  return out;
}

/** Clips to -1…1 and rounds to 16 bits. */
export function float32ToInt16(input: Float32Array): Int16Array {
  const out = new Int16Array(input.length);
  for (let i = 0; i < input.length; i++) {
    const x = Math.max(-1, Math.min(1, input[i]));
    out[i] = Math.round(x < 0 ? x * 32768 : x * 32767);
  }
  return out;
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Int16 samples as little-endian bytes (a copy). */
export function int16ToBytes(samples: Int16Array): Uint8Array {
  const bytes = new Uint8Array(samples.length * 2);
  if (LITTLE_ENDIAN) bytes.set(new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength));
  else {
    const view = new DataView(bytes.buffer);
    for (let i = 0; i < samples.length; i++) view.setInt16(i * 2, samples[i], true);
  }
  return bytes;
}

/** Little-endian s16 bytes as samples (an odd trailing byte is ignored). */
export function bytesToInt16(bytes: Uint8Array): Int16Array {
  const count = bytes.length >> 1;
  const out = new Int16Array(count);
  const view = new DataView(bytes.buffer, bytes.byteOffset, count * 2);
  for (let i = 0; i < count; i++) out[i] = view.getInt16(i * 2, true);
  return out;
}

/** Little-endian f32 bytes as samples (trailing bytes short of a sample are ignored). */
export function bytesToFloat32(bytes: Uint8Array): Float32Array {
  const count = bytes.length >> 2;
  const out = new Float32Array(count);
  const view = new DataView(bytes.buffer, bytes.byteOffset, count * 4);
  for (let i = 0; i < count; i++) out[i] = view.getFloat32(i * 4, true);
  return out;
}

export type AudioChunk = Uint8Array | ArrayBuffer | Int16Array;
export type AudioSource = AudioChunk | ReadableStream<AudioChunk> | AsyncIterable<AudioChunk> | Iterable<AudioChunk>;

/** Any chunk as bytes (Int16 as little-endian s16). */
export function chunkBytes(chunk: AudioChunk): Uint8Array {
  if (chunk instanceof Uint8Array) return chunk;
  if (chunk instanceof Int16Array) return int16ToBytes(chunk);
  if (chunk instanceof ArrayBuffer) return new Uint8Array(chunk);
  throw new TypeError('audio chunks must be Uint8Array, ArrayBuffer or Int16Array');
}

/**
 * Iterates any audio source as byte chunks: a single chunk, a ReadableStream, or an (async)
 * iterable. `signal` cancels a ReadableStream source (its producer, e.g. a TTS request, stops).
 */
export async function* audioChunks(source: AudioSource, signal?: AbortSignal): AsyncGenerator<Uint8Array> {
  if (source instanceof Uint8Array || source instanceof Int16Array || source instanceof ArrayBuffer) {
    yield chunkBytes(source);
    return;
  }
  if (typeof (source as ReadableStream).getReader === 'function') {
    const reader = (source as ReadableStream<AudioChunk>).getReader();
    const cancel = () => reader.cancel(signal?.reason).catch(() => {});
    signal?.addEventListener('abort', cancel, { once: true });
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        yield chunkBytes(value);
      }
    } finally {
      signal?.removeEventListener('abort', cancel);
      // Stopped early (interrupt, error): cancel the stream so its producer (a TTS request) stops too.
      reader.cancel().catch(() => {});
      reader.releaseLock();
    }
    return;
  }
  for await (const chunk of source as AsyncIterable<AudioChunk>) yield chunkBytes(chunk);
}

export interface ConvertStreamOptions {
  /** The input's rate in Hz. */
  inputRate: number;
  /** `s16le` (default) or `f32le` (32-bit float, little-endian). */
  inputFormat?: 's16le' | 'f32le';
  /** The output rate (default 24000). */
  outputRate?: number;
}

/** Converts a stream of audio bytes at any rate and format to PCM s16le chunks at `outputRate`. */
export async function* convertStream(source: AudioSource, options: ConvertStreamOptions): AsyncGenerator<Uint8Array> {
  const outputRate = options.outputRate ?? 24000;
  const width = options.inputFormat === 'f32le' ? 4 : 2;
  if (width === 2 && options.inputRate === outputRate) {
    yield* audioChunks(source);
    return;
  }
  const resampler = options.inputRate === outputRate ? undefined : new Resampler(options.inputRate, outputRate);
  let carry = new Uint8Array(0);
  for await (const bytes of audioChunks(source)) {
    const joined = new Uint8Array(carry.length + bytes.length);
    joined.set(carry);
    joined.set(bytes, carry.length);
    const whole = joined.length - (joined.length % width);
    carry = joined.slice(whole);
    const samples = width === 4 ? bytesToFloat32(joined.subarray(0, whole)) : bytesToInt16(joined.subarray(0, whole));
    const out = resampler ? resampler.push(samples) : samples instanceof Int16Array ? int16ToFloat32(samples) : samples;
    if (out.length) yield int16ToBytes(float32ToInt16(out));
  }
  if (resampler) {
    const tail = resampler.flush();
    if (tail.length) yield int16ToBytes(float32ToInt16(tail));
  }
}
