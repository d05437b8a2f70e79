/**
 * Local models through sherpa-onnx (`sherpa-onnx-node`, Apache-2.0): Whisper, Moonshine, SenseVoice
 * and Zipformer transducers (streaming or not), from a model folder as sherpa-onnx publishes them.
 *
 * Model sources, first that applies:
 *   STT_MODEL_DIR   a model folder (e.g. sherpa-onnx-whisper-tiny, sherpa-onnx-moonshine-tiny-en-int8)
 *   STT_DOWNLOAD=1  fetch STT_DOWNLOAD_MODEL once into DATA_DIR/models/stt (needs internet)
 *
 * The model runs in a child process (sherpa-host.mjs): sherpa-onnx aborts its process on a broken
 * model file, and a turn's decoding is a synchronous native call that would stall every session on
 * the event loop. Turns are decoded one after another by that process, with all cores' threads.
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RecognitionError } from './errors.js';
import { isoLanguage } from './languages.js';
import type { RecognitionOptions, RecognitionStream, Recognizer, Transcript } from './types.js';

export type SherpaModelKind = 'whisper' | 'moonshine' | 'sense-voice' | 'transducer' | 'streaming-transducer';
export const SHERPA_MODEL_KINDS: SherpaModelKind[] = ['whisper', 'moonshine', 'sense-voice', 'transducer', 'streaming-transducer'];
export const SHERPA_DEFAULT_DOWNLOAD = 'sherpa-onnx-whisper-tiny';
export const SHERPA_DOWNLOAD_BASE = 'https://github.com/k2-fsa/sherpa-onnx/releases/download/asr-models';

export interface SherpaModel {
  kind: SherpaModelKind;
  /** The recogniser configuration sherpa-onnx-node takes. */
  config: Record<string, unknown>;
}

/** Reads a model folder and says which model it holds, or why it holds none. */
export function describeModelFolder(dir: string, wanted?: SherpaModelKind, threads = 1): SherpaModel {
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory())
    throw new RecognitionError(`the speech recognition model folder ${dir} does not exist`, 'sherpa-onnx');
  const files = fs.readdirSync(dir);
  const onnx = files.filter((f) => f.endsWith('.onnx'));
  // int8 models are 4× smaller and about as accurate; prefer them where both are present.
  const pick = (test: (f: string) => boolean) => {
    const found = onnx.filter(test).sort((a, b) => Number(b.includes('int8')) - Number(a.includes('int8')));
    return found[0] ? path.join(dir, found[0]) : undefined;
  };
  const tokensFile = files.find((f) => f === 'tokens.txt') ?? files.find((f) => f.endsWith('tokens.txt'));
  if (!tokensFile) throw new RecognitionError(`no tokens.txt in the speech recognition model folder ${dir}`, 'sherpa-onnx');
  const tokens = path.join(dir, tokensFile);
  const encoder = pick((f) => /encoder/.test(f));
  const decoder = pick((f) => /decoder/.test(f) && !/cached/.test(f));
  const joiner = pick((f) => /joiner/.test(f));
  const moonshine = {
    preprocessor: pick((f) => f.startsWith('preprocess')),
    encoder: pick((f) => f.startsWith('encode')),
    uncachedDecoder: pick((f) => f.startsWith('uncached_decode')),
    cachedDecoder: pick((f) => f.startsWith('cached_decode')),
  };
  const single = pick((f) => /^model(\.int8)?\.onnx$/.test(f));

  let kind = wanted;
  if (!kind) {
    if (Object.values(moonshine).every(Boolean)) kind = 'moonshine';
    else if (encoder && decoder && joiner) kind = /streaming/i.test(path.basename(dir)) ? 'streaming-transducer' : 'transducer';
    else if (encoder && decoder) kind = 'whisper';
    else if (single) kind = 'sense-voice';
    else
      throw new RecognitionError(
        `the folder ${dir} holds no model sherpa-onnx runs (Whisper, Moonshine, SenseVoice or Zipformer transducer files)`,
        'sherpa-onnx',
      );
  }
  const need = (files: Record<string, string | undefined>) => {
    const missing = Object.entries(files)
      .filter(([, v]) => !v)
      .map(([k]) => k);
    if (missing.length) throw new RecognitionError(`the ${kind} model in ${dir} lacks its ${missing.join(', ')} file`, 'sherpa-onnx');
    return files as Record<string, string>;
  };
  const common = { tokens, numThreads: threads, provider: 'cpu', debug: 0 };
  const featConfig = { sampleRate: 16000, featureDim: 80 };
  switch (kind) {
    case 'whisper':
      return {
        kind,
        config: { featConfig, modelConfig: { ...common, whisper: { ...need({ encoder, decoder }), language: '', task: 'transcribe', tailPaddings: -1 } } },
      };
    case 'moonshine':
      return { kind, config: { featConfig, modelConfig: { ...common, moonshine: need(moonshine) } } };
    case 'sense-voice':
      return {
        kind,
        config: { featConfig, modelConfig: { ...common, senseVoice: { model: need({ model: single }).model, language: '', useInverseTextNormalization: 1 } } },
      };
    case 'transducer':
      return { kind, config: { featConfig, modelConfig: { ...common, transducer: need({ encoder, decoder, joiner }) } } };
    case 'streaming-transducer':
      return {
        kind,
        config: { featConfig, modelConfig: { ...common, transducer: need({ encoder, decoder, joiner }) }, decodingMethod: 'greedy_search', enableEndpoint: 0 },
      };
  }
}

/**
 * Downloads a sherpa-onnx model archive once into `cacheDir/<name>` and answers its folder; later
 * starts use the copy (a marker file says it arrived whole).
 */
export async function downloadSherpaModel(cacheDir: string, name: string, baseUrl = SHERPA_DOWNLOAD_BASE): Promise<string> {
  const target = path.join(cacheDir, name);
  const marker = path.join(target, '.complete');
  if (fs.existsSync(marker)) return target;
  fs.mkdirSync(cacheDir, { recursive: true });
  const work = fs.mkdtempSync(path.join(cacheDir, '.download-'));
  try {
    const url = `${baseUrl.replace(/\/+$/, '')}/${encodeURIComponent(name)}.tar.bz2`;
    const response = await fetch(url, { redirect: 'follow' });
    if (!response.ok || !response.body)
      throw new RecognitionError(`downloading the speech recognition model ${name} failed: HTTP ${response.status}`, 'sherpa-onnx');
    const archive = path.join(work, 'model.tar.bz2');
    fs.writeFileSync(archive, Buffer.from(await response.arrayBuffer()));
    await run('tar', ['-xjf', archive, '-C', work]);
    const unpacked = fs.readdirSync(work).find((f) => f !== 'model.tar.bz2' && fs.statSync(path.join(work, f)).isDirectory());
    if (!unpacked) throw new RecognitionError(`the archive of ${name} holds no model folder`, 'sherpa-onnx');
    fs.rmSync(target, { recursive: true, force: true });
    fs.renameSync(path.join(work, unpacked), target);
    fs.writeFileSync(marker, new Date().toISOString());
    return target;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

function run(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (b: Buffer) => (err += b.toString()).length > 2000 && (err = err.slice(-2000)));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new RecognitionError(`${command} failed: ${err.trim() || `exit ${code}`}`, 'sherpa-onnx'))));
  });
}

interface Job {
  id: number;
  resolve: (t: { text: string; lang: string }) => void;
  reject: (e: Error) => void;
}

/** Live turns one model process decodes at once; more are recognised whole (`stream` answers undefined). */
export const SHERPA_MAX_LIVE_TURNS = 16;

export class SherpaRecognizer implements Recognizer {
  readonly name = 'sherpa-onnx';
  private child: ChildProcess | undefined;
  private readonly jobs = new Map<number, Job>();
  /** Live turns' partial-text listeners, by job id. */
  private readonly live = new Map<number, RecognitionStream>();
  private nextId = 1;
  private closed = false;

  private constructor(
    readonly model: SherpaModel,
    readonly folder: string,
    /** Tests only: a module with sherpa-onnx-node's classes, loaded in the model process instead. */
    private readonly module?: string,
  ) {}

  /** Starts the model process and waits until the model loaded (or says why it did not). */
  static async load(folder: string, kind?: SherpaModelKind, threads = Math.min(4, os.availableParallelism()), module?: string): Promise<SherpaRecognizer> {
    const model = describeModelFolder(path.resolve(folder), kind, threads);
    const recognizer = new SherpaRecognizer(model, path.resolve(folder), module);
    await recognizer.start();
    return recognizer;
  }

  /**
   * A streaming transducer decodes the turn as the visitor speaks and says the words so far
   * (`onPartial`): the live caption, turn-taking's words, the answer prepared ahead. Other kinds
   * are recognised whole; so is a turn while the model process is down or has its most live turns.
   */
  stream(options: RecognitionOptions): RecognitionStream | undefined {
    if (this.model.kind !== 'streaming-transducer' || this.closed || !this.child || this.live.size >= SHERPA_MAX_LIVE_TURNS) return undefined;
    const child = this.child;
    const id = this.nextId++;
    let done = false;
    const end = () => {
      done = true;
      this.live.delete(id);
    };
    const stream: RecognitionStream = {
      push: (pcm) => {
        if (done || this.child !== child) return;
        const samples = new Float32Array(pcm.length);
        for (let i = 0; i < pcm.length; i++) samples[i] = pcm[i] / 32768;
        child.send({ type: 'audio', id, samples });
      },
      finish: async () => {
        if (done) throw new RecognitionError('the live turn was already finished or dropped', 'sherpa-onnx');
        if (this.child !== child) {
          end();
          throw new RecognitionError('the sherpa-onnx model process stopped during the turn', 'sherpa-onnx');
        }
        const result = new Promise<{ text: string; lang: string }>((resolve, reject) => this.jobs.set(id, { id, resolve, reject }));
        child.send({ type: 'finish', id });
        try {
          return { text: cleanText((await result).text) };
        } finally {
          end();
        }
      },
      abort: () => {
        if (done) return;
        end();
        this.jobs.delete(id);
        if (this.child === child) child.send({ type: 'abort', id });
      },
    };
    this.live.set(id, stream);
    child.send({ type: 'open', id, language: options.language });
    return stream;
  }

  private start(): Promise<void> {
    const child = fork(new URL('./sherpa-host.mjs', import.meta.url), [], {
      serialization: 'advanced',
      execArgv: [],
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    this.child = child;
    let stderr = '';
    child.stderr!.on('data', (b: Buffer) => {
      stderr = (stderr + b.toString()).slice(-4000);
    });
    return new Promise((resolve, reject) => {
      let ready = false;
      child.on('message', (message: { type: string; id?: number; text?: string; lang?: string; message?: string }) => {
        if (message.type === 'ready') {
          ready = true;
          resolve();
        } else if (message.type === 'partial' && message.id) {
          const text = cleanText(message.text ?? '');
          if (text) this.live.get(message.id)?.onPartial?.(text);
        } else if (message.type === 'result' && message.id) {
          const job = this.jobs.get(message.id);
          this.jobs.delete(message.id);
          job?.resolve({ text: message.text ?? '', lang: message.lang ?? '' });
        } else if (message.type === 'failed') {
          const error = new RecognitionError(`sherpa-onnx: ${message.message}`, 'sherpa-onnx');
          if (!ready) return reject(error);
          const job = message.id ? this.jobs.get(message.id) : undefined;
          if (job && message.id) this.jobs.delete(message.id);
          job?.reject(error);
        }
      });
      child.on('exit', (code, signal) => {
        if (this.child === child) this.child = undefined;
        const why = lastUsefulLine(stderr) ?? `exit ${signal ?? code}`;
        const error = new RecognitionError(
          ready ? `the sherpa-onnx model process stopped (${why})` : `the speech recognition model in ${this.folder} could not be loaded: ${why}`,
          'sherpa-onnx',
        );
        for (const job of this.jobs.values()) job.reject(error);
        this.jobs.clear();
        this.live.clear();
        if (!ready) reject(error);
      });
      child.send({ type: 'load', config: this.model.config, kind: this.model.kind, ...(this.module ? { module: this.module } : {}) });
    });
  }

  async transcribe(pcm: Int16Array, options: RecognitionOptions): Promise<Transcript> {
    if (this.closed) throw new RecognitionError('the recogniser is closed', 'sherpa-onnx');
    if (!this.child) await this.start(); // the model process died on an earlier turn: start it again
    const samples = new Float32Array(pcm.length);
    for (let i = 0; i < pcm.length; i++) samples[i] = pcm[i] / 32768;
    const id = this.nextId++;
    const result = await new Promise<{ text: string; lang: string }>((resolve, reject) => {
      this.jobs.set(id, { id, resolve, reject });
      // A decode cannot be stopped half-way; an aborted turn's result is dropped.
      options.signal?.addEventListener(
        'abort',
        () => {
          if (this.jobs.delete(id)) reject(options.signal!.reason ?? new Error('aborted'));
        },
        { once: true },
      );
      this.child!.send({ type: 'transcribe', id, samples, language: options.language });
    });
    // SenseVoice says "<|en|>", Whisper "en".
    const language = isoLanguage(result.lang.replace(/[<|>]/g, '')) ?? (this.model.kind === 'moonshine' ? 'en' : undefined);
    return { text: cleanText(result.text), ...(language ? { language } : {}) };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.child?.kill();
    this.child = undefined;
  }
}

function cleanText(text: string): string {
  const clean = text
    .replace(/<\|[^|]*\|>/g, '')
    .replace(/\s+/g, ' ')
    .trim();
  // The English streaming zipformers answer in capitals: the caption and the brain get plain case.
  return /\p{Lu}/u.test(clean) && !/\p{Ll}/u.test(clean) ? clean.toLowerCase() : clean;
}

function lastUsefulLine(stderr: string): string | undefined {
  const lines = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const what = lines.find((l) => l.startsWith('what():'));
  return (what ?? lines[lines.length - 1])?.replace(/^what\(\):\s*/, '');
}
