/**
 * What the visitor heard of the agent's own utterances: the speech layer's output counted as it is
 * voiced and as it leaves toward the player, turned into the words heard when an utterance is cut.
 */
import type { Speaker } from '../realtime/session.js';

/** The page's playout margin (player client audio.ts SAFETY_MARGIN): audio is heard about this long after it leaves. */
export const PLAYOUT_MARGIN_MS = 120;

/**
 * What of one utterance of the agent's own (welcome, answer, goodbye) the visitor actually heard:
 * the speech layer's pieces with their word timings as they are voiced, and the samples that left
 * toward the player. When the utterance is cut (barge-in, a new turn, agent.interrupt), the words
 * whose middle had been played are what the agent said.
 */
export class Voicing {
  private readonly pieces: Array<{ startSample: number; words?: Array<{ start: number; end: number }> }> = [];
  produced = 0;
  released = 0;
  /** The speech layer was stopped before it voiced everything it was given. */
  cut = false;

  constructor(
    readonly utteranceId: string,
    private readonly sampleRate: number,
  ) {}

  /** The speaker, watched: every piece it yields is counted, and an abort marks the utterance cut. */
  wrap(speaker: Speaker): Speaker {
    return (request) => {
      const pieces = speaker(request);
      const self = this;
      return (async function* () {
        try {
          for await (const piece of pieces) {
            self.pieces.push({ startSample: self.produced, words: piece.words });
            self.produced += piece.pcm.length;
            yield piece;
          }
        } finally {
          if (request.signal.aborted) self.cut = true;
        }
      })();
    };
  }

  /** Everything voiced had left and nothing was cut. */
  get complete(): boolean {
    return !this.cut && this.released >= this.produced;
  }

  /**
   * The part of `text` the visitor heard: audio leaves `PLAYOUT_MARGIN_MS` before it is heard and
   * the page drops what it holds on an interrupt. A word counts once its middle was heard. Without
   * word timings (an engine that gives none), the share of the words equal to the share of the
   * voiced audio that played.
   */
  heardText(text: string): string {
    const heardSamples = Math.max(0, this.released - (PLAYOUT_MARGIN_MS / 1000) * this.sampleRate);
    const tokens = text.trim().split(/\s+/).filter(Boolean);
    const spoken = tokens.filter((token) => /[\p{L}\p{N}]/u.test(token));
    let heardWords = 0;
    let timed = false;
    for (const piece of this.pieces) {
      if (!piece.words?.length) continue;
      timed = true;
      for (const word of piece.words) {
        if (piece.startSample + ((word.start + word.end) / 2) * this.sampleRate <= heardSamples) heardWords++;
      }
    }
    if (!timed) heardWords = this.produced ? Math.floor((spoken.length * heardSamples) / this.produced) : 0;
    if (heardWords <= 0) return '';
    // Spoken words are the text's tokens with letters or digits (speech/sentences.ts wordsOf).
    let seen = 0;
    for (let i = 0; i < tokens.length; i++) {
      if (/[\p{L}\p{N}]/u.test(tokens[i]) && ++seen === heardWords) return tokens.slice(0, i + 1).join(' ');
    }
    return tokens.join(' ');
  }
}
