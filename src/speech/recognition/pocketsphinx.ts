/**
 * Debian's pocketsphinx (CMU Sphinx, `pocketsphinx` + `pocketsphinx-en-us`): the recogniser a fresh
 * machine and CI have without any set-up. Its accuracy is poor (see bench/README.md), so it is the
 * zero-set-up fallback, never the recommended engine. English only.
 *
 * Each turn runs `pocketsphinx_continuous` as a child process on the turn's WAV (a temporary file:
 * Node's stdio pipes are sockets, which the decoder cannot open as /dev/stdin): the
 * decoder is off the event loop by construction, a crash takes nothing else down, and loading the
 * model costs ~0.2 s, small beside decoding (~0.5× real time). At most `concurrency` decoders run
 * at once per node (default: one per core); further turns wait in order.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { encodeWav } from '../audio.js';
import { RecognitionError } from './errors.js';
import { Gate } from './gate.js';
import { RECOGNITION_SAMPLE_RATE, type RecognitionOptions, type Recognizer, type Transcript } from './types.js';

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

  constructor(private readonly binary = POCKETSPHINX_BINARY, concurrency = 2) {
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
        const text = Buffer.concat(out).toString().split('\n').map((l) => l.trim()).filter(Boolean).join(' ');
        resolve({ text, language: 'en' });
      });
    });
  }

  async close(): Promise<void> {}
}
