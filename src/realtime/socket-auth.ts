/**
 * Who a render socket belongs to: its session, by the id in its path and the token in its query or
 * Authorization header. Used by the routes (sockets.ts) and by the hand-off to shards.
 */
import type { SessionService, SessionRow } from '../sessions/service.js';

export function bearer(header: string | undefined): string | undefined {
  return header?.match(/^Bearer\s+(\S+)$/i)?.[1];
}

/**
 * The token a render socket presents: its query's `token`, else the Authorization header. A token
 * given twice is none (the socket closes 4003): it was an array that failed deep in the lookup (1011).
 */
export function renderToken(queryToken: unknown, authorization: string | undefined): string | undefined {
  if (queryToken === undefined) return bearer(authorization);
  return typeof queryToken === 'string' ? queryToken : undefined;
}

/** The active session a render socket's token opens, if any (the session id must look like one). */
export function renderSessionFor(sessions: SessionService, id: string, token: string | undefined): Promise<SessionRow | undefined> {
  return typeof token === 'string' && token && /^[0-9a-f-]{36}$/i.test(id) ? sessions.byToken(id, token) : Promise.resolve(undefined);
}
