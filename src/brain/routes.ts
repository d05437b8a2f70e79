/** The knowledge-gap routes (`/v1/agent/{agent_id}/v2/gaps…`). */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AgentIdParams } from '../agents/schemas.js';
import { storableText } from '../knowledge/schemas.js';
import type { KnowledgeGaps } from './gaps.js';
import { routeErrors } from '../core/errors.js';
import { agentsErrors } from '../agents/errors.js';
import { brainErrors } from './errors.js';

const Gap = z
  .object({
    id: z.number().int(),
    question: z.string(),
    status: z.enum(['open', 'answered', 'dismissed']),
    times_asked: z.number().int(),
    first_asked_at: z.string(),
    last_asked_at: z.string(),
    answer: z.string().nullable(),
    resolved_at: z.string().nullable(),
  })
  .meta({ id: 'Gap' });
const GapsResponse = z.object({ gaps: z.array(Gap) }).meta({ id: 'GapsResponse' });
const GapParams = AgentIdParams.extend({ gap_id: z.coerce.number().int().min(1).max(2_147_483_647) });
const GapAnswerRequest = z
  .object({ answer: storableText(10_000, 1).refine((s) => s.trim().length > 0, { message: 'answer must not be blank' }) })
  .meta({ id: 'GapAnswerRequest' });

export function gapRoutes(server: FastifyInstance, gaps: KnowledgeGaps): void {
  const app = server.withTypeProvider<ZodTypeProvider>();
  const tags = ['Knowledge gaps'];
  app.get(
    '/v1/agent/:agent_id/v2/gaps',
    {
      config: routeErrors(agentsErrors.agent_not_found),
      schema: {
        tags,
        summary: 'Questions the agent could not answer, most asked first',
        params: AgentIdParams,
        querystring: z.object({ status: z.enum(['open', 'answered', 'dismissed']).optional() }),
        response: { 200: GapsResponse },
      },
    },
    async (request) => gaps.list(request.principal.accountId, request.params.agent_id, request.query.status),
  );

  app.post(
    '/v1/agent/:agent_id/v2/gaps/:gap_id/answer',
    {
      config: routeErrors(agentsErrors.agent_not_found, brainErrors.gap_not_found),
      schema: {
        tags,
        summary: 'Answer a gap: the agent knows the answer from its next turn',
        params: GapParams,
        body: GapAnswerRequest,
        response: { 200: Gap },
      },
    },
    async (request) => gaps.answer(request.principal.accountId, request.params.agent_id, request.params.gap_id, request.body.answer.trim()),
  );

  app.post(
    '/v1/agent/:agent_id/v2/gaps/:gap_id/dismiss',
    {
      config: routeErrors(agentsErrors.agent_not_found, brainErrors.gap_not_found),
      schema: { tags, summary: 'Dismiss a gap', params: GapParams, response: { 200: Gap } },
    },
    async (request) => gaps.dismiss(request.principal.accountId, request.params.agent_id, request.params.gap_id),
  );
}
