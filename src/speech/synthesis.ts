/**
 * SpeechService: the one streaming synthesis interface of Presence.
 *
 *   for await (const piece of speech.synthesize({ text, provider, voiceId, sampleRate: 16000, signal })) {
 *     send(piece.pcm, piece.words);
 *   }
 *
 * Text may be a string or an AsyncIterable of pieces (LLM tokens). It is cut into sentences as it
 * arrives; the first sentence is synthesised and its audio yielded while the later ones are still
 * being written or synthesised (one sentence of look-ahead keeps the joins gap-free). Audio is
 * resampled with libsamplerate to the requested rate. Aborting the signal ends the iteration at
 * once (no error) and cancels the engines' work; any other failure throws SpeechError.
 */
import { AsyncQueue } from '../core/async-queue.js';
import path from 'node:path';
import type { SpeechConfig } from '../core/config.js';
import { VoiceCatalog, PREMIUM_PROVIDERS, PROVIDERS, type CatalogVoice } from './voices/catalog.js';
import { SpeechError, isAbort } from './errors.js';
import { SentenceSplitter } from './sentences.js';
import { Resampler, prewarmResamplers } from './resample.js';
import { concatInt16 } from './audio.js';
import { FliteEngine, fliteVoiceFor } from './engines/flite.js';
import { KokoroLocalEngine, KokoroRemoteEngine, kokoroLocalSpeaks, type KokoroSource } from './engines/kokoro.js';
import { CartesiaEngine, CartesiaWebSocketEngine } from './engines/cartesia.js';
import { ElevenLabsEngine, ElevenLabsWebSocketEngine } from './engines/elevenlabs.js';
import { InworldEngine } from './engines/inworld.js';
import type { EngineAudio, SpeechEngine, WordTiming } from './engines/types.js';
import type { SpeechPiece } from './piece.js';

export type { SpeechPiece } from './piece.js';
import { FAMILY, VoiceLists } from './voices/lists.js';

export interface SynthesisRequest {
  /** Plain text (expression tags already stripped), or its pieces as they are produced. */
  text: string | AsyncIterable<string>;
  /** One of PROVIDERS: kokoro, inworld, inworld-flash, elevenlabs, elevenlabs-flash, cartesia. */
  provider: string;
  voiceId: string;
  /** Base ISO 639-1 code; defaults to the voice's own language. */
  language?: string;
  /** Output rate in Hz (8000..48000), e.g. 16000 or 24000. */
  sampleRate: number;
  signal?: AbortSignal;
}

export interface SpeechLogger {
  info(obj: object | string, msg?: string): void;
  warn(obj: object | string, msg?: string): void;
  error(obj: object | string, msg?: string): void;
}

export type { SpeechConfig } from '../core/config.js';

interface Route {
  engine: SpeechEngine;
  voiceId: string;
  language: string;
}

export class SpeechService {
  readonly voices: VoiceCatalog;
  readonly log: SpeechLogger;
  readonly flite: FliteEngine;
  private kokoro: KokoroLocalEngine | undefined;
  private kokoroRemote: KokoroRemoteEngine | undefined;
  private premium = new Map<string, SpeechEngine>();
  private warned = new Set<string>();
  private readonly voiceLists: VoiceLists;
  private started: Promise<void> | undefined;

  constructor(
    readonly config: SpeechConfig,
    options: { voices?: VoiceCatalog; logger: SpeechLogger; fliteWorkers?: number },
  ) {
    this.voices = options.voices ?? new VoiceCatalog();
    this.log = options.logger;
    this.flite = new FliteEngine({ workers: options.fliteWorkers });
    this.voiceLists = new VoiceLists(config, this.voices, this.log);
    const p = config.providers;
    const t = config.timeoutMs;
    if (p.elevenlabs) {
      const Eleven = config.elevenlabsTransport === 'websocket' ? ElevenLabsWebSocketEngine : ElevenLabsEngine;
      this.premium.set('elevenlabs', new Eleven('elevenlabs', { ...p.elevenlabs, timeoutMs: t }));
      this.premium.set('elevenlabs-flash', new Eleven('elevenlabs-flash', { ...p.elevenlabs, timeoutMs: t }));
    }
    if (p.cartesia) {
      const options = { ...p.cartesia, timeoutMs: t };
      this.premium.set('cartesia', config.cartesiaTransport === 'websocket' ? new CartesiaWebSocketEngine(options) : new CartesiaEngine(options));
    }
    if (p.inworld) {
      this.premium.set('inworld', new InworldEngine('inworld', { ...p.inworld, timeoutMs: t }));
      this.premium.set('inworld-flash', new InworldEngine('inworld-flash', { ...p.inworld, timeoutMs: t }));
    }
    if (config.kokoroUrl) this.kokoroRemote = new KokoroRemoteEngine(config.kokoroUrl, t, config.kokoroApiKey);
  }

  /**
   * Loads the Kokoro model if one is configured (falling back to flite, loudly, if it fails), warms
   * the offline engine and says in one log line which engine speaks. Shared while it runs and kept
   * once it succeeds; a failed start is not kept, so the next call (synthesize(), /readyz) tries
   * again instead of failing every later request.
   */
  start(): Promise<void> {
    this.started ??= this.doStart().then(
      () => {
        this.ready = true;
      },
      (error: unknown) => {
        this.started = undefined;
        throw error;
      },
    );
    return this.started;
  }

  /**
   * A session is opening: makes sure the offline voice has a worker compiled before its first
   * sentence (the last one ends after ten idle minutes, and starting one takes about a second).
   */
  prewarm(): void {
    if (this.ready) this.flite.warm().catch(() => {}); // a failure shows again, and is reported, at the sentence
  }

  /** Whether the speech layer can voice text now: start() has succeeded (dictionary, WASM, resamplers loaded). */
  isReady(): boolean {
    return this.ready;
  }

  private ready = false;
  private announced = false;

  private async doStart(): Promise<void> {
    const warming = this.flite.warm();
    warming.catch(() => {}); // awaited below; a failure while Kokoro loads must not go unhandled
    const c = this.config;
    // What speaks is said once, not again on a retried start.
    const announce = !this.announced;
    this.announced = true;
    if (c.kokoroUrl) {
      if (announce) this.log.info({ engine: 'kokoro-remote' }, `speech: Kokoro voices are spoken by the Kokoro-FastAPI server at ${redactUrl(c.kokoroUrl)}`);
    } else {
      const source: KokoroSource | undefined = c.kokoroModelDir
        ? { kind: 'dir', location: c.kokoroModelDir, dtype: c.kokoroDtype as KokoroSource['dtype'] }
        : c.kokoroDownload
          ? { kind: 'download', location: path.join(c.dataDir, 'models'), dtype: c.kokoroDtype as KokoroSource['dtype'] }
          : undefined;
      if (!source) {
        if (announce && !this.kokoro)
          this.log.info(
            { engine: 'flite' },
            'speech: no Kokoro model (KOKORO_MODEL_DIR unset, KOKORO_DOWNLOAD not 1, KOKORO_URL unset); speaking with the offline flite engine',
          );
      } else if (!this.kokoro && announce) {
        const began = Date.now();
        try {
          this.kokoro = await KokoroLocalEngine.load(source);
          this.log.info(
            { engine: 'kokoro', ms: Date.now() - began },
            `speech: Kokoro model loaded from ${source.kind === 'dir' ? 'KOKORO_MODEL_DIR' : 'the download cache'}; English Kokoro voices speak with Kokoro, other languages with the offline flite engine`,
          );
        } catch (error) {
          this.log.error(
            { engine: 'flite', err: { message: (error as Error).message } },
            `speech: the Kokoro model could not be loaded (${(error as Error).message}); speaking with the offline flite engine`,
          );
        }
      }
    }
    for (const provider of PREMIUM_PROVIDERS) {
      if (!announce || !this.premium.has(provider)) continue;
      this.log.info({ provider }, `speech: ${provider} voices are spoken by ${provider}`);
    }
    // flite speaks at 16 kHz, Kokoro and the premium providers at 24 kHz; players ask for 16/24/48 kHz.
    await prewarmResamplers([
      [16000, 24000],
      [16000, 48000],
      [24000, 16000],
      [24000, 48000],
    ]);
    await warming;
    void this.refreshVoiceLists().catch(() => {});
  }

  /**
   * Switches the English Kokoro voices to a model folder fetched after start (src/speech/models),
   * without a restart: what is being spoken goes on with its engine, the next sentence uses Kokoro.
   * An operator's own Kokoro (KOKORO_URL, KOKORO_MODEL_DIR, KOKORO_DOWNLOAD) is never replaced.
   */
  async useKokoroModel(dir: string): Promise<void> {
    const c = this.config;
    if (c.kokoroUrl || c.kokoroModelDir || c.kokoroDownload || this.kokoro) return;
    const began = Date.now();
    const engine = await KokoroLocalEngine.load({ kind: 'dir', location: dir, dtype: c.kokoroDtype as KokoroSource['dtype'] });
    if (this.kokoro) return void (await engine.close());
    this.kokoro = engine;
    this.log.info(
      { engine: 'kokoro', ms: Date.now() - began },
      `speech: Kokoro model loaded from ${dir}; English Kokoro voices now speak with Kokoro, other languages with the offline flite engine`,
    );
  }

  /** Name of the engine that would speak this voice now: kokoro, kokoro-remote, flite, elevenlabs, ... */
  engineFor(provider: string, voiceId: string): string {
    return this.route(provider, voiceId, undefined).engine.name;
  }

  private route(provider: string, voiceId: string, language: string | undefined): Route {
    if (!(PROVIDERS as readonly string[]).includes(provider)) throw new SpeechError('unknown_provider', `unknown speech provider "${provider}"`, provider);
    const voice = this.voices.find(provider, voiceId);
    if (provider === 'kokoro') {
      if (!voice) throw new SpeechError('unknown_voice', `Kokoro has no voice "${voiceId}"`, provider);
      const lang = language ?? voice.language;
      if (this.kokoroRemote) return { engine: this.kokoroRemote, voiceId, language: lang };
      if (this.kokoro && kokoroLocalSpeaks(voiceId)) return { engine: this.kokoro, voiceId, language: lang };
      return this.offline(voice, lang);
    }
    const engine = this.premium.get(provider);
    const lang = language ?? voice?.language ?? 'en';
    if (engine) return { engine, voiceId, language: lang };
    const family = FAMILY[provider];
    if (!this.warned.has(family)) {
      this.warned.add(family);
      this.log.warn({ provider }, `speech: ${family} has no ${family.toUpperCase()}_API_KEY; its voices are spoken by the offline flite engine`);
    }
    return this.offline(voice ?? { voice_id: voiceId, gender: 'f', locale: 'en-US' }, lang);
  }

  private offline(voice: Pick<CatalogVoice, 'voice_id' | 'gender' | 'locale'>, language: string): Route {
    const { voice: fv, pitch } = fliteVoiceFor(voice);
    if (language !== 'en' && !this.warned.has(`lang:${language}`)) {
      this.warned.add(`lang:${language}`);
      this.log.warn(
        { language },
        `speech: the offline flite engine speaks English only; "${language}" text is read with English rules (configure Kokoro or a premium provider for ${language})`,
      );
    }
    return { engine: this.flite, voiceId: pitch ? `${fv}@${pitch}` : fv, language };
  }

  /** Streams speech for the text; see the file comment. */
  async *synthesize(request: SynthesisRequest): AsyncIterable<SpeechPiece> {
    const { sampleRate } = request;
    if (!Number.isInteger(sampleRate) || sampleRate < 8000 || sampleRate > 48000) {
      throw new SpeechError('bad_request', `sampleRate must be an integer between 8000 and 48000, got ${sampleRate}`);
    }
    // Warming up is not a condition for speaking: a failed start is logged (and retried by the next
    // request); the engines report their own errors if they really cannot speak.
    await this.start().catch((error) => this.log.warn({ err: { message: (error as Error)?.message } }, 'speech: warming up failed; synthesising anyway'));
    const route = this.route(request.provider, request.voiceId, request.language);
    const outer = request.signal;
    if (outer?.aborted) return;
    const controller = new AbortController();
    const onAbort = () => controller.abort();
    outer?.addEventListener('abort', onAbort, { once: true });
    const signal = controller.signal;
    const aborted = new Promise<'aborted'>((resolve) => signal.addEventListener('abort', () => resolve('aborted'), { once: true }));

    const sentences = new AsyncQueue<string>();
    const jobs = new AsyncQueue<AsyncQueue<EngineAudio>>();
    let resampler: Resampler | undefined;
    let inputSeconds = 0;

    // Text -> sentences.
    const readText = async () => {
      // Local engines return a piece only when it is fully synthesised: let them start on the first clause.
      const local = route.engine.name === 'flite' || route.engine.name === 'kokoro';
      const splitter = new SentenceSplitter({ firstClauseChars: local ? 12 : 0 });
      try {
        if (typeof request.text === 'string') {
          for (const s of splitter.push(request.text)) sentences.push(s);
        } else {
          for await (const piece of request.text) {
            if (signal.aborted) break;
            for (const s of splitter.push(piece)) sentences.push(s);
          }
        }
        for (const s of splitter.end()) sentences.push(s);
        sentences.close();
      } catch (error) {
        sentences.fail(error);
      }
    };

    // Sentences -> engine audio, at most one sentence ahead of the one being yielded.
    let played = 0;
    const advanced = new Signal();
    const schedule = async () => {
      let started = 0;
      try {
        for (;;) {
          const sentence = await sentences.next(aborted);
          if (sentence === undefined || signal.aborted) break;
          while (started - played >= 2 && !signal.aborted) await Promise.race([advanced.wait(), aborted]);
          if (signal.aborted) break;
          const out = new AsyncQueue<EngineAudio>();
          jobs.push(out);
          started++;
          void (async () => {
            try {
              for await (const audio of route.engine.synthesize({ text: sentence, voiceId: route.voiceId, language: route.language, signal })) {
                out.push(audio);
              }
              out.close();
            } catch (error) {
              out.fail(error);
            }
          })();
        }
        jobs.close();
      } catch (error) {
        jobs.fail(error);
      }
    };

    void readText();
    void schedule();
    try {
      for (;;) {
        const job = await jobs.next(aborted);
        if (signal.aborted) return;
        if (job === undefined) break;
        const sentenceStart = inputSeconds;
        for (;;) {
          const audio = await job.next(aborted);
          if (audio === undefined || signal.aborted) break;
          if (!resampler || resampler.inputRate !== audio.sampleRate) {
            if (resampler) {
              const tail = await resampler.flushInt16();
              resampler.close();
              if (tail.length) yield { pcm: tail, sampleRate };
            }
            resampler = new Resampler(audio.sampleRate, sampleRate);
          }
          inputSeconds += audio.pcm.length / audio.sampleRate;
          const pcm = await resampler.pushInt16(audio.pcm);
          if (signal.aborted) return;
          const words = audio.words?.map((w) => ({ word: w.word, start: round3(w.start + sentenceStart), end: round3(w.end + sentenceStart) }));
          if (pcm.length || words?.length) yield words?.length ? { pcm, sampleRate, words } : { pcm, sampleRate };
        }
        if (signal.aborted) return;
        played++;
        advanced.fire();
      }
      if (resampler) {
        const tail = await resampler.flushInt16();
        if (tail.length && !signal.aborted) yield { pcm: tail, sampleRate };
      }
    } catch (error) {
      if (signal.aborted || isAbort(error)) return;
      const e =
        error instanceof SpeechError
          ? error
          : new SpeechError('engine_failed', `speech failed: ${(error as Error)?.message ?? error}`, route.engine.name, undefined, { cause: error });
      this.log.error({ provider: request.provider, engine: route.engine.name, code: e.code, status: e.status }, `speech: ${e.message}`);
      throw e;
    } finally {
      resampler?.close();
      controller.abort();
      outer?.removeEventListener('abort', onAbort);
    }
  }

  /** Whole result at once (previews, fillers, tests). */
  async synthesizeAll(request: SynthesisRequest): Promise<{ pcm: Int16Array; sampleRate: number; words: WordTiming[] }> {
    const parts: Int16Array[] = [];
    const words: WordTiming[] = [];
    for await (const chunk of this.synthesize(request)) {
      parts.push(chunk.pcm);
      if (chunk.words) words.push(...chunk.words);
    }
    return { pcm: concatInt16(parts), sampleRate: request.sampleRate, words };
  }

  /** Refreshes premium voice lists from the providers that have keys (cached for voiceListTtlMs). */
  refreshVoiceLists(force = false): Promise<void> {
    return this.voiceLists.refreshAll(force);
  }

  /** Makes sure the provider's list is fresh, waiting at most waitMs for the provider. */
  freshVoices(provider: string, waitMs = 3000): Promise<void> {
    return this.voiceLists.fresh(provider, waitMs);
  }

  async close(): Promise<void> {
    await this.flite.close();
    await this.kokoro?.close();
    for (const engine of this.premium.values()) await engine.close?.();
  }
}

function round3(x: number) {
  return Math.round(x * 1000) / 1000;
}

function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    u.search = '';
    return u.toString().replace(/\/$/, '');
  } catch {
    return 'KOKORO_URL';
  }
}

class Signal {
  private waiters: Array<() => void> = [];
  wait(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }
  fire() {
    for (const w of this.waiters.splice(0)) w();
  }
}
