/**
 * Speech recognition: one interface, one file per engine (sherpa-onnx models, Debian's
 * pocketsphinx, an OpenAI-compatible /audio/transcriptions endpoint, Deepgram's streaming socket).
 * Audio in is always 16 kHz mono PCM s16le, what the player page streams from the microphone.
 */

export const RECOGNITION_SAMPLE_RATE = 16000;

export interface Transcript {
  text: string;
  /** ISO 639-1 code, when the engine detected the language. */
  language?: string;
  /** 0..1 where the engine reports it. */
  confidence?: number;
}

export interface RecognitionOptions {
  /** Expected language (ISO 639-1); engines that detect languages may answer another of `languages`. */
  language: string;
  /** Languages the visitor may speak (the agent's main and `also`). */
  languages?: string[];
  signal?: AbortSignal;
}

/** A running recognition of one visitor turn, for engines that take audio as it arrives. */
export interface RecognitionStream {
  /** Audio as it arrives (16 kHz mono). */
  push(pcm: Int16Array): void;
  /** Called with the growing text as the engine hears it (engines with partial results). */
  onPartial?: (text: string) => void;
  /**
   * The visitor paused (called once per pause, ~150 ms into it, while the turn may go on): an
   * engine that waits for more audio before it closes a phrase may close it now.
   */
  pause?(): void;
  /**
   * The transcript of everything heard so far, when the engine knows no later audio can change it
   * (pocketsphinx's closed phrases); undefined otherwise. A turn that ends in a pause after such
   * words is taken on them at once, without waiting for `finish` (the decoder's exit).
   */
  settled?(): Transcript | undefined;
  /** No more audio for this turn: the final transcript. */
  finish(): Promise<Transcript>;
  /** Drops the turn (barge-in cancelled, session ended). */
  abort(): void;
}

export interface Recognizer {
  /** Engine name for logs and the latency waterfall (`sherpa-onnx`, `pocketsphinx`, `openai`, `deepgram`). */
  readonly name: string;
  /** A whole turn's audio at once. */
  transcribe(pcm: Int16Array, options: RecognitionOptions): Promise<Transcript>;
  /**
   * Streaming engines start recognising while the visitor still speaks. Undefined when the engine
   * cannot take this turn live right now (every live decoder busy): the turn is then transcribed whole.
   */
  stream?(options: RecognitionOptions): RecognitionStream | undefined;
  close(): Promise<void>;
}
