/**
 * `POST /v1/sessions/{id}/commands`: direct a live session with one render-protocol command (both
 * modes), or `visitor.message` (conversation mode). It lives with the real-time side it drives;
 * the session is looked up through the sessions capability below it.
 */
import crypto from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { SessionService, SessionRow } from '../sessions/service.js';
import { SessionIdParams } from '../sessions/schemas.js';
import { HttpCommand } from './protocol.js';
import type { RealtimeService } from './service.js';
import { routeErrors } from '../core/errors.js';
import { sessionsErrors } from '../sessions/errors.js';
import { realtimeErrors } from './errors.js';

/** What the commands route hands to a live conversation (conversation mode). */
export interface ConversationCommands {
  /** `visitor.message`: a visitor turn, as if typed in the player. */
  message(row: SessionRow, text: string): void;
  /** Any other command sent to a conversation-mode session, after the real-time path carried it out. */
  commanded(row: SessionRow, command: { type: string; text?: string }): void;
}

/**
 * Several nodes: a command for a session another node carries is sent on to that node (its answer
 * is this route's answer); undefined when this node carries it.
 */
export type CommandForwarder = (row: SessionRow, request: FastifyRequest) => Promise<{ status: number; body: unknown } | undefined>;

export function commandRoute(
  server: FastifyInstance,
  sessions: SessionService,
  realtime: Pick<RealtimeService, 'command'>,
  conversations?: ConversationCommands,
  forward?: CommandForwarder,
): void {
  const app = server.withTypeProvider<ZodTypeProvider>();
  const tags = ['Sessions'];
  app.post(
    '/v1/sessions/:session_id/commands',
    {
      config: routeErrors(sessionsErrors.session_not_found, realtimeErrors.session_ended, realtimeErrors.wrong_mode),
      schema: {
        tags,
        summary: 'Direct a session with one render-protocol command (both modes), or visitor.message (conversation mode); 202',
        params: SessionIdParams,
        body: HttpCommand,
        response: { 202: z.object({ event_id: z.string() }) },
      },
    },
    async (request, reply) => {
      const row = await sessions.get(request.principal.accountId, request.params.session_id);
      if (row.status !== 'active') throw realtimeErrors.session_ended(`Session ${row.id} has ended (${row.end_reason})`);
      const forwarded = forward && (await forward(row, request));
      if (forwarded) return reply.code(forwarded.status as 202).send(forwarded.body as { event_id: string });
      const eventId = request.body.event_id ?? `evt_${crypto.randomUUID()}`;
      const command = request.body;
      if (command.type === 'visitor.message') {
        if (row.mode !== 'conversation') throw realtimeErrors.wrong_mode();
        conversations?.message(row, command.text);
        return reply.code(202).send({ event_id: eventId });
      }
      realtime.command(row, command, eventId);
      if (row.mode === 'conversation') conversations?.commanded(row, command);
      return reply.code(202).send({ event_id: eventId });
    },
  );
}
