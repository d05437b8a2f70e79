/**
 * An answer of the live loop as it is given: the one being generated and spoken, the one prepared
 * ahead of the end of the visitor's turn, and the latency waterfall recorded with it.
 */
import type { ConversationTurn } from '../brain/engine.js';
import type { Generation } from './generation.js';
import type { HeldSpeech } from './held-speech.js';
import type { VisitorTurnHeard } from './listening/index.js';
import { PLAYOUT_MARGIN_MS } from './voicing.js';

/** An answer being generated and spoken. */
export interface Answer {
  controller: AbortController;
  generation: Generation;
  utteranceId: string;
  language: string;
  /** performance.now() of each step. */
  startedAt: number;
  /** When the answer was prepared ahead of the end of the turn: when its preparation began. */
  preparedAt?: number;
  firstAudioAt?: number;
  fillerAt?: number;
  firstAudio: Promise<void>;
  markFirstAudio(): void;
}

/** An answer prepared before the visitor's turn has ended (preemptive generation), not yet committed. */
export interface Prepared {
  /** The listener's turn it answers, and the words it was built on. */
  turn: number;
  text: string;
  language: string;
  /** The history it was built on (the same turn objects as the conversation's at the time). */
  history: ConversationTurn[];
  sampleRate: number;
  generation: Generation;
  /** Its first audio, voiced and held (undefined: text only, the voice starts at commit). */
  speech?: HeldSpeech;
  startedAt: number;
}

/**
 * Milliseconds from the end of the visitor's speech (typed and API turns: from arrival) to each
 * step, cumulative. `heard` adds the page's playout margin to the first audio leaving the server.
 */
export function waterfall(answer: Answer, heard: VisitorTurnHeard | undefined) {
  const origin = heard?.timings.speechEndedAt ?? answer.startedAt;
  const ms = (at: number | undefined) => (at === undefined ? null : Math.round(at - origin));
  return {
    end_of_turn: heard ? ms(heard.timings.turnEndedAt) : 0,
    recognised: heard ? ms(heard.timings.recognisedAt) : 0,
    // Prepared ahead: the answer began before the turn ended, so first_text may precede end_of_turn.
    ...(answer.preparedAt !== undefined && { prepared: ms(answer.preparedAt) }),
    first_text: ms(answer.generation.firstTextAt),
    first_audio: ms(answer.firstAudioAt),
    heard: answer.firstAudioAt === undefined ? null : ms(answer.firstAudioAt + PLAYOUT_MARGIN_MS),
    ...(answer.fillerAt !== undefined && { filler: ms(answer.fillerAt) }),
  };
}

/** Words compared as heard: case and spacing aside. */
export function normalise(text: string): string {
  return text.toLowerCase().replace(/\s+/g, ' ').trim();
}

/** The same turns (the same objects, in order): nothing was said or recorded since. */
export function sameTurns(a: ConversationTurn[], b: ConversationTurn[]): boolean {
  return a.length === b.length && a.every((turn, i) => turn === b[i]);
}
