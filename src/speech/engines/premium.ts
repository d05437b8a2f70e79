/**
 * Streaming clients of the premium providers' published HTTP APIs. Each request is one sentence;
 * audio is yielded as the bytes arrive. Failures become SpeechError (never a hung stream): HTTP
 * errors by status, unreachable hosts as provider_unavailable, no answer or a stalled body after
 * timeoutMs as timeout.
 */
import { SpeechError } from '../errors.js';
import { decodeWav } from '../audio.js';
import { lines, pcmFromBytes, providerFetch, readBody } from './http.js';
import type { EngineAudio, EngineRequest, SpeechEngine, WordTiming } from './types.js';

export const PREMIUM_RATE = 24000;

export interface PremiumOptions {
  apiKey: string;
  baseUrl?: string;
  timeoutMs?: number;
}

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

/**
 * Inworld: POST /tts/v1/voice:stream, Basic auth (INWORLD_API_KEY is the Base64 credential the
 * Inworld portal shows). The answer is NDJSON, one {"result":{"audioContent": base64, "timestampInfo"?}}
 * per line; each audioContent is a small WAV file of LINEAR16, whose RIFF header is stripped.
 */
export class InworldEngine implements SpeechEngine {
  readonly baseUrl: string;
  constructor(
    readonly name: 'inworld' | 'inworld-flash',
    private readonly options: PremiumOptions & { modelId?: string },
  ) {
    this.baseUrl = (options.baseUrl ?? 'https://api.inworld.ai').replace(/\/+$/, '');
  }

  get modelId(): string {
    return this.options.modelId ?? (this.name === 'inworld-flash' ? 'inworld-tts-1' : 'inworld-tts-1-max');
  }

  async *synthesize(request: EngineRequest): AsyncIterable<EngineAudio> {
    const timeout = this.options.timeoutMs ?? 10_000;
    const response = await providerFetch(
      this.name,
      `${this.baseUrl}/tts/v1/voice:stream`,
      {
        method: 'POST',
        headers: { authorization: `Basic ${this.options.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          text: request.text,
          voiceId: request.voiceId,
          modelId: this.modelId,
          audioConfig: { audioEncoding: 'LINEAR16', sampleRateHertz: PREMIUM_RATE },
          timestampType: 'WORD',
        }),
      },
      request.signal,
      timeout,
    );
    let seconds = 0;
    for await (const line of lines(readBody(this.name, response, request.signal, timeout))) {
      let message: { result?: { audioContent?: string; timestampInfo?: InworldTimestamps }; error?: { code?: number; message?: string } };
      try {
        message = JSON.parse(line);
      } catch {
        throw new SpeechError('provider_error', `${this.name} sent a line that is not JSON`, this.name);
      }
      if (message.error) {
        throw new SpeechError(
          'provider_error',
          `${this.name} stream error ${message.error.code ?? ''}: ${message.error.message ?? 'unknown'}`.trim(),
          this.name,
        );
      }
      const audio = message.result?.audioContent;
      if (!audio) continue;
      const raw = Buffer.from(audio, 'base64');
      let pcm: Int16Array;
      let rate = PREMIUM_RATE;
      if (raw.length >= 12 && raw.toString('ascii', 0, 4) === 'RIFF') {
        const wav = decodeWav(raw);
        pcm = wav.pcm;
        rate = wav.sampleRate || PREMIUM_RATE;
      } else {
        const even = raw.subarray(0, raw.length - (raw.length % 2));
        pcm = new Int16Array(new Uint8Array(even).buffer);
      }
      const words = inworldWords(message.result?.timestampInfo, seconds);
      seconds += pcm.length / rate;
      if (pcm.length) yield { pcm, sampleRate: rate, words };
    }
  }
}

interface InworldTimestamps {
  wordAlignment?: { words?: string[]; wordStartTimeSeconds?: number[]; wordEndTimeSeconds?: number[] };
}

/** Word times from one chunk; times that start before this chunk's audio are taken as chunk-relative. */
function inworldWords(info: InworldTimestamps | undefined, chunkStart: number): WordTiming[] | undefined {
  const a = info?.wordAlignment;
  if (!a?.words?.length || !a.wordStartTimeSeconds || !a.wordEndTimeSeconds) return undefined;
  const relative = chunkStart > 0 && a.wordStartTimeSeconds[0] < chunkStart - 0.05;
  const shift = relative ? chunkStart : 0;
  const out: WordTiming[] = [];
  a.words.forEach((word, i) => {
    if (!word.trim() || /^[\p{P}\s]+$/u.test(word)) return;
    out.push({ word, start: a.wordStartTimeSeconds![i] + shift, end: a.wordEndTimeSeconds![i] + shift });
  });
  return out;
}
