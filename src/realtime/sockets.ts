/**
 * The two WebSockets of a session: the caller's render socket (token-authenticated, the render
 * protocol) and the visitor's player socket (docs/player-protocol.md). Both stay thin: parse,
 * authenticate, hand over to the session.
 */
import crypto from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { WebSocket, RawData } from 'ws';
import type { SessionService, SessionRow } from '../sessions/service.js';
import type { StudioCatalog } from '../catalog/catalog.js';
import type { RealtimeService } from './service.js';
import type { RealtimeSession } from './session.js';
import { dispatch, AudioDecodeError } from './commands.js';
import { CLOSE_BAD_SAMPLE_RATE, CLOSE_BAD_TOKEN, CLOSE_REPLACED, MAX_FRAME_BYTES, RenderCommand, SAMPLE_RATES } from './protocol.js';

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

export function registerSessionSockets(app: FastifyInstance, sessions: SessionService, realtime: RealtimeService, studio: StudioCatalog): void {
  // ------------------------------------------------------------------ render socket
  app.get<{ Params: { session_id: string }; Querystring: { token?: string; sample_rate?: string } }>(
    '/v1/sessions/:session_id/render',
    { websocket: true, config: { public: true }, schema: { hide: true } },
    (socket, request) => {
      const early: Array<[RawData, boolean]> = [];
      let onMessage: (data: RawData, isBinary: boolean) => void = (data, isBinary) => early.push([data, isBinary]);
      socket.on('message', (data, isBinary) => onMessage(data, isBinary));

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
          if (socket.readyState === 1) socket.send(JSON.stringify(event));
        };
        session.emit = send;
        send({ type: 'session.state_updated', event_id: `evt_${crypto.randomUUID()}`, state: 'connected', session_id: row.id, sample_rate: session.sampleRate });

        onMessage = (data, isBinary) => handle(session, row, socket, data, isBinary);
        for (const [data, isBinary] of early.splice(0)) handle(session, row, socket, data, isBinary);
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
  app.get<{ Params: { player_key: string } }>('/p/:player_key/ws', { websocket: true, schema: { hide: true } }, (socket, request) => {
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
      await sessions.markPlayerOpened(row.id);
      const connection = session.player.add(socket);
      socket.send(JSON.stringify(helloFor(session, row, studio)));
      socket.on('close', () => session.player.remove(connection));
      socket.on('message', () => {
        /* ready/stats: diagnostics only */
      });
    })().catch((error) => {
      request.log.error({ err: error }, 'player socket failed');
      socket.close(1011, 'internal error');
    });
  });
}
