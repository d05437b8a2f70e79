/**
 * A piece of speech: the one name for voiced audio on its way from the speech layer to the player
 * (docs/decisions.md, "One name for a piece of speech"). The synthesis service yields them
 * (`SpeechService.synthesize`), a session's speaker yields them (realtime/speaker.ts adds the
 * caption), the conversation loop holds or counts them (conversation/held-speech.ts, voicing.ts)
 * and the utterance queue keeps them until the playback clock has played them through
 * (realtime/utterance-queue.ts `QueuedPiece`: a SpeechPiece and the queue's bookkeeping). What the
 * clock sends the page is a frame: a cut of a piece at one tick, not another name for it.
 */
import type { WordTiming } from './engines/types.js';

export interface SpeechPiece {
  /** Mono signed 16-bit PCM. */
  pcm: Int16Array;
  /**
   * Its rate in Hz. The synthesis service always sets it (the rate it was asked for); a session's
   * speaker may leave it out, its pieces are at the session's rate.
   */
  sampleRate?: number;
  /** Words whose timing the engine gave (or estimated) in this piece; seconds from the start of the stream (a speaker: of the piece). */
  words?: WordTiming[];
  /** The caption this piece carries (a session's speaker sets it; the page shows it as the piece plays). */
  text?: string;
}
