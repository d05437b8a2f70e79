/**
 * AudioWorklet processor: a ring buffer addressed by absolute context frame. The main thread posts
 * PCM chunks with the AudioContext time their first sample is due; the worklet resamples them to
 * the context rate (linear, continuous across chunk boundaries) and writes them at those frames.
 * `process()` plays whatever is at the current frame (silence where nothing was written), so the
 * audio lands exactly on the page's one session-to-context mapping.
 */

// The microphone's processor lives in the same module (one addModule for both).
import './mic-worklet.js';

// Minimal AudioWorkletGlobalScope declarations (not part of TypeScript's DOM lib).
declare const sampleRate: number;
declare const currentFrame: number;
declare function registerProcessor(name: string, ctor: unknown): void;
declare class AudioWorkletProcessor {
  readonly port: MessagePort;
  constructor();
}

type Incoming =
  | { type: 'chunk'; start: number; rate: number; samples: Float32Array }
  | { type: 'clear'; from: number }
  | { type: 'hold'; from: number }
  | { type: 'release'; at: number }
  | { type: 'volume'; value: number };

const RING_SECONDS = 20;
const REPORT_EVERY = 2; // blocks (about 5 ms at 48 kHz)

class RingPlayer extends AudioWorkletProcessor {
  private readonly size = Math.ceil(sampleRate * RING_SECONDS);
  private readonly ring = new Float32Array(this.size);
  /** Absolute frame after the last written sample. */
  private dataEnd = 0;
  /** Continuity: where the previous chunk ended (fractional frame) and its last sample. */
  private lastEndFrame = -1;
  private lastSample = 0;
  private lastRate = 0;
  private blocks = 0;
  private energy = 0;
  private energyCount = 0;
  private late = 0;
  private volume = 1;
  /** Audio taken out at `hold` (written but not played yet), kept for `release`. */
  private held: Float32Array | null = null;

  constructor() {
    super();
    this.port.onmessage = (event: MessageEvent<Incoming>) => this.receive(event.data);
  }

  private receive(msg: Incoming): void {
    if (msg.type === 'chunk') this.write(msg.start, msg.rate, msg.samples);
    else if (msg.type === 'clear') {
      this.held = null;
      this.clear(msg.from);
    } else if (msg.type === 'hold') this.hold(msg.from);
    else if (msg.type === 'release') this.release(msg.at);
    else if (msg.type === 'volume') this.volume = msg.value;
  }

  private write(start: number, rate: number, src: Float32Array): void {
    const n = src.length;
    if (n === 0) return;
    const ratio = sampleRate / rate; // output frames per source sample
    let startFrame = start * sampleRate;
    // A chunk that starts where the previous one ended (within 2 output frames) continues it.
    const continuous = this.lastEndFrame >= 0 && rate === this.lastRate && Math.abs(startFrame - this.lastEndFrame) < 2 + ratio * 0.5;
    if (continuous) startFrame = this.lastEndFrame;
    const first = Math.max(Math.ceil(startFrame - (continuous ? ratio : 0)), currentFrame);
    const last = Math.floor(startFrame + (n - 1) * ratio);
    if (Math.floor(startFrame + n * ratio) <= currentFrame) this.late++;
    const limit = currentFrame + this.size - 256;
    for (let f = first; f <= last && f < limit; f++) {
      const p = (f - startFrame) / ratio;
      const i = Math.floor(p);
      const frac = p - i;
      const a = i < 0 ? this.lastSample : src[i];
      const b = i + 1 < n ? src[i + 1] : src[n - 1];
      this.ring[f % this.size] = a + (b - a) * frac;
    }
    this.lastEndFrame = startFrame + n * ratio;
    this.lastSample = src[n - 1];
    this.lastRate = rate;
    this.dataEnd = Math.max(this.dataEnd, Math.min(last + 1, limit));
  }

  private clear(from: number): void {
    const start = Math.max(Math.ceil(from * sampleRate), currentFrame);
    for (let f = start; f < this.dataEnd; f++) this.ring[f % this.size] = 0;
    if (this.dataEnd > start) this.dataEnd = start;
    this.lastEndFrame = -1;
    // Fade the few frames right before the cut to avoid a click.
    const fade = Math.min(64, start - currentFrame);
    for (let k = 1; k <= fade; k++) this.ring[(start - k) % this.size] *= (k - 1) / fade;
  }

  /** Takes what is written from context time `from` on out of the ring (it stops being heard) and keeps it. */
  private hold(from: number): void {
    const start = Math.max(Math.ceil(from * sampleRate), currentFrame);
    const length = Math.max(0, this.dataEnd - start);
    const held = new Float32Array(length);
    for (let k = 0; k < length; k++) held[k] = this.ring[(start + k) % this.size];
    this.held = held;
    this.clear(from);
  }

  /** Writes the kept audio back from context time `at` (faded in), continued by the chunks that follow. */
  private release(at: number): void {
    const held = this.held;
    this.held = null;
    const start = Math.max(Math.round(at * sampleRate), currentFrame);
    if (!held) return;
    const fade = Math.min(64, held.length);
    const limit = currentFrame + this.size - 256;
    for (let k = 0; k < held.length && start + k < limit; k++) this.ring[(start + k) % this.size] = held[k] * (k < fade ? k / fade : 1);
    this.lastEndFrame = start + held.length;
    this.lastSample = held.length ? held[held.length - 1] : 0;
    this.dataEnd = Math.max(this.dataEnd, Math.min(start + held.length, limit));
  }

  process(_inputs: Float32Array[][], outputs: Float32Array[][]): boolean {
    const out = outputs[0];
    const ch0 = out[0];
    const frames = ch0.length;
    const vol = this.volume;
    for (let i = 0; i < frames; i++) {
      const idx = (currentFrame + i) % this.size;
      const v = this.ring[idx];
      this.ring[idx] = 0;
      ch0[i] = v * vol;
      this.energy += v * v;
    }
    this.energyCount += frames;
    for (let c = 1; c < out.length; c++) out[c].set(ch0);
    if (++this.blocks % REPORT_EVERY === 0) {
      const end = currentFrame + frames;
      this.port.postMessage({
        type: 'pos',
        frame: end,
        rate: sampleRate,
        dataEnd: this.dataEnd,
        level: Math.sqrt(this.energy / Math.max(1, this.energyCount)),
        late: this.late,
      });
      this.energy = 0;
      this.energyCount = 0;
    }
    return true;
  }
}

registerProcessor('presence-ring-player', RingPlayer);
