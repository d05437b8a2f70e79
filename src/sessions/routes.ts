/** Session routes: start, list, get, stop, and direct a session by command. */
import crypto from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Config } from '../core/config.js';
import { ApiError } from '../core/errors.js';
import type { RealtimeService } from '../realtime/service.js';
import { HttpCommand } from '../realtime/protocol.js';
import type { SessionService, SessionRow } from './service.js';
import { SessionCreateRequest, SessionIdParams, SessionListQuery, SessionRecord, SessionResponse } from './schemas.js';

/** What the commands route hands to a live conversation (conversation mode). */
export interface ConversationCommands {
  /** `visitor.message`: a visitor turn, as if typed in the player. */
  message(row: SessionRow, text: string): void;
  /** Any other command sent to a conversation-mode session, after the real-time path carried it out. */
  commanded(row: SessionRow, command: { type: string; text?: string }): void;
}

export function sessionRoutes(server: FastifyInstance, sessions: SessionService, realtime: Pick<RealtimeService, 'command'>, config: Config, conversations?: ConversationCommands): void {
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

  app.post('/v1/sessions', {
    schema: { tags, summary: 'Start a live session (201)', body: SessionCreateRequest, response: { 201: SessionResponse } },
  }, async (request, reply) => {
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
  });

  app.get('/v1/sessions', { schema: { tags, summary: "The account's sessions, newest first", querystring: SessionListQuery, response: { 200: z.array(SessionRecord) } } }, async (request) => {
    return (await sessions.list(request.principal.accountId, request.query)).map(record);
  });

  app.get('/v1/sessions/:session_id', { schema: { tags, summary: 'A session record', params: SessionIdParams, response: { 200: SessionRecord } } }, async (request) => {
    return record(await sessions.get(request.principal.accountId, request.params.session_id));
  });

  app.post('/v1/sessions/:session_id/stop', { schema: { tags, summary: 'Stop a session (an ended one is answered unchanged)', params: SessionIdParams, response: { 200: SessionRecord } } }, async (request) => {
    return record(await sessions.stop(request.principal.accountId, request.params.session_id));
  });

  app.post('/v1/sessions/:session_id/commands', {
    schema: {
      tags, summary: 'Direct a session with one render-protocol command (both modes), or visitor.message (conversation mode); 202', params: SessionIdParams, body: HttpCommand,
      response: { 202: z.object({ event_id: z.string() }) },
    },
  }, async (request, reply) => {
    const row = await sessions.get(request.principal.accountId, request.params.session_id);
    if (row.status !== 'active') throw new ApiError(409, 'session_ended', `Session ${row.id} has ended (${row.end_reason})`);
    const eventId = request.body.event_id ?? `evt_${crypto.randomUUID()}`;
    const command = request.body;
    if (command.type === 'visitor.message') {
      if (row.mode !== 'conversation') throw new ApiError(422, 'wrong_mode', 'visitor.message is for conversation-mode sessions; in render mode your own agent answers the visitor');
      conversations?.message(row, command.text);
      return reply.code(202).send({ event_id: eventId });
    }
    realtime.command(row, command, eventId);
    if (row.mode === 'conversation') conversations?.commanded(row, command);
    return reply.code(202).send({ event_id: eventId });
  });
}
