/**
 * Player out: the last stage of the real-time path. Sends the audio and its animation track to
 * every player page of the session (docs/player-protocol.md). A frame's track and its audio travel
 * in one binary message (frame-codec.ts), packed once into memory from the session's slab with its
 * WebSocket header in front and written to each page's TCP socket in one write.
 */
import type { Socket } from 'node:net';
import { FRAME_SECONDS, type PieceTrack } from './lipsync/analysis.js';
import { encodeFrame, FRAME_HEADER_BYTES, trackLength, utteranceBytes, type TrackContent } from './frame-codec.js';
import { Slab } from './slab.js';
import { realtimeMetrics } from './metrics.js';
import type { HelloMessage, PlayerMessage } from './player-protocol.js';

/** What PlayerOut needs of a socket (a `ws` WebSocket). */
export interface PlayerSocket {
  readonly readyState: number;
  /** Bytes queued in the process and not yet handed to the kernel. */
  readonly bufferedAmount: number;
  send(data: string | Buffer, options?: { binary?: boolean }): void;
  close(code?: number, reason?: string): void;
  terminate(): void;
  /** The negotiated extensions (ws): frames written past ws must not need any (e.g. compression). */
  readonly extensions?: string;
}

export interface PlayerConnection {
  socket: PlayerSocket;
  /**
   * The page's TCP socket under the WebSocket (ws keeps it as `_socket`), to which frames are
   * written whole, WebSocket header included: ws's own send would add a header buffer, a cork and
   * a two-part write per frame. Unset (other sockets, tests): frames go through `send`.
   */
  raw?: Socket;
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

/**
 * Frames are packed here (slab.ts): shared by every session, since a frame lives only until the
 * kernel takes it (longer only for a page that is falling behind, at most `highWaterBytes`). A
 * frame the kernel took at once is given back, so the slab is recycled and a steady stream of
 * frames allocates no memory.
 */
const frameSlab = new Slab(16 * 1024);

/** A frame's track content, reused frame after frame (one session's frames are packed one at a time). */
function scratchContent(): TrackContent & { mouth: Uint8Array; visemes: Uint8Array } {
  return { utterance: '', t0: 0, duration: 0, mouth: new Uint8Array(255), mouthCount: 0, visemes: new Uint8Array(255 * 3), visemeCount: 0 };
}

export class PlayerOut {
  readonly connections = new Set<PlayerConnection>();
  private seq = 0;
  private readonly content = scratchContent();
  private utterance = '';
  private utteranceUtf8: Uint8Array = new Uint8Array(0);
  /** The message that resynchronises a page that fell behind (the session's current `hello`). */
  /** The hello a page that fell behind gets again (set when the session's page is attached). */
  resync?: () => HelloMessage;

  add(socket: PlayerSocket): PlayerConnection {
    // Only a plain socket: with an extension negotiated (compression), every frame goes through ws.
    const raw = socket.extensions ? undefined : (socket as { _socket?: Socket })._socket;
    const connection: PlayerConnection = { socket, raw: typeof raw?.write === 'function' ? raw : undefined, lagging: false, laggingSince: 0, skippedFrames: 0 };
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
      if (this.resync) c.socket.send(JSON.stringify({ ...this.resync(), resync: true, skipped_frames: c.skippedFrames } satisfies HelloMessage));
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

  json(message: PlayerMessage): void {
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
    if (utterance !== this.utterance) {
      this.utterance = utterance;
      this.utteranceUtf8 = utteranceBytes(utterance);
    }
    const content = trackContent(this.content, utterance, t, offset, length, sampleRate, track);
    const payload = FRAME_HEADER_BYTES + trackLength(content, this.utteranceUtf8) + length * 2;
    // The WebSocket frame header: FIN + binary, then the payload length (a frame is under 64 KB).
    const header = payload < 126 ? 2 : 4;
    const { buffer, offset: at } = frameSlab.take(header + payload);
    const bytes = new Uint8Array(buffer, at, header + payload);
    const view = new DataView(buffer, at, header + payload);
    bytes[0] = 0x82;
    if (header === 2) bytes[1] = payload;
    else {
      bytes[1] = 126;
      view.setUint16(2, payload);
    }
    encodeFrame(view, bytes, header, this.seq++, t, content, this.utteranceUtf8, pcm, offset, length);
    let framed: Buffer | undefined;
    // Whether some socket may still read the frame's memory later (its write was queued).
    let held = false;
    for (const c of this.connections) {
      if (this.writable(c)) {
        if (c.raw) {
          c.raw.write((framed ??= Buffer.from(buffer, at, header + payload)));
          if (c.raw.writableLength > 0) held = true;
        } else {
          c.socket.send(Buffer.from(buffer, at + header, payload), { binary: true });
          held = true;
        }
      } else if (c.lagging) {
        c.skippedFrames++;
        realtimeMetrics.playerFramesSkipped++;
      }
    }
    // Written whole into the kernel's buffers: the slab may reuse the memory.
    if (!held) frameSlab.give(buffer);
  }

  close(code: number, reason: string): void {
    for (const c of this.connections) c.socket.close(code, reason);
    this.connections.clear();
  }
}

/** The track of one frame: its part of the piece's 10 ms grid, viseme changes only. */
function trackContent(
  into: ReturnType<typeof scratchContent>,
  utterance: string,
  t: number,
  offset: number,
  length: number,
  sampleRate: number,
  track: PieceTrack,
): TrackContent {
  const frameLength = Math.round(sampleRate * FRAME_SECONDS);
  const first = Math.floor(offset / frameLength);
  const last = Math.min(track.mouth.length, Math.ceil((offset + length) / frameLength), first + 255);
  into.utterance = utterance;
  into.t0 = t + (first * frameLength - offset) / sampleRate; // <= t: the 10 ms grid relative to t
  into.duration = length / sampleRate;
  into.mouthCount = Math.max(0, last - first);
  into.visemeCount = 0;
  let previous = -1;
  for (let f = first, k = 0; f < last; f++, k++) {
    into.mouth[k] = track.mouth[f];
    const v = track.viseme[f];
    if (v !== previous) {
      const i = into.visemeCount++ * 3;
      into.visemes[i] = k;
      into.visemes[i + 1] = v;
      into.visemes[i + 2] = track.weight[f];
      previous = v;
    }
  }
  return into;
}
