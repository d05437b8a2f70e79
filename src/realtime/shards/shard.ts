/**
 * A shard process: the real-time path of the render-mode sessions the main process hands it
 * (pool.ts). It owns their playback clocks, their render and player sockets (passed to it already
 * authenticated) and nothing else: no database, no HTTP routes. Speech for speak_text and every
 * record of a session stay in the main process, reached over the IPC channel.
 */
import type { Socket } from 'node:net';
import { WebSocketServer } from 'ws';
import { BACKDROPS, BACKDROP_IDS } from '../../catalog/backdrops.js';
import { RealtimeService, type HelloStudio } from '../service.js';
import { serveRenderSocket, servePlayerSocket, type SocketDeps } from '../attach.js';
import type { PlayerInputState } from '../player-in.js';
import type { RealtimeSession } from '../session.js';
import { realtimeSnapshot } from '../metrics.js';
import { CLOSE_SERVER_RESTART } from '../protocol.js';
import type { SessionRow } from '../../sessions/service.js';
import { RemoteSpeech } from './remote-speaker.js';
import type { FromShard, ToShard } from './messages.js';

/** Largest frame a socket reads, as in the main process (app.ts): one over 1 MB gets an error event. */
const MAX_PAYLOAD = 8 * 1024 * 1024;

const send = (message: FromShard) => {
  if (!process.connected) return;
  try {
    process.send!(message);
  } catch (error) {
    // A log line whose details cannot be cloned (a function, a socket) still reaches the log.
    if (message.type !== 'log') throw error;
    process.send!({ ...message, details: { details: 'not serialisable', ...pick(message.details, 'session_id', 'shard') } });
  }
};

function pick(details: Record<string, unknown>, ...keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.filter((key) => typeof details[key] === 'string' || typeof details[key] === 'number').map((key) => [key, details[key]]));
}

const log: SocketDeps['log'] & { info(details: object, message: string): void } = {
  error: (details, message) => send({ type: 'log', level: 'error', details: plain(details), message }),
  warn: (details, message) => send({ type: 'log', level: 'warn', details: plain(details), message }),
  info: (details, message) => send({ type: 'log', level: 'info', details: plain(details), message }),
};

/** Errors lose their class over IPC: their message and stack are kept. */
function plain(details: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(details)) out[key] = value instanceof Error ? { message: value.message, stack: value.stack } : value;
  return out;
}

/**
 * Faces of this shard's live sessions, by account and avatar (the main process looks them up and
 * sends them along), kept while a session that shows the face is live here.
 */
const faces = new Map<string, { face: unknown; sessions: Set<string> }>();
const faceOfSession = new Map<string, string>();
const faceKey = (avatarId: string, accountId?: number) => `${accountId ?? ''}/${avatarId}`;

function remember(row: SessionRow, face: unknown): void {
  const key = faceKey(row.avatar_id, row.account_id);
  const entry = faces.get(key) ?? { face, sessions: new Set<string>() };
  entry.face = face;
  entry.sessions.add(row.id);
  faces.set(key, entry);
  faceOfSession.set(row.id, key);
}

function forget(sessionId: string): void {
  const key = faceOfSession.get(sessionId);
  faceOfSession.delete(sessionId);
  const entry = key ? faces.get(key) : undefined;
  entry?.sessions.delete(sessionId);
  if (key && entry && entry.sessions.size === 0) faces.delete(key);
}

const studio: HelloStudio = {
  face: (id, accountId) => faces.get(faceKey(id, accountId))?.face as never,
  backdrop: (id) => BACKDROPS.find((b) => b.backdrop_id === id),
  hasBackdrop: (id) => BACKDROP_IDS.has(id),
};

const speech = new RemoteSpeech(send);
const realtime = new RealtimeService(studio, speech.factory());
realtime.log = log;
const deps: SocketDeps = {
  realtime,
  studio,
  log,
  // Render mode only: a page's microphone and typed turns are refused by player-in.ts.
  inputs: () => null,
  liveFor: () => {},
  inputStates: new WeakMap<RealtimeSession, PlayerInputState>(),
};
const sockets = new WebSocketServer({ noServer: true, maxPayload: MAX_PAYLOAD });

process.on('message', (message: ToShard, handle?: Socket) => {
  try {
    receive(message, handle);
  } catch (error) {
    // One message's failure is logged; the shard and its other sessions carry on.
    log.error({ err: error, type: message.type }, 'shard could not handle a message');
    handle?.destroy();
  }
});

function receive(message: ToShard, handle: Socket | undefined): void {
  switch (message.type) {
    case 'open':
      // A session that ended here since the main process read its row is not opened again.
      if (realtime.current(message.row).status !== 'active') return;
      remember(message.row, message.face);
      realtime.ensure(message.row);
      return;
    case 'end':
      realtime.end(message.sessionId, message.reason);
      forget(message.sessionId);
      return;
    case 'command':
      if (realtime.current(message.row).status !== 'active') return;
      remember(message.row, message.face);
      realtime.command(message.row, message.command, message.eventId);
      return;
    case 'socket': {
      if (!handle) return;
      const { kind, row } = message;
      if (realtime.current(row).status === 'active') remember(row, message.face);
      sockets.handleUpgrade(message.request as never, handle, Buffer.from(message.head), (socket) => {
        // attach.ts refuses an ended session's render token and tells its page, as in the main process.
        if (kind === 'render') serveRenderSocket(socket, async () => row, message.sampleRate, deps);
        else
          servePlayerSocket(
            socket,
            async () => row,
            async () => {},
            deps,
          );
      });
      return;
    }
    case 'speech':
      speech.deliver(message);
      return;
    case 'metrics':
      send({ type: 'metrics', id: message.id, snapshot: realtimeSnapshot(realtime.hub.size) });
      return;
    case 'stop':
      stop();
      return;
  }
}

let stopping = false;

/** The node shuts down: every socket is told to reconnect (1012), as the main process tells its own. */
function stop(): void {
  stopping = true;
  realtime.stop();
  for (const client of sockets.clients) client.close(CLOSE_SERVER_RESTART, 'server restarting');
  sockets.close();
  // Close frames are flushed before the process goes.
  setTimeout(() => process.exit(0), 200).unref();
  process.disconnect?.();
}

// The main process went away (even by kill -9): this shard's sockets go with it.
process.on('disconnect', () => {
  if (stopping) return;
  realtime.stop();
  for (const client of sockets.clients) client.terminate();
  process.exit(0);
});

send({ type: 'ready' });
