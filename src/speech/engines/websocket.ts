/**
 * WebSocket clients of the premium providers, for word timings (lip-sync) and no per-sentence
 * HTTP setup:
 *
 *  - Cartesia `/tts/websocket`: one connection per engine, shared by all sentences; each sentence is
 *    a context (context_id) with add_timestamps, answered by `chunk`, `timestamps`, `done` or
 *    `error` messages. An abort sends `{context_id, cancel: true}`. The connection is reopened on
 *    demand after a close.
 *  - ElevenLabs `stream-input`: one connection per sentence (the voice is in the URL): BOS `{text: " "}`,
 *    the sentence, then EOS `{text: ""}`; answered by `{audio, alignment, isFinal}`. Word times come
 *    from the character alignment.
 *
 * Errors and stalls become SpeechError exactly as for the HTTP clients.
 */
import crypto from 'node:crypto';
import WebSocket from 'ws';
import { SpeechError, codeForStatus } from '../errors.js';
import { CARTESIA_VERSION, PREMIUM_RATE, type PremiumOptions } from './premium.js';
import type { EngineAudio, EngineRequest, SpeechEngine, WordTiming } from './types.js';

/** A queue fed by socket events, read by one async generator, with an idle timeout. */
class Inbox<T> {
  private items: T[] = [];
  private error: SpeechError | undefined;
  private ended = false;
  private wake: (() => void) | undefined;

  push(item: T) {
    this.items.push(item);
    this.poke();
  }
  fail(error: SpeechError) {
    this.error ??= error;
    this.poke();
  }
  end() {
    this.ended = true;
    this.poke();
  }
  private poke() {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }
  async next(timeoutMs: number, provider: string): Promise<T | undefined> {
    for (;;) {
      if (this.items.length) return this.items.shift();
      if (this.error) throw this.error;
      if (this.ended) return undefined;
      let timer: NodeJS.Timeout | undefined;
      const timedOut = await new Promise<boolean>((resolve) => {
        this.wake = () => resolve(false);
        timer = setTimeout(() => resolve(true), timeoutMs);
      });
      clearTimeout(timer);
      if (timedOut) throw new SpeechError('timeout', `${provider} sent nothing for ${timeoutMs} ms`, provider);
    }
  }
}

function socketError(provider: string, error: Error & { code?: string }): SpeechError {
  const status = /Unexpected server response: (\d+)/.exec(error.message)?.[1];
  if (status) return new SpeechError(codeForStatus(Number(status)), `${provider} refused the WebSocket: HTTP ${status}`, provider, Number(status));
  if (['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNRESET'].includes(error.code ?? '')) {
    return new SpeechError('provider_unavailable', `${provider} is unreachable (${error.code})`, provider);
  }
  return new SpeechError('provider_error', `${provider} WebSocket failed: ${error.message}`, provider);
}

function wsUrl(base: string, path: string): string {
  return base.replace(/^http/, 'ws').replace(/\/+$/, '') + path;
}

interface CartesiaMessage {
  type?: string;
  context_id?: string;
  data?: string;
  done?: boolean;
  word_timestamps?: { words?: string[]; start?: number[]; end?: number[] };
  error?: string;
  message?: string;
  title?: string;
  status_code?: number;
}

export class CartesiaWebSocketEngine implements SpeechEngine {
  readonly name = 'cartesia';
  private socket: WebSocket | undefined;
  private opening: Promise<WebSocket> | undefined;
  private contexts = new Map<string, Inbox<CartesiaMessage>>();
  private readonly base: string;

  constructor(private readonly options: PremiumOptions & { modelId?: string }) {
    this.base = options.baseUrl ?? 'https://api.cartesia.ai';
  }

  private get timeout() {
    return this.options.timeoutMs ?? 10_000;
  }

  private connect(): Promise<WebSocket> {
    if (this.socket?.readyState === WebSocket.OPEN) return Promise.resolve(this.socket);
    this.opening ??= new Promise<WebSocket>((resolve, reject) => {
      const socket = new WebSocket(wsUrl(this.base, '/tts/websocket'), {
        headers: { 'X-API-Key': this.options.apiKey, 'Cartesia-Version': CARTESIA_VERSION },
        handshakeTimeout: this.timeout,
      });
      socket.once('open', () => {
        this.socket = socket;
        this.opening = undefined;
        resolve(socket);
      });
      socket.on('message', (data) => {
        let message: CartesiaMessage;
        try {
          message = JSON.parse(String(data));
        } catch {
          return;
        }
        const inbox = message.context_id ? this.contexts.get(message.context_id) : undefined;
        inbox?.push(message);
      });
      socket.on('error', (error) => {
        const e = socketError('cartesia', error);
        if (this.opening) {
          this.opening = undefined;
          reject(e);
        }
        for (const inbox of this.contexts.values()) inbox.fail(e);
      });
      socket.on('close', () => {
        if (this.socket === socket) this.socket = undefined;
        for (const inbox of this.contexts.values()) inbox.fail(new SpeechError('provider_unavailable', 'cartesia closed the WebSocket', 'cartesia'));
      });
    });
    return this.opening;
  }

  async *synthesize(request: EngineRequest): AsyncIterable<EngineAudio> {
    const socket = await this.connect();
    const contextId = crypto.randomUUID();
    const inbox = new Inbox<CartesiaMessage>();
    this.contexts.set(contextId, inbox);
    const onAbort = () => {
      inbox.fail(new SpeechError('aborted', 'synthesis was cancelled', 'cartesia'));
      if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify({ context_id: contextId, cancel: true }));
    };
    request.signal.addEventListener('abort', onAbort, { once: true });
    try {
      socket.send(
        JSON.stringify({
          model_id: this.options.modelId ?? 'sonic-2',
          transcript: request.text,
          voice: { mode: 'id', id: request.voiceId },
          language: request.language || 'en',
          context_id: contextId,
          output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: PREMIUM_RATE },
          add_timestamps: true,
          continue: false,
        }),
      );
      for (;;) {
        const message = await inbox.next(this.timeout, 'cartesia');
        if (!message) break;
        if (message.type === 'error') {
          const status = message.status_code ?? 0;
          throw new SpeechError(
            status >= 400 ? codeForStatus(status) : 'provider_error',
            `cartesia: ${message.message ?? message.error ?? message.title ?? 'error'}`,
            'cartesia',
            status || undefined,
          );
        }
        if (message.type === 'chunk' && message.data) {
          const raw = Buffer.from(message.data, 'base64');
          yield { pcm: new Int16Array(new Uint8Array(raw.subarray(0, raw.length - (raw.length % 2))).buffer), sampleRate: PREMIUM_RATE };
        }
        if (message.type === 'timestamps' && message.word_timestamps?.words) {
          // Seconds from the start of this context (sentence), as the service expects.
          const t = message.word_timestamps;
          const words: WordTiming[] = t.words!.map((word, i) => ({ word, start: t.start?.[i] ?? 0, end: t.end?.[i] ?? 0 }));
          yield { pcm: new Int16Array(0), sampleRate: PREMIUM_RATE, words };
        }
        if (message.done || message.type === 'done') break;
      }
    } finally {
      request.signal.removeEventListener('abort', onAbort);
      this.contexts.delete(contextId);
    }
  }

  async close(): Promise<void> {
    this.socket?.close();
    this.socket = undefined;
  }
}

interface ElevenLabsMessage {
  audio?: string | null;
  isFinal?: boolean | null;
  alignment?: { chars?: string[]; charStartTimesMs?: number[]; charDurationsMs?: number[] } | null;
  error?: string;
  message?: string;
}

/** Groups a character alignment into words (times in seconds, shifted by `offset`). */
export function wordsFromCharacters(chars: string[], startsMs: number[], durationsMs: number[], offset: number): WordTiming[] {
  const out: WordTiming[] = [];
  let word = '';
  let start = 0;
  let end = 0;
  const flush = () => {
    const clean = word.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '');
    if (clean) out.push({ word: clean, start: offset + start / 1000, end: offset + end / 1000 });
    word = '';
  };
  chars.forEach((c, i) => {
    if (/\s/.test(c)) return flush();
    if (!word) start = startsMs[i] ?? 0;
    word += c;
    end = (startsMs[i] ?? 0) + (durationsMs[i] ?? 0);
  });
  flush();
  return out;
}

export class ElevenLabsWebSocketEngine implements SpeechEngine {
  private readonly base: string;
  constructor(
    readonly name: 'elevenlabs' | 'elevenlabs-flash',
    private readonly options: PremiumOptions,
  ) {
    this.base = options.baseUrl ?? 'https://api.elevenlabs.io';
  }

  get modelId(): string {
    return this.name === 'elevenlabs-flash' ? 'eleven_flash_v2_5' : 'eleven_multilingual_v2';
  }

  async *synthesize(request: EngineRequest): AsyncIterable<EngineAudio> {
    const timeout = this.options.timeoutMs ?? 10_000;
    const params = new URLSearchParams({ model_id: this.modelId, output_format: `pcm_${PREMIUM_RATE}` });
    if (this.name === 'elevenlabs-flash' && request.language) params.set('language_code', request.language);
    const url = wsUrl(this.base, `/v1/text-to-speech/${encodeURIComponent(request.voiceId)}/stream-input?${params}`);
    const inbox = new Inbox<ElevenLabsMessage>();
    const socket = new WebSocket(url, { headers: { 'xi-api-key': this.options.apiKey }, handshakeTimeout: timeout });
    socket.on('message', (data) => {
      try {
        inbox.push(JSON.parse(String(data)));
      } catch {
        /* not JSON: ignore */
      }
    });
    socket.on('error', (error) => inbox.fail(socketError(this.name, error)));
    socket.on('close', () => inbox.end());
    socket.on('open', () => {
      socket.send(JSON.stringify({ text: ' ' }));
      socket.send(JSON.stringify({ text: `${request.text} `, flush: true }));
      socket.send(JSON.stringify({ text: '' }));
    });
    const onAbort = () => {
      inbox.fail(new SpeechError('aborted', 'synthesis was cancelled', this.name));
      socket.terminate();
    };
    request.signal.addEventListener('abort', onAbort, { once: true });
    try {
      let seconds = 0;
      for (;;) {
        const message = await inbox.next(timeout, this.name);
        if (!message) break;
        if (message.error || (message.message && !message.audio)) {
          throw new SpeechError('provider_error', `${this.name}: ${message.message ?? message.error}`, this.name);
        }
        if (message.audio) {
          const raw = Buffer.from(message.audio, 'base64');
          const pcm = new Int16Array(new Uint8Array(raw.subarray(0, raw.length - (raw.length % 2))).buffer);
          const a = message.alignment;
          let words: WordTiming[] | undefined;
          if (a?.chars?.length && a.charStartTimesMs && a.charDurationsMs) {
            // Alignment is given per audio chunk; times before this chunk's start are chunk-relative.
            const relative = seconds > 0 && a.charStartTimesMs[0] / 1000 < seconds - 0.05;
            words = wordsFromCharacters(a.chars, a.charStartTimesMs, a.charDurationsMs, relative ? seconds : 0);
          }
          seconds += pcm.length / PREMIUM_RATE;
          yield { pcm, sampleRate: PREMIUM_RATE, words };
        }
        if (message.isFinal) break;
      }
    } finally {
      request.signal.removeEventListener('abort', onAbort);
      if (socket.readyState === WebSocket.OPEN || socket.readyState === WebSocket.CONNECTING) socket.terminate();
    }
  }
}
