/**
 * AudioWorklet processor for the microphone: takes the captured audio at the context's rate,
 * low-passes it (windowed-sinc FIR below 16 kHz's Nyquist) and resamples it to 16 kHz mono with a
 * phase kept across blocks, then posts 20 ms chunks of signed 16-bit samples (and their level)
 * to the page, which streams them over the player channel. Registered by audio-worklet.ts, so one
 * module carries both processors.
 */

declare const sampleRate: number;
declare function registerProcessor(name: string, ctor: unknown): void;
declare class AudioWorkletProcessor {
  readonly port: MessagePort;
  constructor();
}

export const MIC_RATE = 16000;
/**
 * Samples per posted chunk: 20 ms at 16 kHz. The server hears the end of the visitor's words a
 * chunk late at worst and counts the end-of-turn silence in whole chunks, so the chunk is latency
 * in every turn (with 100 ms chunks the end of turn came 45 ms later at p50, bench/README.md);
 * 50 small frames a second cost the server next to nothing.
 */
export const MIC_CHUNK = 320;
const TAPS = 31;

/** Low-pass FIR taps (Blackman window) with cutoff `cutoff` as a fraction of the input rate. */
export function lowPass(cutoff: number, taps = TAPS): Float32Array {
  const h = new Float32Array(taps);
  const m = (taps - 1) / 2;
  let sum = 0;
  for (let i = 0; i < taps; i++) {
    const x = i - m;
    const sinc = x === 0 ? 2 * cutoff : Math.sin(2 * Math.PI * cutoff * x) / (Math.PI * x);
    const w = 0.42 - 0.5 * Math.cos((2 * Math.PI * i) / (taps - 1)) + 0.08 * Math.cos((4 * Math.PI * i) / (taps - 1));
    h[i] = sinc * w;
    sum += h[i];
  }
  for (let i = 0; i < taps; i++) h[i] /= sum;
  return h;
}

/** Streaming resampler from `inRate` to 16 kHz: FIR low-pass, then linear interpolation. */
export class Downsampler {
  private readonly taps: Float32Array;
  private readonly history: Float32Array;
  private head = 0;
  private readonly step: number;
  /** Position of the next output sample, in input samples relative to the last filtered one. */
  private phase = 0;
  private previous = 0;
  private readonly passthrough: boolean;

  constructor(readonly inRate: number) {
    this.passthrough = inRate === MIC_RATE;
    // Cut a little below 8 kHz so the transition band stays under the new Nyquist.
    this.taps = lowPass(Math.min(0.45, 7200 / inRate));
    this.history = new Float32Array(this.taps.length);
    this.step = inRate / MIC_RATE;
    this.phase = this.step;
  }

  /** Feeds input samples; calls `emit` with each 16 kHz sample (−1..1). */
  push(input: Float32Array, emit: (sample: number) => void): void {
    if (this.passthrough) {
      for (let i = 0; i < input.length; i++) emit(input[i]);
      return;
    }
    const n = this.taps.length;
    for (let i = 0; i < input.length; i++) {
      this.history[this.head] = input[i];
      this.head = (this.head + 1) % n;
      let y = 0;
      for (let k = 0, j = this.head; k < n; k++, j = (j + 1) % n) y += this.taps[k] * this.history[j];
      // Output samples falling between the previous filtered sample and this one.
      while (this.phase <= 1) {
        emit(this.previous + (y - this.previous) * this.phase);
        this.phase += this.step;
      }
      this.phase -= 1;
      this.previous = y;
    }
  }
}

if (typeof registerProcessor === 'function') {
  class MicCapture extends AudioWorkletProcessor {
    private readonly resampler = new Downsampler(sampleRate);
    private chunk = new Int16Array(MIC_CHUNK);
    private filled = 0;
    private energy = 0;

    process(inputs: Float32Array[][]): boolean {
      const channel = inputs[0]?.[0];
      if (!channel) return true;
      this.resampler.push(channel, (s) => {
        const v = Math.max(-1, Math.min(1, s));
        this.chunk[this.filled++] = Math.round(v * 32767);
        this.energy += v * v;
        if (this.filled === MIC_CHUNK) {
          const samples = this.chunk;
          this.port.postMessage({ type: 'mic', samples, level: Math.sqrt(this.energy / MIC_CHUNK) }, [samples.buffer]);
          this.chunk = new Int16Array(MIC_CHUNK);
          this.filled = 0;
          this.energy = 0;
        }
      });
      return true;
    }
  }
  registerProcessor('presence-mic-capture', MicCapture);
}
