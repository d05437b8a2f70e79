/**
 * The listening side of a conversation, per session: microphone audio in (16 kHz mono, from the
 * player channel), visitor turns out. Voice activity detection per frame, end-of-turn detection,
 * barge-in, and a guard against the agent's own voice leaking back through the microphone.
 *
 *   mic PCM ─▶ Listener.push() ─▶ VAD ─▶ end of turn ─▶ Recognizer ─▶ 'turn' event
 *                                   └──▶ while the agent talks: pause ─▶ 'barge_in' (or resume)
 */
import type { Transcript } from '../../speech/recognition/types.js';

export interface VisitorTurnHeard extends Transcript {
  /** The listener's number for this turn (the `turn` of its `tentative` words, if any were told). */
  turn: number;
  /** The recogniser that heard it (`Recognizer.name`), for the latency waterfall. */
  engine: string;
  /** performance.now() milliseconds of each step, for the latency waterfall. */
  timings: {
    /** The visitor's last voiced frame (end of speech). */
    speechEndedAt: number;
    /** End of turn decided. */
    turnEndedAt: number;
    /** Transcript ready. */
    recognisedAt: number;
  };
  /** Seconds of visitor speech in the turn. */
  speechSeconds: number;
}

/** A turn's words that look final while the turn has not ended yet (see `ListenerEvents.tentative`). */
export interface TentativeTurn {
  /** The listener's number for the turn; the turn, once it ends, is reported with the same number. */
  turn: number;
  text: string;
  /** ISO 639-1 code, when the engine detected the language. */
  language?: string;
  /** performance.now() of the visitor's last voiced frame (end of speech). */
  speechEndedAt: number;
}

export interface ListenerEvents {
  /** The visitor started speaking (VAD), for the "listening" indication. */
  speechStarted?(): void;
  /** Growing text of the turn, from streaming engines. */
  partial?(text: string): void;
  /**
   * The visitor's voice has just begun over the agent (a few frames the echo guard gives to the
   * visitor): pause the agent until `bargeIn` confirms it or `bargeInDropped` takes it back.
   */
  bargeInStarted?(): void;
  /** The visitor spoke over the agent long enough to mean it (not "mm-hm", not the agent's echo). */
  bargeIn?(): void;
  /** What paused the agent was no barge-in (a back-channel, a cough, no words): the agent goes on. */
  bargeInDropped?(): void;
  /**
   * The turn's words look final before the turn has ended: the live recogniser closed its phrase at
   * the visitor's pause (or the speculative recognition finished) and the visitor has been silent
   * since. The turn may still go on, or end with other words: the conversation may prepare its
   * answer meanwhile (preemptive generation), and must check the words of the `turn` that follows.
   */
  tentative?(turn: TentativeTurn): void;
  /** The visitor spoke again after `tentative`, or that turn will not be reported: its words are not the turn's end. */
  tentativeDropped?(): void;
  /** The end of a turn was decided (the silence was long enough); its words follow in `turn`, if it had any. */
  turnEnded?(): void;
  /** A complete visitor turn, recognised. Empty text is never reported. */
  turn(turn: VisitorTurnHeard): void;
  /** Recognition failed for a turn (engine down); the typed path still works. */
  error?(error: Error): void;
}

export interface AgentPlayback {
  /**
   * The agent's audio that leaves toward the player (any rate, mono), `atMs` being when its first
   * sample is sent, on the clock of `push` (for the echo guard; the guard finds the delay itself).
   */
  agentAudio(pcm: Int16Array, sampleRate: number, atMs: number): void;
  /** Whether the agent is talking now (barge-in only counts then). */
  setAgentTalking(talking: boolean): void;
}

export interface Listener extends AgentPlayback {
  /**
   * Microphone audio, 16 kHz mono, as it arrives (any piece size). `receivedAtMs` is when it
   * arrived, on the same clock as `agentAudio`'s `atMs` (performance.now(), or the listener's `now`).
   * `lostBefore`: samples captured just before it that never came (dated around, mic-clock.ts).
   */
  push(pcm: Int16Array, receivedAtMs: number, lostBefore?: number): void;
  /** Languages the visitor may speak, first the expected one. */
  setLanguages(languages: string[]): void;
  close(): void;
}
