/**
 * What the main process and a shard process say to each other over the IPC channel (structured
 * clone: rows, Dates and PCM arrive as they were sent). Sockets travel as the message's handle.
 */
import type { SessionRow } from '../../sessions/service.js';
import type { RealtimeHttpCommand } from '../protocol.js';
import type { RealtimeSnapshot } from '../metrics.js';

/** The parts of an upgrade request a shard needs to finish the WebSocket handshake. */
export interface UpgradeRequest {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
}

export type ToShard =
  /** A session's live side opens (its face rides along for the player's hello). */
  | { type: 'open'; row: SessionRow; face: unknown }
  | { type: 'end'; sessionId: string; reason: string }
  | { type: 'command'; row: SessionRow; face: unknown; command: RealtimeHttpCommand; eventId: string }
  /** With the socket as handle: an authenticated upgrade for the session's render or player socket. */
  | { type: 'socket'; kind: 'render' | 'player'; row: SessionRow; face: unknown; request: UpgradeRequest; head: Uint8Array; sampleRate?: string }
  /** Speech for a shard's speak_text, piece by piece, then done or an error. */
  | {
      type: 'speech';
      id: number;
      piece?: { pcm: Int16Array; text?: string; words?: Array<{ word: string; start: number; end: number }> };
      done?: boolean;
      error?: string;
    }
  | { type: 'metrics'; id: number }
  | { type: 'stop' };

export type FromShard =
  | { type: 'ready' }
  | { type: 'speak'; id: number; voice: { provider: string; voiceId: string; language?: string; sessionId?: string }; text: string; sampleRate: number }
  | { type: 'speak_abort'; id: number }
  | { type: 'metrics'; id: number; snapshot: RealtimeSnapshot }
  | { type: 'log'; level: 'error' | 'warn' | 'info'; details: Record<string, unknown>; message: string };
