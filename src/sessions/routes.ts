/** Session routes: start, list, get, stop. (Directing a live session is realtime's `commandRoute`.) */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Config } from '../core/config.js';
import { routeErrors } from '../core/errors.js';
import { SESSION_START_ERRORS, sessionsErrors } from './errors.js';
import type { SessionService, SessionRow } from './service.js';
import { SessionCreateRequest, SessionIdParams, SessionListQuery, SessionRecord, SessionResponse } from './schemas.js';

export function sessionRoutes(server: FastifyInstance, sessions: SessionService, config: Config): void {
  const app = server.withTypeProvider<ZodTypeProvider>();
  const tags = ['Sessions'];
  const playerUrl = (row: SessionRow) => `${config.publicUrl}/p/${row.player_key}`;
  const wsBase = () => config.publicUrl.replace(/^http/, 'ws');

  const record = (row: SessionRow): z.infer<typeof SessionRecord> => ({
    session_id: row.id,
    status: row.status,
    mode: row.mode,
    agent_id: row.agent_id,
    player_url: playerUrl(row),
    max_session_seconds: row.max_session_seconds,
    created_at: new Date(row.created_at).toISOString(),
    avatar_id: row.avatar_id,
    voice_id: row.voice_id,
    voice_provider: row.voice_provider,
    ended_at: row.ended_at ? new Date(row.ended_at).toISOString() : null,
    end_reason: row.end_reason,
    duration_seconds: row.duration_seconds === null ? null : Math.round(row.duration_seconds * 1000) / 1000,
  });

  app.post(
    '/v1/sessions',
    {
      config: routeErrors(...SESSION_START_ERRORS),
      schema: { tags, summary: 'Start a live session (201)', body: SessionCreateRequest, response: { 201: SessionResponse } },
    },
    async (request, reply) => {
      const { row, token } = await sessions.start(request.principal.accountId, request.body);
      const answer: z.infer<typeof SessionResponse> = {
        session_id: row.id,
        status: 'active',
        mode: row.mode,
        agent_id: row.agent_id,
        player_url: playerUrl(row),
        ...(row.mode === 'render' && { ws_url: `${wsBase()}/v1/sessions/${row.id}/render?token=${token}` }),
        max_session_seconds: row.max_session_seconds,
        created_at: new Date(row.created_at).toISOString(),
      };
      return reply.code(201).send(answer);
    },
  );

  app.get(
    '/v1/sessions',
    { schema: { tags, summary: "The account's sessions, newest first", querystring: SessionListQuery, response: { 200: z.array(SessionRecord) } } },
    async (request) => {
      return (await sessions.list(request.principal.accountId, request.query)).map(record);
    },
  );

  app.get(
    '/v1/sessions/:session_id',
    {
      config: routeErrors(sessionsErrors.session_not_found),
      schema: { tags, summary: 'A session record', params: SessionIdParams, response: { 200: SessionRecord } },
    },
    async (request) => {
      return record(await sessions.get(request.principal.accountId, request.params.session_id));
    },
  );

  app.post(
    '/v1/sessions/:session_id/stop',
    {
      config: routeErrors(sessionsErrors.session_not_found),
      schema: { tags, summary: 'Stop a session (an ended one is answered unchanged)', params: SessionIdParams, response: { 200: SessionRecord } },
    },
    async (request) => {
      return record(await sessions.stop(request.principal.accountId, request.params.session_id));
    },
  );
}
