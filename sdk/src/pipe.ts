/** Piping a TTS stream (any stream of audio bytes, at any rate) into a render session. */
import { convertStream, type AudioSource } from './audio.js';
import type { RenderSession, SpeakOptions, Utterance } from './render-session.js';

export interface PipeAudioOptions extends SpeakOptions {
  /** The stream's rate in Hz (OpenAI-compatible `response_format: "pcm"` is 24000). */
  inputRate: number;
  /** `s16le` (default) or `f32le`. */
  inputFormat?: 's16le' | 'f32le';
}

/**
 * Speaks a stream of raw audio (e.g. a TTS response body) through the session, converted to the
 * session's rate as it arrives: the avatar starts talking with the first chunk. Resolves like
 * speak(): when all of it was accepted.
 */
export function pipeAudio(session: RenderSession, stream: AudioSource, options: PipeAudioOptions): Promise<Utterance> {
  const { inputRate, inputFormat, ...speak } = options;
  return session.speak(convertStream(stream, { inputRate, inputFormat, outputRate: session.sampleRate }), speak);
}
