/**
 * Who a render socket belongs to: its session, by the id in its path and the token in its query or
 * Authorization header. Used by the routes (sockets.ts) and by the hand-off to shards.
 */
import type { SessionService, SessionRow } from '../sessions/service.js';

export function bearer(header: string | undefined): string | undefined {
  return header?.match(/^Bearer\s+(\S+)$/i)?.[1];
}

/** The active session a render socket's token opens, if any (the session id must look like one). */
export function renderSessionFor(sessions: SessionService, id: string, token: string | undefined): Promise<SessionRow | undefined> {
  return token && /^[0-9a-f-]{36}$/i.test(id) ? sessions.byToken(id, token) : Promise.resolve(undefined);
}
