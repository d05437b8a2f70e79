/**
 * ElevenLabs, over HTTP (streamed bodies, the default) or WebSocket (ELEVENLABS_TRANSPORT=websocket,
 * for word timings).
 *
 *  - HTTP: one POST per sentence, raw 24 kHz PCM back as it is made.
 *  - WebSocket `stream-input`: one connection per sentence (the voice is in the URL): BOS `{text: " "}`,
 *    the sentence, then EOS `{text: ""}`; answered by `{audio, alignment, isFinal}`. Word times come
 *    from the character alignment.
 */
import WebSocket from 'ws';
import { SpeechError } from '../errors.js';
import { pcmFromBytes, providerFetch, readBody } from './http.js';
import { PREMIUM_RATE, type PremiumOptions } from './premium.js';
import { AsyncQueue } from '../../core/async-queue.js';
import { silentProvider, socketError, wsUrl } from './socket.js';
import type { EngineAudio, EngineRequest, SpeechEngine, WordTiming } from './types.js';

/** ElevenLabs: POST /v1/text-to-speech/{voice_id}/stream?output_format=pcm_24000, header xi-api-key. */
export class ElevenLabsEngine implements SpeechEngine {
  readonly baseUrl: string;
  constructor(
    readonly name: 'elevenlabs' | 'elevenlabs-flash',
    private readonly options: PremiumOptions,
  ) {
    this.baseUrl = (options.baseUrl ?? 'https://api.elevenlabs.io').replace(/\/+$/, '');
  }

  get modelId(): string {
    return this.name === 'elevenlabs-flash' ? 'eleven_flash_v2_5' : 'eleven_multilingual_v2';
  }

  async *synthesize(request: EngineRequest): AsyncIterable<EngineAudio> {
    const timeout = this.options.timeoutMs ?? 10_000;
    const body: Record<string, unknown> = { text: request.text, model_id: this.modelId };
    // Only the v2.5 models accept language_code; multilingual v2 detects the language itself.
    if (this.name === 'elevenlabs-flash' && request.language) body.language_code = request.language;
    const url = `${this.baseUrl}/v1/text-to-speech/${encodeURIComponent(request.voiceId)}/stream?output_format=pcm_${PREMIUM_RATE}`;
    const response = await providerFetch(
      this.name,
      url,
      {
        method: 'POST',
        headers: { 'xi-api-key': this.options.apiKey, 'content-type': 'application/json', accept: 'audio/pcm' },
        body: JSON.stringify(body),
      },
      request.signal,
      timeout,
    );
    for await (const pcm of pcmFromBytes(readBody(this.name, response, request.signal, timeout))) yield { pcm, sampleRate: PREMIUM_RATE };
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
    const inbox = new AsyncQueue<ElevenLabsMessage>();
    const socket = new WebSocket(url, { headers: { 'xi-api-key': this.options.apiKey }, handshakeTimeout: timeout });
    socket.on('message', (data) => {
      try {
        inbox.push(JSON.parse(String(data)));
      } catch {
        /* not JSON: ignore */
      }
    });
    socket.on('error', (error) => inbox.fail(socketError(this.name, error)));
    socket.on('close', () => inbox.close());
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
        const message = await inbox.nextWithin(timeout, silentProvider(this.name, timeout));
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
