/**
 * The realtime capability's entry point: makes the live side of each session, and routes
 * commands, the render socket and player sockets to it.
 */
import { LRUCache } from 'lru-cache';
import type { Backdrop } from '../catalog/backdrops.js';
import type { SessionRow } from '../sessions/service.js';
import { RealtimeHub } from './hub.js';
import { RealtimeSession, type Speaker, type Stage } from './session.js';
import { dispatch } from './commands.js';
import { CLOSE_INTERNAL_ERROR, CLOSE_SERVER_RESTART, CLOSE_SESSION_ENDED, DEFAULT_SAMPLE_RATE, type RealtimeHttpCommand } from './protocol.js';
import { preloadDictionary } from './lipsync/text-visemes.js';
import type { FaceRecord } from './player-protocol.js';

/** Makes the speaker for a session's voice (the speech layer). */
/** `sessionId` lets billing count a premium provider's speech per session. */
export type SpeakerFactory = (voice: { provider: string; voiceId: string; language?: string; sessionId?: string }) => Speaker;

/** What the live side needs of the studio catalog (a shard has only the built-in backdrops and its sessions' faces). */
export interface HelloStudio {
  face(id: string, accountId?: number): FaceRecord | undefined;
  backdrop(id: string): Backdrop | undefined;
  hasBackdrop(id: string): boolean;
}

export interface RenderSocketLike {
  close(code: number, reason: string): void;
}

/** Ended sessions a process remembers (the most recent), so a stale row cannot reopen one. */
const REMEMBERED_ENDS = 10_000;

export class RealtimeService {
  readonly hub = new RealtimeHub();
  /** Sessions ended here, and why: a row read before the end (a socket's lookup, a shard's queue) is stale. */
  private readonly endedReasons = new LRUCache<string, string>({ max: REMEMBERED_ENDS });
  /** The render socket attached to each session, if any. */
  readonly renderSockets = new Map<string, RenderSocketLike>();

  /** Where faults are logged (the server's logger once sockets are registered). */
  log: { error(details: object, message: string): void } = { error: (details, message) => console.error(message, details) };

  constructor(
    private readonly studio: HelloStudio,
    private readonly speakerFor: SpeakerFactory,
  ) {
    void preloadDictionary().catch(() => {});
    this.hub.onFault = (session, error) => {
      this.log.error({ err: error, session_id: session.id }, 'playback clock failed for one session; its queue was dropped and its render socket closed');
      try {
        session.reset();
      } catch {
        /* the session is already as empty as it can be made */
      }
      this.renderSockets.get(session.id)?.close(CLOSE_INTERNAL_ERROR, 'internal error');
    };
  }

  open(row: Pick<SessionRow, 'id' | 'look' | 'voice_provider' | 'voice_id'>): RealtimeSession {
    const look = row.look;
    const stage: Stage = {
      camera: look.camera === 'auto' ? (look.cameras.includes('mid') ? 'mid' : look.cameras[0]) : look.camera,
      camera_mode: look.camera === 'auto' ? 'auto' : 'manual',
      hold: false,
      backdrop: look.backdrop,
      cameras: look.cameras,
      face_light: look.face_light,
    };
    const session = new RealtimeSession({
      sessionId: row.id,
      sampleRate: DEFAULT_SAMPLE_RATE,
      stage,
      speaker: this.speakerFor({ provider: row.voice_provider, voiceId: row.voice_id, sessionId: row.id }),
      findBackdrop: (id) => this.studio.backdrop(id),
    });
    this.hub.add(session);
    return session;
  }

  get(sessionId: string): RealtimeSession | undefined {
    return this.hub.get(sessionId);
  }

  /** Opens the live side lazily (e.g. after a restart on PostgreSQL, for a session still active). */
  ensure(row: SessionRow): RealtimeSession {
    return this.hub.get(row.id) ?? this.open(row);
  }

  /**
   * The row as this process knows it: a session that ended here since the row was read is ended.
   * A socket authenticated just before its session ended must not open its live side again.
   */
  current(row: SessionRow): SessionRow {
    const reason = this.endedReasons.get(row.id);
    return reason === undefined ? row : ({ ...row, status: 'ended', end_reason: reason } as SessionRow);
  }

  end(sessionId: string, reason: string): void {
    this.endedReasons.set(sessionId, reason);
    const session = this.hub.remove(sessionId);
    session?.player.json({ type: 'ended', reason });
    session?.player.close(1000, 'session ended');
    const socket = this.renderSockets.get(sessionId);
    this.renderSockets.delete(sessionId);
    socket?.close(CLOSE_SESSION_ENDED, `session ended: ${reason}`);
  }

  command(row: SessionRow, command: RealtimeHttpCommand, eventId: string): void {
    dispatch(this.ensure(row), command, eventId, { hasBackdrop: (id) => this.studio.hasBackdrop(id) });
  }

  /**
   * The node shuts down. Its sessions are not ended by that (on PostgreSQL they stay active and
   * another node, or this one restarted, carries them on; on the embedded database the next start
   * ends them as `server_restart`), so pages and render sockets are told to reconnect, not that the
   * session ended.
   */
  stop(): void {
    for (const id of this.hub.ids()) {
      const session = this.hub.remove(id);
      session?.player.close(CLOSE_SERVER_RESTART, 'server restarting');
      this.renderSockets.get(id)?.close(CLOSE_SERVER_RESTART, 'server restarting');
      this.renderSockets.delete(id);
    }
    this.hub.stop();
  }
}
