/**
 * The routes of a session's two WebSockets in the main process: the caller's render socket
 * (token-authenticated) and the visitor's player socket. They stay thin: authenticate, then hand
 * the socket to attach.ts here, or (render mode with REALTIME_SHARDS) to the shard process that
 * carries the session (shards/upgrade-router.ts).
 */
import type { FastifyInstance } from 'fastify';
import type { SessionService, SessionRow } from '../sessions/service.js';
import type { StudioCatalog } from '../catalog/catalog.js';
import type { RealtimeService } from './service.js';
import type { RealtimeSession } from './session.js';
import type { PlayerInputState } from './player-in.js';
import type { VisitorInputs } from './visitor-input.js';
import { serveRenderSocket, servePlayerSocket, type SocketDeps } from './attach.js';
import type { ShardPool } from './shards/pool.js';
import { handOffUpgrades } from './shards/upgrade-router.js';
import { renderSessionFor, renderToken } from './socket-auth.js';

export { helloFor } from './attach.js';

export interface SessionSockets {
  /** A session's page input figures (tests and diagnostics). */
  inputState(sessionId: string): PlayerInputState | undefined;
}

/**
 * `inputs` finds a session's live conversation; `liveFor` opens it when a page connects to a
 * session this process has not opened yet (it was started on another node, or before a restart
 * of this one on a shared PostgreSQL), so the visitor is heard there too. `shards`: render-mode
 * sessions' sockets go to the shard process that carries them.
 */
/** Pages waiting at once for a session that has not started (LiveAvatar tokens' player_url). */
const MAX_WAITING_PAGES = 1000;
/** How long a page waits before its socket is closed to reconnect (1013, "try again later"). */
const PAGE_WAIT_MS = 10 * 60_000;
const PAGE_POLL_MS = 500;

/**
 * `pendingPlayer` says whether a player key was handed out for a session that has not started yet
 * (a LiveAvatar token's player_url): its page's socket waits for the session instead of closing.
 */
export function registerSessionSockets(
  app: FastifyInstance,
  sessions: SessionService,
  realtime: RealtimeService,
  studio: StudioCatalog,
  inputs: VisitorInputs = () => null,
  liveFor: (row: SessionRow) => void = () => {},
  shards?: ShardPool,
  pendingPlayer?: (playerKey: string) => Promise<boolean>,
): SessionSockets {
  realtime.log = app.log;
  const inputStates = new WeakMap<RealtimeSession, PlayerInputState>();
  // Idle-lifetime sessions (the LiveAvatar routes): the socket opening counts as the player opening,
  // and every message restarts the idle clock.
  const activity = (row: SessionRow, connected: boolean) => {
    if (row.idle_seconds === null) return;
    sessions.touch(row.id);
    if (connected) void sessions.markPlayerOpened(row.id).catch(() => {});
  };
  const deps = (log: SocketDeps['log']): SocketDeps => ({ realtime, studio, log, inputs, liveFor, inputStates, activity });

  app.get<{ Params: { session_id: string }; Querystring: { token?: string | string[]; sample_rate?: string | string[] } }>(
    '/v1/sessions/:session_id/render',
    { websocket: true, config: { public: true }, schema: { hide: true } },
    (socket, request) => {
      const token = renderToken(request.query.token, request.headers.authorization);
      const sampleRate = typeof request.query.sample_rate === 'string' ? request.query.sample_rate : undefined;
      serveRenderSocket(socket, () => renderSessionFor(sessions, request.params.session_id, token), sampleRate, deps(request.log));
    },
  );

  let waitingPages = 0;
  /** The session of a player key; a page opened before its session started waits for it (bounded). */
  const playerSession = async (key: string, socket: { readyState: number; close(code: number, reason: string): void }): Promise<SessionRow | undefined> => {
    let row = await sessions.byPlayerKey(key);
    if (row || !pendingPlayer || !(await pendingPlayer(key))) return row;
    if (waitingPages >= MAX_WAITING_PAGES) return undefined;
    waitingPages++;
    try {
      const deadline = Date.now() + PAGE_WAIT_MS;
      while (!row && socket.readyState === 1 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, PAGE_POLL_MS));
        row = await sessions.byPlayerKey(key);
        if (!row && !(await pendingPlayer(key))) return undefined;
      }
      if (!row && socket.readyState === 1) socket.close(1013, 'the session has not started yet; reconnect');
      return row;
    } finally {
      waitingPages--;
    }
  };

  app.get<{ Params: { player_key: string } }>('/p/:player_key/ws', { websocket: true, schema: { hide: true } }, (socket, request) => {
    servePlayerSocket(
      socket,
      () => playerSession(request.params.player_key, socket),
      (row) => sessions.markPlayerOpened(row.id),
      deps(request.log),
    );
  });

  if (shards) handOffUpgrades(app, sessions, shards);

  return {
    inputState: (sessionId: string) => {
      const session = realtime.get(sessionId);
      return session ? inputStates.get(session) : undefined;
    },
  };
}
