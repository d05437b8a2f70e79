/**
 * The realtime capability's entry point: makes the live side of each session, and routes
 * commands, the render socket and player sockets to it.
 */
import type { StudioCatalog } from '../catalog/catalog.js';
import type { SessionRow } from '../sessions/service.js';
import { RealtimeHub } from './hub.js';
import { RealtimeSession, type Speaker, type Stage } from './session.js';
import { dispatch } from './commands.js';
import { CLOSE_SESSION_ENDED, DEFAULT_SAMPLE_RATE, type HttpCommand } from './protocol.js';
import { preloadDictionary } from './lipsync/text-visemes.js';

/** Makes the speaker for a session's voice (the speech layer). */
export type SpeakerFactory = (voice: { provider: string; voiceId: string; language?: string }) => Speaker;

export interface RenderSocketLike {
  close(code: number, reason: string): void;
}

export class RealtimeService {
  readonly hub = new RealtimeHub();
  /** The render socket attached to each session, if any. */
  readonly renderSockets = new Map<string, RenderSocketLike>();

  constructor(private readonly studio: StudioCatalog, private readonly speakerFor: SpeakerFactory) {
    void preloadDictionary().catch(() => {});
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
      speaker: this.speakerFor({ provider: row.voice_provider, voiceId: row.voice_id }),
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

  end(sessionId: string, reason: string): void {
    const session = this.hub.remove(sessionId);
    session?.player.json({ type: 'ended', reason });
    session?.player.close(1000, 'session ended');
    const socket = this.renderSockets.get(sessionId);
    this.renderSockets.delete(sessionId);
    socket?.close(CLOSE_SESSION_ENDED, `session ended: ${reason}`);
  }

  command(row: SessionRow, command: HttpCommand, eventId: string): void {
    dispatch(this.ensure(row), command, eventId, { hasBackdrop: (id) => this.studio.hasBackdrop(id) });
  }

  stop(): void {
    for (const id of this.hub.ids()) this.end(id, 'server_shutdown');
    this.hub.stop();
  }
}
