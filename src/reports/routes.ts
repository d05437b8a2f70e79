/** Reports routes (interface "Usage and reports", contract "Reports"); GET, so the `read` permission. */
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { ReportsService } from './service.js';
import { routeErrors } from '../core/errors.js';
import { reportsErrors } from './errors.js';
import {
  AccountReportResponse,
  AgentsReportResponse,
  ConversationDetail,
  ConversationParams,
  ConversationsQuery,
  ConversationsResponse,
  StatsQuery,
  StatsResponse,
} from './schemas.js';
import { CSV_COLUMNS } from './service.js';

const notFound = z
  .object({ detail: z.object({ code: z.literal('conversation_not_found'), message: z.string() }) })
  .describe("conversation_not_found: unknown, or another account's");

export function reportRoutes(server: FastifyInstance, reports: ReportsService): void {
  const app = server.withTypeProvider<ZodTypeProvider>();
  const tags = ['Usage and reports'];

  app.get(
    '/v1/reports/me',
    { schema: { tags, summary: 'The account: conversations, minutes, visitor turns, all time and this month', response: { 200: AccountReportResponse } } },
    async (request) => reports.account(request.principal.accountId),
  );

  app.get(
    '/v1/reports/agents',
    {
      schema: {
        tags,
        summary: 'Per agent: conversations, minutes, visitor turns, all time and this month (agents without conversations included, deleted ones kept)',
        response: { 200: AgentsReportResponse },
      },
    },
    async (request) => reports.agents(request.principal.accountId),
  );

  app.get(
    '/v1/reports/conversations',
    {
      schema: { tags, summary: 'Conversations, newest first, filtered and paged', querystring: ConversationsQuery, response: { 200: ConversationsResponse } },
    },
    async (request) => reports.list(request.principal.accountId, request.query),
  );

  app.get(
    '/v1/reports/stats',
    {
      schema: { tags, summary: 'Totals and a per-day series for the same filters as the list', querystring: StatsQuery, response: { 200: StatsResponse } },
    },
    async (request) => reports.stats(request.principal.accountId, request.query),
  );

  app.get(
    '/v1/reports/conversations/:conversation_id',
    {
      config: routeErrors(reportsErrors.conversation_not_found),
      schema: {
        tags,
        summary: 'One conversation with its transcript and latency waterfall',
        params: ConversationParams,
        response: { 200: ConversationDetail, 404: notFound },
      },
    },
    async (request) => reports.conversation(request.principal.accountId, request.params.conversation_id),
  );

  app.get(
    '/v1/reports/export/conversations',
    {
      schema: {
        tags,
        summary: 'The filtered list as CSV (text/csv, streamed, newest first)',
        querystring: StatsQuery,
        produces: ['text/csv'],
        response: { 200: z.string().describe(`CSV (RFC 4180, CRLF rows): ${CSV_COLUMNS.join(',')}; notif_categories joined with ";"`) },
      },
    },
    async (request, reply) => {
      // The filter is checked before the first byte: a 422 cannot follow a 200.
      const filter = reports.filter(request.principal.accountId, request.query);
      const day = new Date().toISOString().slice(0, 10);
      reply.header('content-type', 'text/csv; charset=utf-8').header('content-disposition', `attachment; filename="conversations-${day}.csv"`);
      // A stream skips the JSON serializer; the schema above is for the OpenAPI document.
      return reply.send(Readable.from(reports.csv(filter)) as unknown as string);
    },
  );

  app.get(
    '/v1/reports/export/conversations/:conversation_id',
    {
      config: routeErrors(reportsErrors.conversation_not_found),
      schema: {
        tags,
        summary: 'One conversation as a readable transcript (text/plain attachment)',
        params: ConversationParams,
        produces: ['text/plain'],
        response: {
          200: z.string().describe('A heading (agent, visitor, start, end, duration), then one line per turn: [mm:ss] Speaker: words'),
          404: notFound,
        },
      },
    },
    async (request, reply) => {
      const row = await reports.require(request.principal.accountId, request.params.conversation_id);
      reply.header('content-type', 'text/plain; charset=utf-8').header('content-disposition', `attachment; filename="conversation-${row.id}.txt"`);
      return reply.send(Readable.from(reports.transcriptText(row)) as unknown as string);
    },
  );
}
