/**
 * How long a silence ends the visitor's turn.
 *
 * Two things move it, after what LiveKit and Pipecat do (a VAD silence, refined by a look at the
 * words): the visitor's own pauses (someone who pauses 600 ms mid-sentence should not be cut off at
 * 500 ms, someone brisk should not wait 700 ms), and the words heard so far when an engine already
 * has them (a complete question ends sooner, a sentence left on "and" or "um" waits longer).
 * LiveKit and Pipecat use a small transformer for the second; a rule on the last words costs
 * nothing per turn and covers the cases that matter most (see docs/decisions.md). The pitch at the end
 * of the last voiced stretch (pitch.ts) is the third, after Gravano & Hirschberg's turn-yielding and
 * turn-holding cues: a falling end, with no word saying otherwise, ends the turn at 350 ms, a rising
 * one at 450 ms; a level one waits at least 800 ms. It is known the moment the pause starts, before
 * any recogniser has words.
 */

import type { PitchEnd } from './pitch.js';

export interface EndOfTurnOptions {
  /** Silence that ends a turn before the visitor's pauses are known. */
  silenceMs: number;
  /** Bounds of the adapted silence. */
  minSilenceMs: number;
  maxSilenceMs: number;
  /** Silence that ends a turn whose words form a complete question or sentence. */
  completeSilenceMs: number;
  /** Silence that ends a turn left hanging ("…and", "um"). */
  hangingSilenceMs: number;
  /**
   * Silence that ends a turn whose last voiced stretch ends on a falling pitch (pitch.ts), when the
   * words do not say otherwise; 0 leaves pitch out (silence and words only, the rule before it).
   */
  fallingSilenceMs: number;
  /**
   * Silence that ends a turn whose last voiced stretch ends level (a plateau: a cue of holding the
   * turn), when the words do not say otherwise: at least this; 0 leaves it to the adapted silence.
   */
  levelSilenceMs: number;
  /**
   * Silence that ends a turn whose last voiced stretch ends rising, when the words do not say
   * otherwise: at most this (a question's rise yields the turn, a list's rise does not: between a
   * fall and no cue); 0 leaves it to the adapted silence.
   */
  risingSilenceMs: number;
}

export const END_OF_TURN_DEFAULTS: EndOfTurnOptions = {
  silenceMs: 600,
  minSilenceMs: 500,
  maxSilenceMs: 900,
  completeSilenceMs: 350,
  hangingSilenceMs: 1200,
  fallingSilenceMs: 350,
  levelSilenceMs: 800,
  risingSilenceMs: 450,
};

/** The rule before pitch (silence and words only): what the benches and tests compare against. */
export const PITCH_OFF: Pick<EndOfTurnOptions, 'fallingSilenceMs' | 'levelSilenceMs' | 'risingSilenceMs'> = {
  fallingSilenceMs: 0,
  levelSilenceMs: 0,
  risingSilenceMs: 0,
};

/** Whether any pitch end moves the silence (the listener tracks pitch only then). */
export function usesPitch(options: EndOfTurnOptions): boolean {
  return options.fallingSilenceMs > 0 || options.levelSilenceMs > 0 || options.risingSilenceMs > 0;
}

const PAUSES_KEPT = 20;
const PAUSES_NEEDED = 5;
/** Pauses shorter than this are gaps between words, not the pauses a visitor makes while thinking. */
const PAUSE_FLOOR_MS = 150;
const MARGIN_MS = 150;

const HANGING = new Set([
  'and',
  'or',
  'but',
  'so',
  'because',
  'the',
  'a',
  'an',
  'to',
  'of',
  'with',
  'for',
  'in',
  'on',
  'at',
  'if',
  'my',
  'your',
  'our',
  'their',
  'um',
  'uh',
  'er',
  'erm',
  'hmm',
  'like',
  'than',
  'that',
  'which',
  'is',
  'are',
]);
const QUESTION_OPENERS = new Set([
  'what',
  'where',
  'when',
  'who',
  'whom',
  'whose',
  'why',
  'how',
  'which',
  'can',
  'could',
  'do',
  'does',
  'did',
  'is',
  'are',
  'was',
  'were',
  'will',
  'would',
  'should',
  'shall',
  'may',
  'have',
  'has',
]);

export type Completeness = 'complete' | 'hanging' | 'unknown';

/** A rule on the words heard so far: does the turn read as finished? */
export function completeness(text: string | undefined): Completeness {
  if (!text) return 'unknown';
  const trimmed = text.trim();
  if (!trimmed) return 'unknown';
  if (/[?.!。？！]["')\]]*$/.test(trimmed)) return 'complete';
  const words = trimmed
    .toLowerCase()
    .replace(/[^\p{L}\p{N}' ]+/gu, ' ')
    .split(/\s+/)
    .filter(Boolean);
  if (words.length === 0) return 'unknown';
  if (HANGING.has(words[words.length - 1])) return 'hanging';
  if (words.length >= 3 && QUESTION_OPENERS.has(words[0])) return 'complete';
  return 'unknown';
}

export class EndOfTurn {
  private readonly pauses: number[] = [];
  private adapted: number;

  constructor(private readonly options: EndOfTurnOptions = END_OF_TURN_DEFAULTS) {
    this.adapted = options.silenceMs;
  }

  /** A pause inside a turn that the visitor resumed from. */
  recordPause(ms: number): void {
    if (ms < PAUSE_FLOOR_MS) return;
    this.pauses.push(ms);
    if (this.pauses.length > PAUSES_KEPT) this.pauses.shift();
    if (this.pauses.length < PAUSES_NEEDED) return;
    const sorted = [...this.pauses].sort((a, b) => a - b);
    const p90 = sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.9))];
    this.adapted = clamp(p90 + MARGIN_MS, this.options.minSilenceMs, this.options.maxSilenceMs);
  }

  /**
   * Silence (ms) that ends the turn, given the words heard so far if any and how the pitch of the
   * last voiced stretch ends. Words first: a hanging word waits long whatever the pitch, a complete
   * question or sentence ends soon. Without telling words, a falling end (a turn-yielding cue) ends
   * sooner, a level end (a turn-holding cue) waits longer, a rising end (a question yields, a list
   * continues) ends between the two, and no pitch waits the silence the visitor's pauses have taught.
   */
  silenceNeeded(text?: string, pitch: PitchEnd = 'unknown'): number {
    const kind = completeness(text);
    if (kind === 'complete') return Math.min(this.adapted, this.options.completeSilenceMs);
    if (kind === 'hanging') return Math.max(this.adapted, this.options.hangingSilenceMs);
    if (pitch === 'falling' && this.options.fallingSilenceMs > 0) return Math.min(this.adapted, this.options.fallingSilenceMs);
    if (pitch === 'level' && this.options.levelSilenceMs > 0) return Math.max(this.adapted, this.options.levelSilenceMs);
    if (pitch === 'rising' && this.options.risingSilenceMs > 0) return Math.min(this.adapted, this.options.risingSilenceMs);
    return this.adapted;
  }

  /** The silence the visitor's pauses have taught so far. */
  adaptedSilence(): number {
    return this.adapted;
  }
}

function clamp(value: number, min: number, max: number): number {
  return Math.max(min, Math.min(max, value));
}
