/**
 * The two WebSockets of a session once they are open: the caller's render socket (the render
 * protocol) and the visitor's player socket (docs/player-protocol.md). Who the socket belongs to is
 * found by `lookup` (the database in the main process; the row handed over with the socket in a
 * shard, src/realtime/shards), so the same code serves a session wherever its live side runs.
 */
import crypto from 'node:crypto';
import type { WebSocket, RawData } from 'ws';
import type { SessionRow } from '../sessions/service.js';
import type { HelloStudio, RealtimeService } from './service.js';
import type { RealtimeSession } from './session.js';
import { dispatch, AudioDecodeError } from './commands.js';
import { PlayerInput, PlayerInputState } from './player-in.js';
import type { VisitorInputs } from './visitor-input.js';
import {
  CLOSE_BAD_SAMPLE_RATE,
  CLOSE_BAD_TOKEN,
  CLOSE_INTERNAL_ERROR,
  CLOSE_RATE_LIMITED,
  CLOSE_REPLACED,
  MAX_FRAME_BYTES,
  RenderCommand,
  SAMPLE_RATES,
} from './protocol.js';
import { MessageRateLimiter, MESSAGE_RATE_PER_SECOND } from './rate-limit.js';
import type { HelloMessage } from './player-protocol.js';

/**
 * Messages a render socket may send before it is told `connected`, held and then processed in
 * order. LiveAvatar's web SDK sends a whole utterance the moment the socket opens (one message per
 * 0.75 s of audio), so the bound is generous in count and held by bytes too.
 */
const MAX_EARLY_MESSAGES = 4096;
const MAX_EARLY_BYTES = 16 * 1024 * 1024;
/** Events waiting in a render socket's send buffer past which the caller is not reading them. */
const MAX_UNREAD_EVENT_BYTES = 8 * 1024 * 1024;

const validRate = (rate: number) => (SAMPLE_RATES as readonly number[]).includes(rate);

export interface SocketLog {
  error(details: object, message: string): void;
  warn(details: object, message: string): void;
}

export interface SocketDeps {
  realtime: RealtimeService;
  studio: HelloStudio;
  log: SocketLog;
  /** Conversation mode: the session's live conversation, which takes the page's input. */
  inputs: VisitorInputs;
  /** Opens a conversation-mode session's live conversation when its page connects. */
  liveFor: (row: SessionRow) => void;
  /** Page input figures per session (they outlive a page's reconnects). */
  inputStates: WeakMap<RealtimeSession, PlayerInputState>;
  /** A render socket connected or sent a message (idle-lifetime sessions count it as activity). */
  activity?: (row: SessionRow, connected: boolean) => void;
}

export function helloFor(
  session: RealtimeSession,
  row: Pick<SessionRow, 'id' | 'mode' | 'status' | 'max_session_seconds' | 'avatar_id' | 'account_id'>,
  studio: HelloStudio,
): HelloMessage {
  const stage = session.stage;
  return {
    type: 'hello',
    session: { session_id: row.id, mode: row.mode, status: row.status, max_session_seconds: row.max_session_seconds },
    face: studio.face(row.avatar_id, row.account_id) ?? null,
    studio: {
      backdrop: stage.backdrop ? (studio.backdrop(stage.backdrop) ?? null) : null,
      cameras: stage.cameras,
      camera: stage.camera,
      camera_mode: stage.camera_mode,
      hold: stage.hold,
      face_light: stage.face_light,
    },
    sample_rate: session.sampleRate,
    state: session.shownState,
    now: session.now(),
  };
}

/**
 * A render socket: messages are counted and held from the first byte, the socket is authenticated
 * by `lookup` (undefined: bad or expired token, closed with 4003), then it drives the session.
 */
export function serveRenderSocket(socket: WebSocket, lookup: () => Promise<SessionRow | undefined>, requestedRate: string | undefined, deps: SocketDeps): void {
  const { realtime, studio, log } = deps;
  const early: Array<[RawData, boolean]> = [];
  let earlyBytes = 0;
  let onMessage: (data: RawData, isBinary: boolean) => void = (data, isBinary) => {
    earlyBytes += toBuffer(data).byteLength;
    if (early.length >= MAX_EARLY_MESSAGES || earlyBytes > MAX_EARLY_BYTES)
      socket.close(
        CLOSE_RATE_LIMITED,
        `more than ${MAX_EARLY_MESSAGES} messages or ${MAX_EARLY_BYTES / 1048576} MB before connected; wait for session.state_updated`,
      );
    else early.push([data, isBinary]);
  };
  const limiter = new MessageRateLimiter();
  let reportRefusal: () => void = () => {};
  socket.on('message', (data, isBinary) => {
    const verdict = limiter.take();
    if (verdict === 'accept') return onMessage(data, isBinary);
    if (verdict === 'refuse_first') reportRefusal();
    else if (verdict === 'close') {
      log.warn({ refused: limiter.refused }, 'render socket closed: message rate limit');
      socket.close(CLOSE_RATE_LIMITED, `message rate limit: more than ${MESSAGE_RATE_PER_SECOND} messages a second`);
    }
  });
  // A text frame that is not UTF-8: ws closes the socket with 1007 and stops reading it, and
  // @fastify/websocket logs that one error; so it is one log line per socket, not per frame.

  void (async () => {
    const found = await lookup();
    const row = found && realtime.current(found);
    // An ended session's token is refused, also when it ended while the token was being checked.
    if (!row || row.status !== 'active') {
      socket.close(CLOSE_BAD_TOKEN, 'bad or expired token');
      return;
    }
    const session = realtime.ensure(row);
    if (requestedRate !== undefined) {
      const rate = Number(requestedRate);
      if (!validRate(rate) || (session.audioStarted && rate !== session.sampleRate)) {
        socket.close(
          CLOSE_BAD_SAMPLE_RATE,
          `bad sample_rate; use one of ${SAMPLE_RATES.join(', ')}${session.audioStarted ? ' (and the rate audio started with)' : ''}`,
        );
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
    reportRefusal = () =>
      session.error(
        'invalid_request_error',
        `message rate limit: at most ${MESSAGE_RATE_PER_SECOND} messages a second (bursts of a few thousand); messages are being dropped, and the socket closes with ${CLOSE_RATE_LIMITED} if this continues`,
      );
    send({ type: 'session.state_updated', event_id: `evt_${crypto.randomUUID()}`, state: 'connected', session_id: row.id, sample_rate: session.sampleRate });

    deps.activity?.(row, true);
    onMessage = (data, isBinary) => {
      deps.activity?.(row, false);
      guarded(session, row, socket, data, isBinary, deps);
    };
    for (const [data, isBinary] of early.splice(0)) guarded(session, row, socket, data, isBinary, deps);
    socket.on('close', () => {
      if (realtime.renderSockets.get(row.id) === socket) {
        realtime.renderSockets.delete(row.id);
        session.emit = () => {};
      }
    });
  })().catch((error) => {
    log.error({ err: error }, 'render socket failed');
    socket.close(1011, 'internal error');
  });
}

/** One message's failure closes at most its own socket (with a log line), never the process. */
function guarded(session: RealtimeSession, row: SessionRow, socket: WebSocket, data: RawData, isBinary: boolean, deps: SocketDeps): void {
  try {
    handle(session, row, socket, data, isBinary, deps.studio);
  } catch (error) {
    deps.log.error({ err: error, session_id: row.id }, 'render message failed; closing this socket');
    socket.close(CLOSE_INTERNAL_ERROR, 'internal error');
  }
}

function handle(session: RealtimeSession, row: SessionRow, socket: WebSocket, data: RawData, isBinary: boolean, studio: HelloStudio): void {
  const bytes = toBuffer(data);
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

/**
 * A player socket: the page's messages are held (bounded) while `lookup` finds the session by its
 * player key; an unknown key is closed with 4004, an ended session is told so. `opened` records
 * that the page opened (the main process; a shard is handed sockets already recorded).
 */
export function servePlayerSocket(
  socket: WebSocket,
  lookup: () => Promise<SessionRow | undefined>,
  opened: (row: SessionRow) => Promise<void>,
  deps: SocketDeps,
): void {
  const { realtime, studio, log, inputs } = deps;
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
        log.error({ err: error }, 'player message failed; closing this socket');
        socket.close(CLOSE_INTERNAL_ERROR, 'internal error');
      }
    } else if (verdict === 'close') {
      log.warn({ refused: limiter.refused }, 'player socket closed: message rate limit');
      socket.close(CLOSE_RATE_LIMITED, 'message rate limit');
    }
  });
  const ended = (row: SessionRow) => {
    socket.send(JSON.stringify({ type: 'ended', reason: row.end_reason }));
    socket.close(1000, 'session ended');
  };
  void (async () => {
    const found = await lookup();
    if (!found) {
      socket.close(4004, 'invalid link');
      return;
    }
    const row = realtime.current(found);
    if (row.status !== 'active') return ended(row);
    const session = realtime.ensure(row);
    if (row.mode === 'conversation') deps.liveFor(row);
    await opened(row);
    if (socket.readyState !== 1) return;
    // It ended while the page's opening was recorded: its live side is gone, the page is told.
    const now = realtime.current(row);
    if (now.status !== 'active') return ended(now);
    const connection = session.player.add(socket);
    // A page that fell behind is brought back with the session's current hello (PlayerOut).
    session.player.resync = () => helloFor(session, row, studio);
    socket.send(JSON.stringify(helloFor(session, row, studio)));
    let state = deps.inputStates.get(session);
    if (!state) deps.inputStates.set(session, (state = new PlayerInputState()));
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
    log.error({ err: error }, 'player socket failed');
    socket.close(1011, 'internal error');
  });
}

function toBuffer(data: RawData): Buffer {
  return Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data as ArrayBuffer);
}
