/**
 * Debian's pocketsphinx (CMU Sphinx, `pocketsphinx` + `pocketsphinx-en-us`): the recogniser a fresh
 * machine and CI have without any set-up. Its accuracy is poor (see bench/README.md), so it is the
 * zero-set-up fallback, never the recommended engine. English only.
 *
 * Each turn runs `pocketsphinx_continuous` as a child process: the decoder is off the event loop
 * by construction and a crash takes nothing else down. Loading the model costs ~0.4 s, so a live
 * turn gets a decoder started ahead, its model already loaded (`stream`).
 *
 * Live (`stream`): the decoder starts when the visitor starts speaking and hears the audio as it
 * arrives, so at the end of the turn only the last fraction of a second is left to decode; its own
 * endpointer prints each phrase as the visitor pauses (at once when the listener tells it of the
 * pause), which the listener gets as partial text, and closed phrases are settled words. The
 * audio reaches it through `cat` and a real pipe: Node's stdio pipes are sockets, which the decoder
 * cannot open as /dev/stdin. Whole (`transcribe`): the turn's WAV from a temporary file, for
 * speculation and when every live decoder is busy. At most `concurrency` decoders run at once per
 * node (default: one per core); a live one holds its slot for the turn, whole turns wait in order.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { encodeWav } from '../audio.js';
import { RecognitionError } from './errors.js';
import { Gate } from '../../core/gate.js';
import { RECOGNITION_SAMPLE_RATE, type RecognitionOptions, type RecognitionStream, type Recognizer, type Transcript } from './types.js';

export const POCKETSPHINX_BINARY = 'pocketsphinx_continuous';
/** A turn is at most 60 s of audio; at 0.5× real time that is 30 s of decoding. */
const TIMEOUT_MS = 90_000;

/** Why pocketsphinx cannot run here, or undefined when it can. */
export function pocketsphinxMissing(binary = POCKETSPHINX_BINARY): string | undefined {
  const probe = spawnSync(binary, ['-h'], { stdio: 'ignore', timeout: 10_000 });
  if (probe.error) return `${binary} is not installed (Debian: apt-get install pocketsphinx pocketsphinx-en-us)`;
  return undefined;
}

export class PocketsphinxRecognizer implements Recognizer {
  readonly name = 'pocketsphinx';
  private readonly gate: Gate;
  /** A live decoder with its model loaded, waiting for the next turn (see `stream`). */
  private spare?: LivePocketsphinx;
  private spareTimer?: NodeJS.Timeout;

  constructor(
    private readonly binary = POCKETSPHINX_BINARY,
    concurrency = 2,
    /** How long a decoder started ahead waits for a turn; 0 starts none (each turn loads its own). */
    private readonly spareIdleMs = SPARE_IDLE_MS,
  ) {
    this.gate = new Gate(concurrency);
  }

  async transcribe(pcm: Int16Array, options: RecognitionOptions): Promise<Transcript> {
    return this.gate.run(() => this.decode(pcm, options.signal), options.signal);
  }

  private async decode(pcm: Int16Array, signal?: AbortSignal): Promise<Transcript> {
    const dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'presence-sphinx-'));
    const file = path.join(dir, 'turn.wav');
    try {
      await fs.promises.writeFile(file, encodeWav(pcm, RECOGNITION_SAMPLE_RATE));
      return await this.run(file, signal);
    } finally {
      await fs.promises.rm(dir, { recursive: true, force: true });
    }
  }

  private run(file: string, signal?: AbortSignal): Promise<Transcript> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason ?? new Error('aborted'));
      const child = spawn(this.binary, ['-infile', file, '-logfn', '/dev/null'], { stdio: ['ignore', 'pipe', 'pipe'] });
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      const timer = setTimeout(() => child.kill('SIGKILL'), TIMEOUT_MS);
      const onAbort = () => child.kill('SIGKILL');
      signal?.addEventListener('abort', onAbort, { once: true });
      child.stdout.on('data', (b: Buffer) => out.push(b));
      child.stderr.on('data', (b: Buffer) => err.length < 64 && err.push(b));
      child.on('error', (error) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        reject(new RecognitionError(`pocketsphinx could not start: ${error.message}`));
      });
      child.on('close', (code, killedBy) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        if (signal?.aborted) return reject(signal.reason ?? new Error('aborted'));
        if (code !== 0) {
          const detail = Buffer.concat(err).toString().trim().split('\n').slice(-2).join(' ');
          return reject(new RecognitionError(`pocketsphinx failed (${killedBy ?? `exit ${code}`})${detail ? `: ${detail}` : ''}`));
        }
        // One line per utterance the decoder's own endpointer found.
        const text = Buffer.concat(out)
          .toString()
          .split('\n')
          .map((l) => l.trim())
          .filter(Boolean)
          .join(' ');
        resolve({ text, language: 'en' });
      });
    });
  }

  /**
   * A live decoder for one turn. Loading the model takes ~0.4 s, longer than a short answer ("yes",
   * a card's name) lasts, so a turn that had to start one would have its words after the turn
   * ended. The decoder handed out is the spare started after the previous turn's, when it is
   * there, and a new spare is started for the next turn; a spare nobody takes is stopped after
   * SPARE_IDLE_MS, so an idle node holds no decoder (one costs ~100 MB).
   */
  stream(options: RecognitionOptions): RecognitionStream | undefined {
    if (options.signal?.aborted) return undefined;
    const release = this.gate.tryEnter();
    if (!release) return undefined;
    const spare = this.takeSpare();
    const decoder = spare ?? new LivePocketsphinx(this.binary);
    decoder.start(release);
    this.warmSpare();
    return decoder;
  }

  async close(): Promise<void> {
    this.takeSpare()?.abort();
  }

  private takeSpare(): LivePocketsphinx | undefined {
    const spare = this.spare;
    this.spare = undefined;
    clearTimeout(this.spareTimer);
    if (spare && !spare.alive) return undefined;
    return spare;
  }

  private warmSpare(): void {
    if (this.spare || this.spareIdleMs <= 0) return;
    const spare = new LivePocketsphinx(this.binary);
    this.spare = spare;
    this.spareTimer = setTimeout(() => {
      if (this.spare === spare) this.takeSpare()?.abort();
    }, this.spareIdleMs);
    this.spareTimer.unref();
  }
}

/** How long a started decoder waits for a turn before it is stopped (a conversation's next turn usually comes well within it). */
const SPARE_IDLE_MS = 30_000;

/**
 * Silence (10 ms frames) after which the live decoder closes a phrase and prints it: 250 ms instead
 * of its default 500, so the phrase's text is final before the listener's end of turn (≥ 350 ms)
 * and a complete question can end the turn at 350 ms. See bench/README.md for what it bought.
 */
const LIVE_PHRASE_END_FRAMES = 25;

/**
 * Audio written after the listener hears a pause (`pause`): the decoder reads its input in blocks
 * of 2,048 samples (128 ms) and closes a phrase after 250 ms of what it hears as silence, so without
 * it a phrase's words came 250–380 ms into the pause plus the decode, after a 350 ms end of turn.
 * 400 ms fills the block it is waiting on and its silence. It is near-digital silence (±2 of 32,768):
 * copies of the visitor's own quiet audio were tried and kept the decoder hearing speech for
 * seconds (docs/decisions.md).
 */
const PAUSE_PADDING_SAMPLES = 6400;

/**
 * One live decoder for one visitor turn (see the file's header). It is spawned before it has a
 * turn (the recogniser's spare) and `start`ed when it gets one.
 */
class LivePocketsphinx implements RecognitionStream {
  onPartial?: (text: string) => void;
  private readonly child: ChildProcess;
  private readonly phrases: string[] = [];
  private readonly done: Promise<Transcript>;
  private pending = '';
  private ended = false;
  private exited = false;
  private release: () => void = () => {};
  private timer?: NodeJS.Timeout;

  constructor(binary: string) {
    // `exec` makes the decoder the shell's last child; `detached` puts cat and it in one process
    // group, so abort and the timeout kill both.
    const command = `cat | exec ${shellQuote(binary)} -infile /dev/stdin -logfn /dev/null -vad_postspeech ${LIVE_PHRASE_END_FRAMES}`;
    this.child = spawn('sh', ['-c', command], { stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    const err: Buffer[] = [];
    this.child.stderr!.on('data', (b: Buffer) => err.length < 64 && err.push(b));
    this.child.stdout!.on('data', (b: Buffer) => this.heard(b.toString()));
    this.child.stdin!.on('error', () => {}); // a decoder that died: reported by 'close' below
    this.done = new Promise<Transcript>((resolve, reject) => {
      this.child.on('error', (error) => reject(new RecognitionError(`pocketsphinx could not start: ${error.message}`)));
      this.child.on('close', (code, killedBy) => {
        this.exited = true;
        clearTimeout(this.timer);
        this.release();
        if (this.pending.trim()) this.phrases.push(this.pending.trim());
        if (code === 0) return resolve({ text: this.phrases.join(' '), language: 'en' });
        const detail = Buffer.concat(err).toString().trim().split('\n').slice(-2).join(' ');
        if (code === 127) return reject(new RecognitionError(`pocketsphinx could not start: ${detail || `${binary} not found`}`));
        reject(new RecognitionError(`pocketsphinx failed (${killedBy ?? `exit ${code}`})${detail ? `: ${detail}` : ''}`));
      });
    });
    this.done.catch(() => {});
    // A spare must not keep the process alive; a decoder with a turn does, until it exits.
    this.holdProcess(false);
  }

  /** Still running: a spare that died (a missing binary, a crash) is not handed out. */
  get alive(): boolean {
    return !this.exited && !this.ended;
  }

  /** The decoder has its turn: it holds a slot until it exits. */
  start(release: () => void): void {
    if (this.exited) {
      release();
      return;
    }
    this.release = release; // the gate's release is idempotent
    this.holdProcess(true);
    // A visitor who stops sending without finish() (a dropped page) must not hold a decoder.
    this.timer = setTimeout(() => this.kill(), TIMEOUT_MS);
    this.timer.unref();
  }

  push(pcm: Int16Array): void {
    if (this.ended || !this.child.stdin!.writable) return;
    this.write(pcm);
  }

  /** The visitor paused: pad the pause so the decoder closes the phrase now (PAUSE_PADDING_SAMPLES). */
  pause(): void {
    if (this.ended || !this.child.stdin!.writable) return;
    const padding = new Int16Array(PAUSE_PADDING_SAMPLES);
    for (let i = 0; i < padding.length; i++) padding[i] = Math.round((Math.random() - 0.5) * 4);
    this.write(padding);
  }

  /** Closed phrases do not change; words still being decoded (`pending`) make it unsettled. */
  settled(): Transcript | undefined {
    if (!this.phrases.length || this.pending.trim()) return undefined;
    return { text: this.phrases.join(' '), language: 'en' };
  }

  finish(): Promise<Transcript> {
    if (!this.ended) {
      this.ended = true;
      this.child.stdin!.end();
    }
    return this.done;
  }

  abort(): void {
    this.ended = true;
    this.kill();
  }

  private holdProcess(hold: boolean): void {
    for (const handle of [this.child, this.child.stdin, this.child.stdout, this.child.stderr] as Array<{ ref(): void; unref(): void } | null>) {
      if (hold) handle?.ref();
      else handle?.unref();
    }
  }

  private write(pcm: Int16Array): void {
    this.child.stdin!.write(Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength));
  }

  /** The decoder prints one line per phrase its endpointer closes. */
  private heard(chunk: string): void {
    this.pending += chunk;
    const lines = this.pending.split('\n');
    this.pending = lines.pop()!;
    const phrases = lines.map((l) => l.trim()).filter(Boolean);
    if (!phrases.length) return;
    this.phrases.push(...phrases);
    this.onPartial?.(this.phrases.join(' '));
  }

  private kill(): void {
    try {
      process.kill(-this.child.pid!, 'SIGKILL');
    } catch {
      this.child.kill('SIGKILL');
    }
  }
}

function shellQuote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}
