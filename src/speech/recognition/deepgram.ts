/**
 * Deepgram's streaming recognition (`/v1/listen` WebSocket), through the official `@deepgram/sdk`.
 * Audio goes up as it arrives (linear16, 16 kHz); interim results become `partial` text, finals
 * accumulate; at the end of the turn a `Finalize` message flushes the last words and `CloseStream`
 * ends the socket. One socket per visitor turn: it opens when the visitor starts speaking, so the
 * connection time hides behind the speech. Several expected languages use `language=multi`.
 */
import type { DeepgramClient } from '@deepgram/sdk';
import { once, type Once } from '../../core/once.js';
import { RecognitionError } from './errors.js';
import { isoLanguage } from './languages.js';
import { RECOGNITION_SAMPLE_RATE, type RecognitionOptions, type RecognitionStream, type Recognizer, type Transcript } from './types.js';

export interface DeepgramRecognizerOptions {
  apiKey: string;
  /** Base URL (https://…); the socket goes to its ws(s):// twin. Tests point it at a local fake. */
  baseUrl?: string;
  model: string;
  /** How long to wait for the final words after the turn ends. */
  finalizeTimeoutMs?: number;
}

interface ResultsMessage {
  type: 'Results';
  is_final?: boolean;
  from_finalize?: boolean;
  channel?: { alternatives?: Array<{ transcript?: string; confidence?: number; languages?: string[] }>; detected_language?: string };
}

export class DeepgramRecognizer implements Recognizer {
  readonly name = 'deepgram';
  /** The SDK (some 30 MB) is loaded when this engine is configured, at once so the first turn does not wait. */
  private readonly client: Once<DeepgramClient>;

  constructor(private readonly options: DeepgramRecognizerOptions) {
    const base = options.baseUrl?.replace(/\/+$/, '');
    this.client = once(
      async () =>
        new (await import('@deepgram/sdk')).DeepgramClient({
          apiKey: options.apiKey,
          ...(base ? { baseUrl: base.replace(/^http/, 'ws') } : {}),
        }),
    );
    this.client.get().catch(() => undefined);
  }

  async transcribe(pcm: Int16Array, options: RecognitionOptions): Promise<Transcript> {
    const stream = this.stream(options);
    stream.push(pcm);
    return stream.finish();
  }

  stream(options: RecognitionOptions): RecognitionStream {
    const languages = options.languages?.length ? options.languages : [options.language];
    const finals: string[] = [];
    let interim = '';
    let language: string | undefined;
    let confidence: number | undefined;
    let failure: Error | undefined;
    let settle: { resolve: () => void; reject: (e: Error) => void } | undefined;
    const pending: Int16Array[] = [];
    const stream: RecognitionStream = { push, finish, abort };

    const socketPromise = this.client.get().then((client) =>
      client.listen.v1.connect({
        model: this.options.model,
        encoding: 'linear16',
        sample_rate: RECOGNITION_SAMPLE_RATE,
        channels: 1,
        interim_results: 'true',
        punctuate: 'true',
        language: languages.length > 1 ? 'multi' : languages[0],
        Authorization: `Token ${this.options.apiKey}`,
        reconnectAttempts: 0,
        connectionTimeoutInSeconds: 5,
      }),
    );
    const opened = socketPromise.then(async (socket) => {
      socket.on('message', (message) => {
        if ((message as { type?: string }).type !== 'Results') return;
        const result = message as unknown as ResultsMessage;
        const best = result.channel?.alternatives?.[0];
        const text = best?.transcript?.trim() ?? '';
        language = isoLanguage(best?.languages?.[0] ?? result.channel?.detected_language) ?? language;
        if (result.is_final) {
          if (text) finals.push(text);
          if (best?.confidence !== undefined && text) confidence = best.confidence;
          interim = '';
        } else {
          interim = text;
        }
        const sofar = [...finals, interim].filter(Boolean).join(' ');
        if (sofar) stream.onPartial?.(sofar);
        if (result.from_finalize) settle?.resolve();
      });
      socket.on('error', (error) => {
        failure = new RecognitionError(`Deepgram stream failed: ${error.message}`, 'deepgram');
        settle?.reject(failure);
      });
      socket.on('close', (event) => {
        if (event.code !== 1000 && !failure) {
          failure = new RecognitionError(`Deepgram closed the stream (${event.code}${event.reason ? ` ${event.reason}` : ''})`, 'deepgram');
        }
        if (failure) settle?.reject(failure);
        else settle?.resolve();
      });
      socket.connect();
      await socket.waitForOpen();
      for (const pcm of pending.splice(0)) socket.sendMedia(pcm);
      return socket;
    });
    opened.catch(() => {});
    let socketReady: Awaited<typeof opened> | undefined;
    opened.then(
      (s) => (socketReady = s),
      () => {},
    );
    const finalizeTimeoutMs = this.options.finalizeTimeoutMs ?? 5000;

    function push(pcm: Int16Array): void {
      if (socketReady) socketReady.sendMedia(pcm.slice());
      else pending.push(pcm.slice());
    }

    async function finish(): Promise<Transcript> {
      let socket: Awaited<typeof opened>;
      try {
        socket = await opened;
      } catch (error) {
        throw new RecognitionError(`Deepgram stream could not open: ${(error as Error).message}`, 'deepgram', undefined, { cause: error });
      }
      if (failure) throw failure;
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new RecognitionError('Deepgram sent no final result in time', 'deepgram')), finalizeTimeoutMs);
        settle = {
          resolve: () => (clearTimeout(timer), resolve()),
          reject: (e) => (clearTimeout(timer), reject(e)),
        };
        socket.sendFinalize({ type: 'Finalize' });
      }).finally(() => {
        // CloseStream lets Deepgram end the socket (and bill) cleanly; the transcript does not wait for it.
        try {
          socket.sendCloseStream({ type: 'CloseStream' });
          setTimeout(() => socket.close(), 1000).unref();
        } catch {
          socket.close();
        }
      });
      const text = [...finals, interim].filter(Boolean).join(' ').trim();
      const lang = language ?? (languages.length === 1 ? languages[0] : undefined);
      return { text, ...(lang ? { language: lang } : {}), ...(confidence !== undefined ? { confidence } : {}) };
    }

    function abort(): void {
      pending.length = 0;
      opened.then(
        (socket) => socket.close(),
        () => {},
      );
    }

    return stream;
  }

  async close(): Promise<void> {}
}
