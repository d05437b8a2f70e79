/** Inworld over HTTP (NDJSON stream, word timestamps). */
import { SpeechError } from '../errors.js';
import { decodeWav } from '../audio.js';
import { lines, readBody, providerFetch } from './http.js';
import { PREMIUM_RATE, type PremiumOptions } from './premium.js';
import type { EngineAudio, EngineRequest, SpeechEngine, WordTiming } from './types.js';

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
