/**
 * An OpenAI-compatible `/audio/transcriptions` endpoint: OpenAI itself, Groq, and self-hosted
 * faster-whisper servers (speaches, faster-whisper-server) speak it. Driven by the official
 * `openai` client; one multipart request per turn with the turn as a 16 kHz WAV.
 *
 * Whisper-family models answer `verbose_json` with the detected language (OpenAI says "english",
 * self-hosted servers say "en"; both become ISO 639-1). Other models (gpt-4o-transcribe) answer
 * plain `json`. With one expected language the request names it; with several the model detects.
 */
import type OpenAI from 'openai';
import { once, type Once } from '../../core/once.js';
import { encodeWav } from '../audio.js';
import { RecognitionError } from './errors.js';
import { isoLanguage } from './languages.js';
import { RECOGNITION_SAMPLE_RATE, type RecognitionOptions, type Recognizer, type Transcript } from './types.js';

export interface OpenAiRecognizerOptions {
  /** Base URL up to `/v1` (default OpenAI's). */
  baseUrl?: string;
  apiKey?: string;
  model: string;
  timeoutMs?: number;
}

export class OpenAiRecognizer implements Recognizer {
  readonly name = 'openai';
  /** The client library is loaded when this engine is configured (started at once, so the first turn does not wait), never on a server that does not use it. */
  private readonly client: Once<{ client: OpenAI; library: typeof import('openai') }>;

  constructor(private readonly options: OpenAiRecognizerOptions) {
    this.client = once(async () => {
      const library = await import('openai');
      const client = new library.default({
        // Self-hosted servers often need no key; the client insists on one.
        apiKey: options.apiKey || 'none',
        baseURL: options.baseUrl,
        timeout: options.timeoutMs ?? 15_000,
        maxRetries: 1,
      });
      return { client, library };
    });
    this.client.get().catch(() => undefined);
  }

  async transcribe(pcm: Int16Array, options: RecognitionOptions): Promise<Transcript> {
    const verbose = /whisper/i.test(this.options.model);
    const languages = options.languages?.length ? options.languages : [options.language];
    const { client, library } = await this.client.get();
    try {
      const file = await library.toFile(encodeWav(pcm, RECOGNITION_SAMPLE_RATE), 'turn.wav', { type: 'audio/wav' });
      const result = await client.audio.transcriptions.create(
        {
          file,
          model: this.options.model,
          response_format: verbose ? 'verbose_json' : 'json',
          ...(languages.length === 1 && languages[0] ? { language: languages[0] } : {}),
        },
        { signal: options.signal },
      );
      const body = result as { text?: string; language?: string };
      const language = isoLanguage(body.language) ?? (languages.length === 1 ? languages[0] : undefined);
      return { text: (body.text ?? '').trim(), ...(language ? { language } : {}) };
    } catch (error) {
      if (options.signal?.aborted) throw error;
      if (error instanceof library.APIError) {
        const status = error.status;
        const what = status === 401 || status === 403 ? 'the key was refused' : status === 429 ? 'rate limited' : `status ${status ?? 'none'}`;
        throw new RecognitionError(`transcription endpoint failed: ${what}`, this.name, status, { cause: error });
      }
      throw new RecognitionError(`transcription endpoint failed: ${(error as Error).message}`, this.name, undefined, { cause: error });
    }
  }

  async close(): Promise<void> {}
}
