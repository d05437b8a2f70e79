/**
 * Hands render-mode sessions' WebSocket upgrades to their shard (pool.ts) before any handshake:
 * the main process authenticates the upgrade against the database (the render socket's token, the
 * player key) and passes the TCP socket itself to the shard, which answers the handshake and runs
 * the socket from then on. Everything else (conversation mode, agent previews, bad tokens, ended
 * sessions) goes on to the routes of this process, which answer it as without shards.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { SessionService, SessionRow } from '../../sessions/service.js';
import type { ShardPool } from './pool.js';
import { renderSessionFor, renderToken } from '../socket-auth.js';

type UpgradeListener = (request: IncomingMessage, socket: Socket, head: Buffer) => void;

const RENDER_PATH = /^\/v1\/sessions\/([^/?#]+)\/render\/?(?:[?#]|$)/;
const PLAYER_PATH = /^\/p\/([^/?#]+)\/ws\/?(?:[?#]|$)/;

export function handOffUpgrades(app: FastifyInstance, sessions: SessionService, shards: ShardPool): void {
  // Once every plugin has registered its upgrade listener (@fastify/websocket's): they become the
  // fallback for upgrades that stay here.
  app.addHook('onReady', async () => {
    const server = app.server;
    const local = server.listeners('upgrade') as UpgradeListener[];
    server.removeAllListeners('upgrade');
    const stayHere: UpgradeListener = (request, socket, head) => {
      for (const listener of local) listener.call(server, request, socket, head);
    };
    server.on('upgrade', (request: IncomingMessage, socket: Socket, head: Buffer) => {
      const url = request.url ?? '/';
      const render = RENDER_PATH.exec(url);
      const player = render ? null : PLAYER_PATH.exec(url);
      if (!render && !player) return stayHere(request, socket, head);
      // Guarded while the session is looked up and until the socket has left for its shard (Node
      // removed its own error listener; a reset while waiting for a starting shard must not throw).
      const swallow = () => {};
      socket.on('error', swallow);
      void shardSession(render, player, request)
        .then(async (row) => {
          if (socket.destroyed) return;
          if (!row) {
            socket.removeListener('error', swallow);
            return stayHere(request, socket, head);
          }
          if (player) await sessions.markPlayerOpened(row.id);
          if (socket.destroyed) return;
          const query = new URL(url, 'http://localhost').searchParams;
          shards.handOff(
            render ? 'render' : 'player',
            row,
            { method: request.method ?? 'GET', url, headers: request.headers },
            socket,
            head,
            render ? (query.get('sample_rate') ?? undefined) : undefined,
          );
        })
        .catch((error) => {
          app.log.error({ err: error }, 'handing a socket to its real-time shard failed');
          socket.destroy();
        });
    });
  });

  /** The session an upgrade opens when a shard should carry it: an active render-mode session. */
  async function shardSession(render: RegExpExecArray | null, player: RegExpExecArray | null, request: IncomingMessage): Promise<SessionRow | undefined> {
    let row: SessionRow | undefined;
    const key = decoded((render ?? player)![1]);
    if (key === undefined) return undefined;
    if (render) {
      const query = new URL(request.url ?? '/', 'http://localhost').searchParams;
      const tokens = query.getAll('token');
      row = await renderSessionFor(sessions, key, renderToken(tokens.length <= 1 ? tokens[0] : tokens, request.headers.authorization));
    } else {
      row = await sessions.byPlayerKey(key);
    }
    // Idle-lifetime sessions (the LiveAvatar routes) stay here: their idle clock is this process's,
    // restarted by every socket message.
    return row && row.status === 'active' && row.mode === 'render' && row.idle_seconds === null ? row : undefined;
  }
}

/** A path segment decoded, or undefined when it is not valid percent-encoding (the routes here answer it). */
function decoded(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}
