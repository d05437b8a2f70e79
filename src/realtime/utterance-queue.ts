/**
 * Utterances waiting to play, in order. Audio arrives here (faster than real time is fine); the
 * playback clock takes it out frame by frame. Nothing here knows about time.
 */
import { analysePiece, type PieceTrack } from './lipsync/analysis.js';
import type { Slab } from './slab.js';
import type { SpeechPiece } from '../speech/piece.js';
import type { CameraName } from './player-protocol.js';

/** A piece of speech (speech/piece.ts) as the queue keeps it, with the queue's bookkeeping. */
export interface QueuedPiece extends SpeechPiece {
  /** performance.now() when the piece arrived (for the relay-delay metric). */
  arrivedAt?: number;
  /** Lip-sync features, computed when the piece is first played (see lipsync/). */
  track?: PieceTrack;
  /** The slab `pcm` was cut from: given back once the piece has played through. */
  slab?: Slab;
}

export type TimedActionKind = 'cue' | 'camera' | 'backdrop';
/** A cue, camera move or backdrop change at a time into an utterance (agent.cue, stage.camera, stage.backdrop). */
export type TimedAction = { atSeconds: number; eventId: string } & (
  | { kind: 'cue'; payload: { name: string; intensity: number } }
  | { kind: 'camera'; payload: { camera: CameraName; hold: boolean } }
  | { kind: 'backdrop'; payload: { backdrop: string | null } }
);

export class Utterance {
  /** Pieces not yet played through, the one playing first. */
  readonly pieces: QueuedPiece[] = [];
  sealed = false;
  /** Session-clock time its first audio left; undefined until it starts. */
  startedAt?: number;
  /** Session-clock time the next frame is due. */
  cursor = 0;
  pieceOffset = 0;
  receivedSamples = 0;
  releasedSamples = 0;
  starving = false;
  /** A playback_late warning was sent for it (once per utterance). */
  lateWarned = false;
  /** Timed actions waiting for this utterance to start (then they move to the session's heap). */
  readonly actions: TimedAction[] = [];
  /** Characters of text waiting: agent.speak texts not yet played, or agent.speak_text not yet voiced. */
  waitingChars = 0;
  /** Aborts a speech synthesis feeding this utterance (agent.speak_text). */
  abort?: AbortController;

  constructor(
    readonly id: string,
    readonly sampleRate: number,
    readonly source: 'audio' | 'text',
  ) {}

  add(piece: QueuedPiece): void {
    if (piece.pcm.length === 0 && !piece.text) return;
    this.pieces.push(piece);
    this.receivedSamples += piece.pcm.length;
    if (piece.text) this.waitingChars += piece.text.length;
  }

  /** Pieces not yet played through (the one playing included). */
  get waitingPieces(): number {
    return this.pieces.length;
  }

  get pendingSamples(): number {
    return this.receivedSamples - this.releasedSamples;
  }

  get started(): boolean {
    return this.startedAt !== undefined;
  }

  /** Everything received has left and nothing more will come. */
  get drained(): boolean {
    return this.sealed && this.pendingSamples === 0;
  }

  /** Takes the next frame of at most `maxSamples`, never crossing a piece boundary. */
  takeFrame(maxSamples: number): { piece: QueuedPiece; offset: number; length: number } | undefined {
    while (this.pieces.length) {
      const piece = this.pieces[0];
      const rest = piece.pcm.length - this.pieceOffset;
      if (rest > 0) {
        const length = Math.min(rest, maxSamples);
        const frame = { piece, offset: this.pieceOffset, length };
        this.pieceOffset += length;
        this.releasedSamples += length;
        return frame;
      }
      if (piece.text) this.waitingChars -= piece.text.length;
      this.pieceOffset = 0;
      // A played piece is dropped at once (its frames were copied out as they left), and its
      // memory goes back to its slab for the next pieces.
      this.pieces.shift();
      piece.slab?.give(piece.pcm.buffer as ArrayBuffer);
    }
    return undefined;
  }
}

export class UtteranceQueue {
  readonly items: Utterance[] = [];
  /** The utterance that receives caller audio; closed by speak_end or interrupt. */
  open?: Utterance;

  get head(): Utterance | undefined {
    return this.items[0];
  }

  /** Seconds of audio received and not yet played, over all utterances. */
  queuedSeconds(): number {
    let seconds = 0;
    for (const u of this.items) seconds += u.pendingSamples / u.sampleRate;
    return seconds;
  }

  /** What waits, over all utterances (at most MAX_QUEUED_UTTERANCES of them, so this stays cheap). */
  waiting(): { seconds: number; pieces: number; chars: number; actions: number } {
    let seconds = 0;
    let pieces = 0;
    let chars = 0;
    let actions = 0;
    for (const u of this.items) {
      seconds += u.pendingSamples / u.sampleRate;
      pieces += u.waitingPieces;
      chars += u.waitingChars;
      actions += u.actions.length;
    }
    return { seconds, pieces, chars, actions };
  }

  push(utterance: Utterance): void {
    this.items.push(utterance);
  }

  shift(): Utterance | undefined {
    const u = this.items.shift();
    if (u === this.open) this.open = undefined;
    return u;
  }

  clear(): Utterance[] {
    const dropped = this.items.splice(0);
    this.open = undefined;
    return dropped;
  }

  /** The utterance at_seconds actions aim at: the one playing, else the next to play. */
  target(): Utterance | undefined {
    const head = this.items[0];
    if (head && head.started) return head;
    return this.items.find((u) => !u.started);
  }

  ensureTrack(piece: QueuedPiece, sampleRate: number): PieceTrack {
    piece.track ??= analysePiece(piece.pcm, sampleRate, piece.text, piece.words);
    return piece.track;
  }
}
