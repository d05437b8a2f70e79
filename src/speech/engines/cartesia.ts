/**
 * Cartesia, over HTTP (`/tts/bytes`, the default) or WebSocket (CARTESIA_TRANSPORT=websocket, for
 * word timings).
 *
 *  - WebSocket `/tts/websocket`: one connection per engine, shared by all sentences; each sentence is
 *    a context (context_id) with add_timestamps, answered by `chunk`, `timestamps`, `done` or
 *    `error` messages. An abort sends `{context_id, cancel: true}`. The connection is reopened on
 *    demand after a close.
 */
import crypto from 'node:crypto';
import WebSocket from 'ws';
import { SpeechError, codeForStatus } from '../errors.js';
import { pcmFromBytes, providerFetch, readBody } from './http.js';
import { PREMIUM_RATE, type PremiumOptions } from './premium.js';
import { AsyncQueue } from '../../core/async-queue.js';
import { silentProvider, socketError, wsUrl } from './socket.js';
import type { EngineAudio, EngineRequest, SpeechEngine, WordTiming } from './types.js';

export const CARTESIA_VERSION = '2025-04-16';

/** Cartesia: POST /tts/bytes with raw pcm_s16le output, headers Cartesia-Version and X-API-Key. */
export class CartesiaEngine implements SpeechEngine {
  readonly name = 'cartesia';
  readonly baseUrl: string;
  constructor(private readonly options: PremiumOptions & { modelId?: string }) {
    this.baseUrl = (options.baseUrl ?? 'https://api.cartesia.ai').replace(/\/+$/, '');
  }

  async *synthesize(request: EngineRequest): AsyncIterable<EngineAudio> {
    const timeout = this.options.timeoutMs ?? 10_000;
    const response = await providerFetch(
      this.name,
      `${this.baseUrl}/tts/bytes`,
      {
        method: 'POST',
        headers: { 'Cartesia-Version': CARTESIA_VERSION, 'X-API-Key': this.options.apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({
          model_id: this.options.modelId ?? 'sonic-2',
          transcript: request.text,
          voice: { mode: 'id', id: request.voiceId },
          output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: PREMIUM_RATE },
          language: request.language || 'en',
        }),
      },
      request.signal,
      timeout,
    );
    for await (const pcm of pcmFromBytes(readBody(this.name, response, request.signal, timeout))) yield { pcm, sampleRate: PREMIUM_RATE };
  }
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
  private contexts = new Map<string, AsyncQueue<CartesiaMessage>>();
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
    const inbox = new AsyncQueue<CartesiaMessage>();
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
        const message = await inbox.nextWithin(this.timeout, silentProvider('cartesia', this.timeout));
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
