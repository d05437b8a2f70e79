/**
 * Kokoro-82M, run locally with kokoro-js (transformers.js over onnxruntime-node), or through a
 * Kokoro-FastAPI server.
 *
 * Local model sources, first that applies:
 *   KOKORO_MODEL_DIR  a folder laid out like onnx-community/Kokoro-82M-v1.0-ONNX:
 *                     config.json, tokenizer.json, tokenizer_config.json, onnx/model(_quantized).onnx
 *   KOKORO_DOWNLOAD=1 fetch that repository once into DATA_DIR/models (needs internet)
 * Voice style vectors (voices/<id>.bin, [510,1,256] float32) ship inside kokoro-js.
 *
 * kokoro-js phonemises English only (its bundled eSpeak data is en-us/en-gb), so the local engine
 * speaks the American and British (a_, b_) voices; other languages go to KOKORO_URL when set, else to the offline engine.
 */
import fs from 'node:fs';
import path from 'node:path';
import { SpeechError, throwIfAborted } from '../errors.js';
import { wordsOf } from '../sentences.js';
import { floatToInt16 } from '../audio.js';
import { estimateWordTimings, voicedSpan, type EngineAudio, type EngineRequest, type SpeechEngine } from './types.js';
import { pcmFromBytes, providerFetch, readBody } from './http.js';

export const KOKORO_RATE = 24000;
export const KOKORO_REPO = 'onnx-community/Kokoro-82M-v1.0-ONNX';

type Dtype = 'fp32' | 'fp16' | 'q8' | 'q4' | 'q4f16';
const DTYPE_FILES: Array<[Dtype, string]> = [
  ['q8', 'model_quantized.onnx'],
  ['fp32', 'model.onnx'],
  ['fp16', 'model_fp16.onnx'],
  ['q4', 'model_q4.onnx'],
  ['q4f16', 'model_q4f16.onnx'],
];

export interface KokoroSource {
  kind: 'dir' | 'download';
  /** Folder of the model (dir) or cache folder (download). */
  location: string;
  dtype?: Dtype;
}

/** Which dtype a model folder holds (the fastest on CPU first), or the one asked for. */
export function pickDtype(dir: string, wanted?: string): Dtype {
  if (wanted) {
    const entry = DTYPE_FILES.find(([d]) => d === wanted);
    if (!entry) throw new Error(`KOKORO_DTYPE must be one of ${DTYPE_FILES.map(([d]) => d).join(', ')}`);
    return entry[0];
  }
  for (const [dtype, file] of DTYPE_FILES) if (fs.existsSync(path.join(dir, 'onnx', file))) return dtype;
  throw new Error(`no onnx/model*.onnx in ${dir}`);
}

/** Voices the local engine speaks (kokoro-js phonemises English only). */
export function kokoroLocalSpeaks(voiceId: string): boolean {
  return /^[ab][fm]_/.test(voiceId);
}

type KokoroTTS = import('kokoro-js').KokoroTTS;

export class KokoroLocalEngine implements SpeechEngine {
  readonly name = 'kokoro';
  private constructor(
    private readonly tts: KokoroTTS,
    private readonly lib: typeof import('kokoro-js'),
  ) {}

  static async load(source: KokoroSource): Promise<KokoroLocalEngine> {
    const lib = await import('kokoro-js');
    const { env } = await import('@huggingface/transformers');
    let modelId: string;
    let dtype: Dtype;
    if (source.kind === 'dir') {
      const dir = path.resolve(source.location);
      for (const f of ['config.json', 'tokenizer.json', 'tokenizer_config.json']) {
        if (!fs.existsSync(path.join(dir, f))) throw new Error(`${f} is missing from the Kokoro model folder`);
      }
      dtype = pickDtype(dir, source.dtype);
      env.allowRemoteModels = false;
      env.allowLocalModels = true;
      env.localModelPath = path.dirname(dir) + path.sep;
      modelId = path.basename(dir);
    } else {
      fs.mkdirSync(source.location, { recursive: true });
      env.allowRemoteModels = true;
      env.cacheDir = source.location;
      modelId = KOKORO_REPO;
      dtype = source.dtype ?? 'q8';
    }
    const tts = await lib.KokoroTTS.from_pretrained(modelId, { dtype, device: 'cpu' });
    // Warm the phonemiser (eSpeak in WASM, per accent) and the inference session now, so the
    // first visitor's first sentence does not pay for it.
    for (const voice of ['af_heart', 'bf_emma']) for await (const _ of tts.stream(closedSplitter(lib, 'Hi.'), { voice: voice as never }));
    return new KokoroLocalEngine(tts, lib);
  }

  async *synthesize(request: EngineRequest): AsyncIterable<EngineAudio> {
    throwIfAborted(request.signal);
    if (!kokoroLocalSpeaks(request.voiceId)) throw new SpeechError('unknown_voice', `the local Kokoro engine does not speak ${request.voiceId}`, 'kokoro');
    // kokoro-js's stream() never finishes the last sentence of a plain string: give it a
    // TextSplitterStream and close it, so it yields every sentence and then ends.
    try {
      const stream = this.tts.stream(closedSplitter(this.lib, request.text), { voice: request.voiceId as never });
      let offset = 0;
      for await (const part of stream) {
        throwIfAborted(request.signal);
        const pcm = floatToInt16(part.audio.audio as Float32Array);
        const rate = part.audio.sampling_rate;
        const [a, b] = voicedSpan(pcm, rate);
        const words = wordsOf(part.text);
        const phonemeWords = part.phonemes.split(/\s+/).filter((w) => /[^\p{P}\s]/u.test(w));
        const weights = phonemeWords.length === words.length ? phonemeWords.map((w) => w.length) : undefined;
        const timings = estimateWordTimings(words, a, b, weights).map((w) => ({ ...w, start: w.start + offset, end: w.end + offset }));
        offset += pcm.length / rate;
        yield { pcm, sampleRate: rate, words: timings };
      }
    } catch (error) {
      if (error instanceof SpeechError) throw error;
      throw new SpeechError('engine_failed', `Kokoro inference failed: ${(error as Error).message}`, 'kokoro', undefined, { cause: error });
    }
  }

  async close(): Promise<void> {
    await (this.tts.model as unknown as { dispose?: () => Promise<void> }).dispose?.();
  }
}

function closedSplitter(lib: typeof import('kokoro-js'), text: string) {
  const splitter = new lib.TextSplitterStream();
  splitter.push(text);
  splitter.close();
  return splitter;
}

/** A Kokoro-FastAPI server: OpenAI-compatible POST /v1/audio/speech, raw 24 kHz s16le when response_format is pcm. */
export class KokoroRemoteEngine implements SpeechEngine {
  readonly name = 'kokoro-remote';
  constructor(
    private readonly baseUrl: string,
    private readonly timeoutMs = 10_000,
    private readonly apiKey?: string,
  ) {}

  async *synthesize(request: EngineRequest): AsyncIterable<EngineAudio> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.apiKey) headers.authorization = `Bearer ${this.apiKey}`;
    const response = await providerFetch(
      'kokoro',
      `${this.baseUrl.replace(/\/+$/, '')}/v1/audio/speech`,
      {
        method: 'POST',
        headers,
        body: JSON.stringify({ model: 'kokoro', input: request.text, voice: request.voiceId, response_format: 'pcm', stream: true, speed: 1 }),
      },
      request.signal,
      this.timeoutMs,
    );
    for await (const pcm of pcmFromBytes(readBody('kokoro', response, request.signal, this.timeoutMs))) {
      yield { pcm, sampleRate: KOKORO_RATE };
    }
  }
}
