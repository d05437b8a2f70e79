/**
 * The two WebSockets of a session: the caller's render socket (token-authenticated, the render
 * protocol) and the visitor's player socket (docs/player-protocol.md). Both stay thin: parse,
 * authenticate, hand over to the session.
 */
import crypto from 'node:crypto';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { WebSocket, RawData } from 'ws';
import type { SessionService, SessionRow } from '../sessions/service.js';
import type { StudioCatalog } from '../catalog/catalog.js';
import type { RealtimeService } from './service.js';
import type { RealtimeSession } from './session.js';
import { dispatch, AudioDecodeError } from './commands.js';
import { PlayerInput, PlayerInputState } from './player-in.js';
import type { VisitorInputs } from '../conversation/visitor-input.js';
import { CLOSE_BAD_SAMPLE_RATE, CLOSE_BAD_TOKEN, CLOSE_INTERNAL_ERROR, CLOSE_RATE_LIMITED, CLOSE_REPLACED, MAX_FRAME_BYTES, RenderCommand, SAMPLE_RATES } from './protocol.js';
import { MessageRateLimiter, MESSAGE_RATE_PER_SECOND } from './rate-limit.js';

/** Messages a render socket may send before it is told `connected` (the protocol says to wait). */
const MAX_EARLY_MESSAGES = 64;
/** Events waiting in a render socket's send buffer past which the caller is not reading them. */
const MAX_UNREAD_EVENT_BYTES = 8 * 1024 * 1024;

const validRate = (rate: number) => (SAMPLE_RATES as readonly number[]).includes(rate);

function bearer(header: string | undefined): string | undefined {
  return header?.match(/^Bearer\s+(\S+)$/i)?.[1];
}

export function helloFor(session: RealtimeSession, row: Pick<SessionRow, 'id' | 'mode' | 'status' | 'max_session_seconds' | 'avatar_id' | 'account_id'>, studio: StudioCatalog) {
  const stage = session.stage;
  return {
    type: 'hello',
    session: { session_id: row.id, mode: row.mode, status: row.status, max_session_seconds: row.max_session_seconds },
    face: studio.face(row.avatar_id, row.account_id) ?? null,
    studio: {
      backdrop: stage.backdrop ? studio.backdrop(stage.backdrop) ?? null : null,
      cameras: stage.cameras,
      camera: stage.camera,
      camera_mode: stage.camera_mode,
      hold: stage.hold,
      face_light: stage.face_light,
    },
    sample_rate: session.sampleRate,
    state: session.state,
    now: session.now(),
  };
}

export interface SessionSockets {
  /** A session's page input figures (tests and diagnostics). */
  inputState(sessionId: string): PlayerInputState | undefined;
}

/**
 * `inputs` reaches the live conversation of a session (conversation mode): the player socket hands
 * it the visitor's microphone, typed turns and mute; without one, the page's input is dropped.
 */
/**
 * `inputs` finds a session's live conversation; `liveFor` opens it when a page connects to a
 * session this process has not opened yet (it was started on another node, or before a restart
 * of this one on a shared PostgreSQL), so the visitor is heard there too.
 */
export function registerSessionSockets(app: FastifyInstance, sessions: SessionService, realtime: RealtimeService, studio: StudioCatalog, inputs: VisitorInputs = () => null, liveFor: (row: SessionRow) => void = () => {}): SessionSockets {
  realtime.log = app.log;
  // ------------------------------------------------------------------ render socket
  app.get<{ Params: { session_id: string }; Querystring: { token?: string; sample_rate?: string } }>(
    '/v1/sessions/:session_id/render',
    { websocket: true, config: { public: true }, schema: { hide: true } },
    (socket, request) => {
      const early: Array<[RawData, boolean]> = [];
      let onMessage: (data: RawData, isBinary: boolean) => void = (data, isBinary) => {
        if (early.length >= MAX_EARLY_MESSAGES) socket.close(CLOSE_RATE_LIMITED, `more than ${MAX_EARLY_MESSAGES} messages before connected; wait for session.state_updated`);
        else early.push([data, isBinary]);
      };
      const limiter = new MessageRateLimiter();
      let reportRefusal: () => void = () => {};
      socket.on('message', (data, isBinary) => {
        const verdict = limiter.take();
        if (verdict === 'accept') return onMessage(data, isBinary);
        if (verdict === 'refuse_first') reportRefusal();
        else if (verdict === 'close') {
          request.log.warn({ refused: limiter.refused }, 'render socket closed: message rate limit');
          socket.close(CLOSE_RATE_LIMITED, `message rate limit: more than ${MESSAGE_RATE_PER_SECOND} messages a second`);
        }
      });
      // A text frame that is not UTF-8: ws closes the socket with 1007 and stops reading it, and
      // @fastify/websocket logs that one error; so it is one log line per socket, not per frame.

      void (async () => {
        const token = request.query.token ?? bearer(request.headers.authorization);
        const id = request.params.session_id;
        const row = token && /^[0-9a-f-]{36}$/i.test(id) ? await sessions.byToken(id, token) : undefined;
        if (!row) {
          socket.close(CLOSE_BAD_TOKEN, 'bad or expired token');
          return;
        }
        const session = realtime.ensure(row);
        const requested = request.query.sample_rate;
        if (requested !== undefined) {
          const rate = Number(requested);
          if (!validRate(rate) || (session.audioStarted && rate !== session.sampleRate)) {
            socket.close(CLOSE_BAD_SAMPLE_RATE, `bad sample_rate; use one of ${SAMPLE_RATES.join(', ')}${session.audioStarted ? ' (and the rate audio started with)' : ''}`);
            return;
          }
          if (rate !== session.sampleRate) {
            session.sampleRate = rate;
            session.player.json(helloFor(session, row, studio));
          }
        }
        const previous = realtime.renderSockets.get(row.id);
        realtime.renderSockets.set(row.id, socket);
        previous?.close(CLOSE_REPLACED, 'replaced by a newer connection');

        const send = (event: object) => {
          if (socket.readyState !== 1) return;
          if (socket.bufferedAmount > MAX_UNREAD_EVENT_BYTES) {
            socket.close(CLOSE_RATE_LIMITED, 'events are not being read (more than 8 MB waiting)');
            return;
          }
          socket.send(JSON.stringify(event));
        };
        session.emit = send;
        reportRefusal = () => session.error('invalid_request_error', `message rate limit: at most ${MESSAGE_RATE_PER_SECOND} messages a second (bursts of a few thousand); messages are being dropped, and the socket closes with ${CLOSE_RATE_LIMITED} if this continues`);
        send({ type: 'session.state_updated', event_id: `evt_${crypto.randomUUID()}`, state: 'connected', session_id: row.id, sample_rate: session.sampleRate });

        onMessage = (data, isBinary) => guarded(session, row, socket, data, isBinary, request.log);
        for (const [data, isBinary] of early.splice(0)) guarded(session, row, socket, data, isBinary, request.log);
        socket.on('close', () => {
          if (realtime.renderSockets.get(row.id) === socket) {
            realtime.renderSockets.delete(row.id);
            session.emit = () => {};
          }
        });
      })().catch((error) => {
        request.log.error({ err: error }, 'render socket failed');
        socket.close(1011, 'internal error');
      });
    },
  );

  /** One message's failure closes at most its own socket (with a log line), never the process. */
  function guarded(session: RealtimeSession, row: SessionRow, socket: WebSocket, data: RawData, isBinary: boolean, log: FastifyBaseLogger): void {
    try {
      handle(session, row, socket, data, isBinary);
    } catch (error) {
      log.error({ err: error, session_id: row.id }, 'render message failed; closing this socket');
      socket.close(CLOSE_INTERNAL_ERROR, 'internal error');
    }
  }

  function handle(session: RealtimeSession, row: SessionRow, socket: WebSocket, data: RawData, isBinary: boolean): void {
    const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data as ArrayBuffer);
    if (bytes.byteLength > MAX_FRAME_BYTES + (isBinary ? 0 : 512)) {
      session.error('invalid_request_error', `frame is ${bytes.byteLength} bytes; at most 1 MB per frame`);
      return;
    }
    if (isBinary) {
      session.audio(bytes, undefined);
      return;
    }
    let message: unknown;
    try {
      message = JSON.parse(bytes.toString('utf8'));
    } catch {
      session.error('invalid_request_error', 'message is not valid JSON');
      return;
    }
    const eventId = typeof (message as any)?.event_id === 'string' && (message as any).event_id ? (message as any).event_id : `evt_${crypto.randomUUID()}`;
    const parsed = RenderCommand.safeParse(message);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue.path.length ? `${issue.path.join('.')}: ` : '';
      session.error('invalid_request_error', `${where}${issue.message}`, eventId);
      return;
    }
    const command = parsed.data;
    if (command.type === 'session.configure') {
      if (session.audioStarted) {
        session.error('invalid_request_error', 'session.configure is only accepted before the first audio', eventId);
        return;
      }
      if (!validRate(command.sample_rate)) {
        socket.close(CLOSE_BAD_SAMPLE_RATE, `bad sample_rate; use one of ${SAMPLE_RATES.join(', ')}`);
        return;
      }
      session.sampleRate = command.sample_rate;
      session.player.json(helloFor(session, row, studio));
      return;
    }
    try {
      dispatch(session, command, eventId, { hasBackdrop: (id) => studio.hasBackdrop(id) });
    } catch (error) {
      if (error instanceof AudioDecodeError) session.error('invalid_request_error', error.message, eventId);
      else throw error;
    }
  }

  // ------------------------------------------------------------------ player socket
  const inputStates = new WeakMap<RealtimeSession, PlayerInputState>();
  app.get<{ Params: { player_key: string } }>('/p/:player_key/ws', { websocket: true, schema: { hide: true } }, (socket, request) => {
    // Frames that arrive while the session is looked up wait (bounded: a page sends ~10 a second).
    const early: Array<[Buffer, boolean]> = [];
    let onMessage: (bytes: Buffer, isBinary: boolean) => void = (bytes, isBinary) => {
      if (early.length < 64) early.push([bytes, isBinary]);
    };
    // The same generous message limit as the render socket (player-in.ts bounds each kind of input
    // further); past it the page is closed (it reconnects by itself).
    const limiter = new MessageRateLimiter();
    socket.on('message', (data, isBinary) => {
      const verdict = limiter.take();
      if (verdict === 'accept') {
        try {
          onMessage(toBuffer(data), isBinary);
        } catch (error) {
          request.log.error({ err: error }, 'player message failed; closing this socket');
          socket.close(CLOSE_INTERNAL_ERROR, 'internal error');
        }
      } else if (verdict === 'close') {
        request.log.warn({ refused: limiter.refused }, 'player socket closed: message rate limit');
        socket.close(CLOSE_RATE_LIMITED, 'message rate limit');
      }
    });
    void (async () => {
      const row = await sessions.byPlayerKey(request.params.player_key);
      if (!row) {
        socket.close(4004, 'invalid link');
        return;
      }
      if (row.status !== 'active') {
        socket.send(JSON.stringify({ type: 'ended', reason: row.end_reason }));
        socket.close(1000, 'session ended');
        return;
      }
      const session = realtime.ensure(row);
      if (row.mode === 'conversation') liveFor(row);
      await sessions.markPlayerOpened(row.id);
      if (socket.readyState !== 1) return;
      const connection = session.player.add(socket);
      // A page that fell behind is brought back with the session's current hello (PlayerOut).
      session.player.resync = () => helloFor(session, row, studio);
      socket.send(JSON.stringify(helloFor(session, row, studio)));
      let state = inputStates.get(session);
      if (!state) inputStates.set(session, (state = new PlayerInputState()));
      const conversation = row.mode === 'conversation';
      const input = new PlayerInput({
        sessionId: row.id,
        mode: row.mode,
        state,
        inputs,
        reply: (message) => {
          if (socket.readyState === 1) socket.send(JSON.stringify(message));
        },
      });
      if (conversation) inputs(row.id)?.pageConnected();
      socket.on('close', () => {
        session.player.remove(connection);
        if (conversation && session.player.connections.size === 0) inputs(row.id)?.pageDisconnected();
      });
      onMessage = (bytes, isBinary) => input.handle(bytes, isBinary);
      for (const [bytes, isBinary] of early.splice(0)) input.handle(bytes, isBinary);
    })().catch((error) => {
      request.log.error({ err: error }, 'player socket failed');
      socket.close(1011, 'internal error');
    });
  });

  return { inputState: (sessionId: string) => {
    const session = realtime.get(sessionId);
    return session ? inputStates.get(session) : undefined;
  } };
}

function toBuffer(data: RawData): Buffer {
  return Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data as ArrayBuffer);
}
