/**
 * Player out: the last stage of the real-time path. Sends the audio and its animation track to
 * every player page of the session (docs/player-protocol.md). A frame's track and its audio travel
 * in one binary message, so 500 sessions cost one socket write per frame each.
 */
import { VISEMES } from './lipsync/visemes.js';
import { FRAME_SECONDS, type PieceTrack } from './lipsync/analysis.js';
import { realtimeMetrics } from './metrics.js';

/** What PlayerOut needs of a socket (a `ws` WebSocket). */
export interface PlayerSocket {
  readonly readyState: number;
  /** Bytes queued in the process and not yet handed to the kernel. */
  readonly bufferedAmount: number;
  send(data: string | Buffer, options?: { binary?: boolean }): void;
  close(code?: number, reason?: string): void;
  terminate(): void;
}

export interface PlayerConnection {
  socket: PlayerSocket;
  /** Frames and messages are being skipped for it until its send buffer drains. */
  lagging: boolean;
  laggingSince: number;
  /** Frames skipped over the connection's life. */
  skippedFrames: number;
}

/**
 * Bounds on what a slow or stalled page can make the server hold (docs/player-protocol.md,
 * "Slow connections"): past `highWaterBytes` waiting to be sent, its frames and messages are
 * skipped; once under `lowWaterBytes` it gets a fresh `hello` (resync) and frames again; a page
 * that stays behind for `maxLaggingMs` is closed with 4008 (it reconnects by itself).
 */
export const playerLimits = {
  /** About 5 s of 24 kHz audio with its tracks. */
  highWaterBytes: 512 * 1024,
  lowWaterBytes: 64 * 1024,
  maxLaggingMs: 30_000,
};
export const CLOSE_PLAYER_TOO_SLOW = 4008;

/** Bit 31 of a binary frame's first word: a track message is packed in front of the samples. */
export const TRACK_FLAG = 0x80000000;

export class PlayerOut {
  readonly connections = new Set<PlayerConnection>();
  private seq = 0;
  /** The message that resynchronises a page that fell behind (the session's current `hello`). */
  resync: () => Record<string, unknown> = () => ({ type: 'resync' });

  add(socket: PlayerSocket): PlayerConnection {
    const connection = { socket, lagging: false, laggingSince: 0, skippedFrames: 0 };
    this.connections.add(connection);
    return connection;
  }

  /**
   * Whether this connection takes a message now. A page whose send buffer passed the high-water
   * mark is skipped (the server holds at most about that much for it) until it drains, then it is
   * sent a resync first.
   */
  private writable(c: PlayerConnection): boolean {
    if (c.socket.readyState !== 1) return false;
    const buffered = c.socket.bufferedAmount;
    if (c.lagging) {
      if (buffered > playerLimits.lowWaterBytes) {
        if (performance.now() - c.laggingSince > playerLimits.maxLaggingMs) {
          c.socket.close(CLOSE_PLAYER_TOO_SLOW, 'the page could not keep up');
          this.connections.delete(c);
        }
        return false;
      }
      c.lagging = false;
      c.socket.send(JSON.stringify({ ...this.resync(), resync: true, skipped_frames: c.skippedFrames }));
      return true;
    }
    if (buffered > playerLimits.highWaterBytes) {
      c.lagging = true;
      c.laggingSince = performance.now();
      realtimeMetrics.playerLagSpells++;
      return false;
    }
    return true;
  }

  remove(connection: PlayerConnection): void {
    this.connections.delete(connection);
  }

  json(message: Record<string, unknown>): void {
    if (!this.connections.size) return;
    const text = JSON.stringify(message);
    for (const c of this.connections) if (this.writable(c)) c.socket.send(text);
  }

  /**
   * One audio frame (samples [offset, offset+length) of a piece) starting at session time `t`,
   * with its lip-sync track packed in the same binary message: one message (one socket write)
   * per frame, built once and shared by every player of the session.
   */
  frame(utterance: string, t: number, pcm: Int16Array, offset: number, length: number, sampleRate: number, track: PieceTrack): void {
    if (!this.connections.size) return;
    let json = JSON.stringify(buildTrack(utterance, t, offset, length, sampleRate, track));
    // Pad with JSON whitespace so the samples start 2-byte aligned.
    let trackBytes = Buffer.byteLength(json);
    if (trackBytes % 2) {
      json += ' ';
      trackBytes++;
    }
    const message = Buffer.allocUnsafe(16 + trackBytes + length * 2);
    message.writeUInt32LE(((this.seq++ & 0x7fffffff) | TRACK_FLAG) >>> 0, 0);
    message.writeDoubleLE(t, 4);
    message.writeUInt32LE(trackBytes, 12);
    message.write(json, 16, 'utf8');
    message.set(new Uint8Array(pcm.buffer, pcm.byteOffset + offset * 2, length * 2), 16 + trackBytes);
    for (const c of this.connections) {
      if (this.writable(c)) c.socket.send(message, { binary: true });
      else if (c.lagging) {
        c.skippedFrames++;
        realtimeMetrics.playerFramesSkipped++;
      }
    }
  }

  close(code: number, reason: string): void {
    for (const c of this.connections) c.socket.close(code, reason);
    this.connections.clear();
  }
}

/** The track message for one frame: visemes (changes only) and mouth openness per 10 ms. */
export function buildTrack(utterance: string, t: number, offset: number, length: number, sampleRate: number, track: PieceTrack) {
  const frameLength = Math.round(sampleRate * FRAME_SECONDS);
  const first = Math.floor(offset / frameLength);
  const last = Math.min(track.mouth.length, Math.ceil((offset + length) / frameLength));
  const lead = (first * frameLength - offset) / sampleRate; // <= 0: the 10 ms grid relative to t
  const visemes: Array<[number, string, number]> = [];
  const mouth: number[] = [];
  let previous = -1;
  for (let f = first; f < last; f++) {
    const v = track.viseme[f];
    if (v !== previous) {
      visemes.push([round3(t + lead + (f - first) * FRAME_SECONDS), VISEMES[v], round2(track.weight[f] / 255)]);
      previous = v;
    }
    mouth.push(round2(track.mouth[f] / 255));
  }
  return { type: 'track', utterance, t: round3(t), duration: round3(length / sampleRate), visemes, mouth: { t0: round3(t + lead), step: FRAME_SECONDS, values: mouth } };
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;
const round2 = (x: number) => Math.round(x * 100) / 100;
