/**
 * Several nodes behind an ordinary balancer (issue 29): a session's sockets (the render socket and
 * the player page's) belong on the node that started it, where its live side runs. An upgrade that
 * reaches another node is passed, byte for byte, to the owner's NODE_URL before any handshake; the
 * owner answers the handshake and the bytes flow through this node both ways from then on. The
 * forwarded request carries a header signed with the deployment's node secret (settings table), so
 * the owner serves it without looking again, and nobody outside can make a node skip the routing.
 *
 * An upgrade for a session whose owner stopped gracefully (its restart window) is taken over here;
 * one whose owner died answers 503 until the lost node's sessions have ended (`node_lost`).
 */
import http from 'node:http';
import net from 'node:net';
import tls from 'node:tls';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { hmacSha256Hex, safeEqual } from '../core/secrets.js';
import type { NodeRegistry, SessionOwner } from '../sessions/nodes.js';
import type { SessionService } from '../sessions/service.js';
import { PLAYER_PATH, RENDER_PATH } from './shards/upgrade-router.js';
import { renderSessionFor, renderToken } from './socket-auth.js';

type UpgradeListener = (request: IncomingMessage, socket: Socket, head: Buffer) => void;

/** The header a forwarding node signs: `<node id>.<unix ms>.<hmac>`. */
export const FORWARD_HEADER = 'x-presence-forwarded-by';
/** How old a signed forward may be (clock skew between nodes included). */
const FORWARD_MAX_AGE_MS = 60_000;
/** How long the owner may take to accept the forwarded connection. */
const CONNECT_TIMEOUT_MS = 5_000;

export interface NodeForwarding {
  nodes: NodeRegistry;
  /** The deployment's node-to-node secret. */
  secret: string;
  /** This node took a stopped node's session over: its timers and live side start here. */
  adopted(sessionId: string): Promise<void>;
  /** The sessions, to check a render socket's token before its session is taken over here. */
  sessions: SessionService;
}

/** Figures for /metrics. */
export const forwardStats = { forwarded: 0, refused: 0, failed: 0 };

export function forwardMetricsText(): string {
  return [
    '# HELP presence_node_forwarded_total Sockets and commands this node passed to the node that carries their session.',
    '# TYPE presence_node_forwarded_total counter',
    `presence_node_forwarded_total ${forwardStats.forwarded}`,
    '# HELP presence_node_forward_failed_total Sockets and commands the owning node did not take (answered 503), or that could not be routed.',
    '# TYPE presence_node_forward_failed_total counter',
    `presence_node_forward_failed_total ${forwardStats.failed + forwardStats.refused}`,
  ].join('\n');
}

function signature(secret: string, nodeId: string, at: string, method: string, url: string): string {
  return hmacSha256Hex(secret, `${nodeId}.${at}.${method} ${url}`);
}

/** Whether the upgrade was forwarded by a node of this deployment (a valid, fresh signature). */
export function forwardedByNode(request: IncomingMessage, secret: string): boolean {
  const value = request.headers[FORWARD_HEADER];
  if (typeof value !== 'string') return false;
  const [nodeId, at, mac] = value.split('.');
  if (!nodeId || !at || !mac) return false;
  const age = Date.now() - Number(at);
  if (!Number.isFinite(age) || Math.abs(age) > FORWARD_MAX_AGE_MS) return false;
  return safeEqual(mac, signature(secret, nodeId, at, request.method ?? 'GET', request.url ?? '/'));
}

/**
 * Installs the routing in front of every upgrade listener registered so far (the shard router's,
 * @fastify/websocket's): call it after them. Until the registry has started (it starts once the
 * node listens, and only on PostgreSQL) every upgrade goes straight on, at no cost.
 */
export function forwardUpgrades(app: FastifyInstance, forwarding: NodeForwarding): void {
  const { nodes, secret } = forwarding;
  app.addHook('onReady', async () => {
    const server = app.server;
    const local = server.listeners('upgrade') as UpgradeListener[];
    server.removeAllListeners('upgrade');
    const stayHere: UpgradeListener = (request, socket, head) => {
      for (const listener of local) listener.call(server, request, socket, head);
    };
    server.on('upgrade', (request: IncomingMessage, socket: Socket, head: Buffer) => {
      if (!nodes.url) return stayHere(request, socket, head);
      const url = request.url ?? '/';
      const render = RENDER_PATH.exec(url);
      const player = render ? null : PLAYER_PATH.exec(url);
      if (!render && !player) return stayHere(request, socket, head);
      if (request.headers[FORWARD_HEADER] !== undefined) {
        const trusted = forwardedByNode(request, secret);
        delete request.headers[FORWARD_HEADER];
        if (trusted) return stayHere(request, socket, head);
      }
      const key = decoded((render ?? player)![1]);
      if (key === undefined) return stayHere(request, socket, head);
      const swallow = () => {};
      socket.on('error', swallow);
      void nodes
        .ownerOf(render ? { sessionId: key } : { playerKey: key })
        .then(async (owner) => {
          if (socket.destroyed) return;
          if (owner && !owner.here) return pipeToOwner(owner, request, socket, head);
          if (owner && owner.active && owner.nodeId && owner.nodeId !== nodes.id) {
            // Active, owned by a node that is not alive: take it over if that node stopped cleanly,
            // and only for a socket that may open it (a render socket's token is checked first;
            // a player key is its own proof). A bad token goes on to be refused as usual.
            if (render && !(await renderSessionFor(forwarding.sessions, owner.sessionId, tokenOf(request)))) {
              socket.removeListener('error', swallow);
              return stayHere(request, socket, head);
            }
            if (await nodes.claim(owner.sessionId, owner.nodeId)) {
              await forwarding.adopted(owner.sessionId);
            } else {
              forwardStats.refused++;
              return refuse(socket, 503, 'the node carrying this session is not answering; try again shortly');
            }
          }
          socket.removeListener('error', swallow);
          if (!socket.destroyed) stayHere(request, socket, head);
        })
        .catch((error) => {
          app.log.error({ err: error }, "routing a socket to its session's node failed");
          forwardStats.failed++;
          refuse(socket, 503, 'try again shortly');
        });
    });
  });

  function pipeToOwner(owner: SessionOwner, request: IncomingMessage, socket: Socket, head: Buffer): void {
    const target = new URL(owner.url!);
    const secure = target.protocol === 'https:';
    const port = Number(target.port) || (secure ? 443 : 80);
    const host = target.hostname.replace(/^\[|\]$/g, '');
    const upstream: Socket = secure ? tls.connect({ host, port, servername: net.isIP(host) ? undefined : host }) : net.connect({ host, port });
    upstream.setNoDelay(true);
    socket.setNoDelay(true);
    let connected = false;
    const timer = setTimeout(() => upstream.destroy(new Error('connect timeout')), CONNECT_TIMEOUT_MS);
    upstream.once(secure ? 'secureConnect' : 'connect', () => {
      clearTimeout(timer);
      connected = true;
      const method = request.method ?? 'GET';
      const url = request.url ?? '/';
      const at = String(Date.now());
      const lines = [`${method} ${url} HTTP/1.1`];
      const raw = request.rawHeaders;
      for (let i = 0; i < raw.length; i += 2) {
        const name = raw[i]!.toLowerCase();
        if (name === FORWARD_HEADER || name === 'x-forwarded-for') continue;
        lines.push(`${raw[i]}: ${raw[i + 1]}`);
      }
      const forwardedFor = [request.headers['x-forwarded-for'], socket.remoteAddress].filter(Boolean).join(', ');
      if (forwardedFor) lines.push(`X-Forwarded-For: ${forwardedFor}`);
      lines.push(`${FORWARD_HEADER}: ${nodes.id}.${at}.${signature(secret, nodes.id, at, method, url)}`);
      upstream.write(lines.join('\r\n') + '\r\n\r\n');
      if (head.length) upstream.write(head);
      upstream.pipe(socket);
      socket.pipe(upstream);
      forwardStats.forwarded++;
    });
    upstream.on('error', (error) => {
      clearTimeout(timer);
      if (!connected) {
        forwardStats.failed++;
        app.log.warn({ err: { message: error.message }, node_id: owner.nodeId, node_url: owner.url }, "the session's node did not take the forwarded socket");
        refuse(socket, 503, 'the node carrying this session is not answering; try again shortly');
      } else socket.destroy();
    });
    socket.on('error', () => upstream.destroy());
    socket.on('close', () => upstream.destroy());
    upstream.on('close', () => socket.destroy());
  }
}

/**
 * An HTTP command for a session another node carries (POST /v1/sessions/{id}/commands): sent on to
 * the owner with the caller's own credentials and the node signature; its answer is the answer.
 * Undefined when this node should carry it out (it owns the session, or the request was forwarded).
 */
export async function forwardCommand(
  forwarding: NodeForwarding,
  sessionId: string,
  request: { method: string; url: string; headers: IncomingMessage['headers']; body: unknown; raw: IncomingMessage },
): Promise<{ status: number; body: unknown } | undefined> {
  const { nodes, secret } = forwarding;
  if (!nodes.url) return undefined;
  if (request.headers[FORWARD_HEADER] !== undefined && forwardedByNode(request.raw, secret)) return undefined;
  const owner = await nodes.ownerOf({ sessionId });
  if (!owner || owner.here || !owner.url) return undefined;
  const at = String(Date.now());
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    [FORWARD_HEADER]: `${nodes.id}.${at}.${signature(secret, nodes.id, at, request.method, request.url)}`,
  };
  for (const name of ['authorization', 'cookie', 'x-request-id']) {
    const value = request.headers[name];
    if (typeof value === 'string') headers[name] = value;
  }
  const response = await fetch(owner.url + request.url, {
    method: request.method,
    headers,
    body: JSON.stringify(request.body),
    signal: AbortSignal.timeout(CONNECT_TIMEOUT_MS * 2),
  });
  const text = await response.text();
  forwardStats.forwarded++;
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

/** Answers an upgrade with a plain HTTP error (no handshake happened). */
function refuse(socket: Socket, status: number, message: string): void {
  if (socket.destroyed) return;
  const body = JSON.stringify({ detail: { code: 'node_unavailable', message } });
  socket.end(
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: application/json\r\nRetry-After: 5\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

function tokenOf(request: IncomingMessage): string | undefined {
  const tokens = new URL(request.url ?? '/', 'http://localhost').searchParams.getAll('token');
  return renderToken(tokens.length <= 1 ? tokens[0] : tokens, request.headers.authorization);
}

function decoded(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}
