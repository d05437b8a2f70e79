/**
 * The knowledge-v2 routes (`/v1/agent/{agent_id}/v2/…`, contract "Knowledge, version 2"), except
 * rules and gaps (handoff and brain). Thin: parse, call the v2 service, shape the answer.
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { AgentIdParams } from '../agents/schemas.js';
import { BrainStatusResponse } from '../knowledge/schemas.js';
import type { KnowledgeService } from '../knowledge/service.js';
import { toId, type KnowledgeV2 } from './service.js';
import { routeErrors } from '../core/errors.js';
import { agentsErrors } from '../agents/errors.js';
import { knowledgeErrors } from '../knowledge/errors.js';
import { knowledgeV2Errors } from './errors.js';
import {
  AnswerRequest,
  BehaviorResponse,
  BehaviorUpdateRequest,
  BrainView,
  CompletionResponse,
  ConsolidateResponse,
  CorrectionApplyRequest,
  CorrectionApplyResponse,
  CorrectionPreview,
  CorrectionRequest,
  DynamicInstructionsResponse,
  DynamicInstructionsUpdate,
  DynamicPreviewRequest,
  DynamicPreviewResponse,
  ExtractRequest,
  KnowledgeOpsRequest,
  KnowledgeOpsResponse,
  OrphanResolveRequest,
  OrphansResponse,
  ProbeRequest,
  ProbeResponse,
  QuestionStateRequest,
  RecompileResponse,
  ReviewResolveRequest,
  ReviewResolveResponse,
} from './schemas.js';

export function knowledgeV2Routes(server: FastifyInstance, knowledge: KnowledgeService, v2: KnowledgeV2): void {
  const app = server.withTypeProvider<ZodTypeProvider>();
  const tags = ['Knowledge v2'];
  const params = AgentIdParams;
  const base = '/v1/agent/:agent_id/v2';

  app.post(
    `${base}/probe`,
    {
      config: routeErrors(agentsErrors.agent_not_found),
      schema: {
        tags,
        summary: 'A quick look at a website (reachable, language, kind of business, pages, robots.txt); changes nothing',
        params,
        body: ProbeRequest.nullish(),
        response: { 200: ProbeResponse },
      },
    },
    async (request) => v2.probe(request.principal.accountId, request.params.agent_id, request.body?.url),
  );

  app.post(
    `${base}/schema/generate`,
    {
      config: routeErrors(agentsErrors.agent_not_found, knowledgeErrors.no_website, knowledgeErrors.build_in_progress),
      schema: {
        tags,
        summary: 'Generate the questions this business must answer, from its website (a build job: poll brain-status)',
        params,
        response: { 200: BrainStatusResponse },
      },
    },
    async (request) => knowledge.queueV2(request.principal.accountId, request.params.agent_id, 'schema'),
  );

  app.post(
    `${base}/extract`,
    {
      config: routeErrors(agentsErrors.agent_not_found, knowledgeErrors.too_many_pages, knowledgeErrors.build_in_progress, knowledgeErrors.page_limit),
      schema: {
        tags,
        summary: 'Extract the facts answering the questions from the pages (a build job: poll brain-status)',
        params,
        body: ExtractRequest.nullish(),
        response: { 200: BrainStatusResponse },
      },
    },
    async (request) => knowledge.queueV2(request.principal.accountId, request.params.agent_id, 'extract', request.body?.pages),
  );

  app.get(
    `${base}/brain`,
    {
      config: routeErrors(agentsErrors.agent_not_found),
      schema: { tags, summary: 'What the agent knows: questions, facts with their sources, review items, completion', params, response: { 200: BrainView } },
    },
    async (request) => v2.brainView(request.principal.accountId, request.params.agent_id),
  );

  app.get(
    `${base}/completion`,
    {
      config: routeErrors(agentsErrors.agent_not_found),
      schema: {
        tags,
        summary: 'How many needed questions are answered, and what is missing (most asked first)',
        params,
        response: { 200: CompletionResponse },
      },
    },
    async (request) => v2.completion(request.principal.accountId, request.params.agent_id),
  );

  app.post(
    `${base}/recompile`,
    {
      config: routeErrors(agentsErrors.agent_not_found, knowledgeErrors.build_in_progress),
      schema: {
        tags,
        summary: 'Rebuild the instructions from the facts and behavior now (a build job: poll brain-status)',
        params,
        response: { 200: RecompileResponse },
      },
    },
    async (request) => knowledge.queueV2(request.principal.accountId, request.params.agent_id, 'recompile'),
  );

  app.post(
    `${base}/answer`,
    {
      config: routeErrors(agentsErrors.agent_not_found, knowledgeV2Errors.question_not_found, knowledgeV2Errors.fact_limit),
      schema: {
        tags,
        summary: "The owner's answer to a question (a fact with source owner)",
        params,
        body: AnswerRequest,
        response: { 200: CompletionResponse },
      },
    },
    async (request) => v2.answer(request.principal.accountId, request.params.agent_id, toId(request.body.question_id), request.body.answer),
  );

  app.post(
    `${base}/questions/state`,
    {
      config: routeErrors(agentsErrors.agent_not_found, knowledgeV2Errors.question_not_found),
      schema: { tags, summary: 'Mark a question needed, not applicable or skipped', params, body: QuestionStateRequest, response: { 200: CompletionResponse } },
    },
    async (request) => v2.setState(request.principal.accountId, request.params.agent_id, toId(request.body.question_id), request.body.state),
  );

  app.post(
    `${base}/knowledge/ops`,
    {
      config: routeErrors(agentsErrors.agent_not_found, knowledgeV2Errors.fact_limit),
      schema: { tags, summary: 'Add, change and remove facts in one atomic batch', params, body: KnowledgeOpsRequest, response: { 200: KnowledgeOpsResponse } },
    },
    async (request) => v2.ops(request.principal.accountId, request.params.agent_id, request.body.ops),
  );

  app.post(
    `${base}/review/resolve`,
    {
      config: routeErrors(agentsErrors.agent_not_found, knowledgeV2Errors.review_not_found),
      schema: {
        tags,
        summary: 'Resolve a disagreement: keep one fact, or replace them with your text',
        params,
        body: ReviewResolveRequest,
        response: { 200: ReviewResolveResponse },
      },
    },
    async (request) => {
      const body = request.body as { review_id: number | string; fact_id?: number | string; text?: string };
      return v2.resolveReview(
        request.principal.accountId,
        request.params.agent_id,
        toId(body.review_id),
        body.fact_id !== undefined ? { factId: toId(body.fact_id) } : { text: body.text },
      );
    },
  );

  app.post(
    `${base}/consolidate`,
    {
      config: routeErrors(agentsErrors.agent_not_found),
      schema: { tags, summary: 'Merge facts saying the same thing (their sources kept)', params, response: { 200: ConsolidateResponse } },
    },
    async (request) => v2.consolidate(request.principal.accountId, request.params.agent_id),
  );

  app.post(
    `${base}/correction`,
    {
      config: routeErrors(agentsErrors.agent_not_found),
      schema: {
        tags,
        summary: "Preview what the owner's sentence changes (nothing changes yet)",
        params,
        body: CorrectionRequest,
        response: { 200: CorrectionPreview },
      },
    },
    async (request) => v2.correction(request.principal.accountId, request.params.agent_id, request.body.text),
  );

  app.post(
    `${base}/correction/apply`,
    {
      config: routeErrors(agentsErrors.agent_not_found, knowledgeV2Errors.preview_not_found),
      schema: {
        tags,
        summary: 'Apply a previewed correction, exactly as previewed (once)',
        params,
        body: CorrectionApplyRequest,
        response: { 200: CorrectionApplyResponse },
      },
    },
    async (request) => v2.applyCorrection(request.principal.accountId, request.params.agent_id, String(request.body.preview_id)),
  );

  app.get(
    `${base}/behavior`,
    {
      config: routeErrors(agentsErrors.agent_not_found),
      schema: { tags, summary: 'How the agent speaks', params, response: { 200: BehaviorResponse } },
    },
    async (request) => v2.behavior(request.principal.accountId, request.params.agent_id),
  );

  app.patch(
    `${base}/behavior`,
    {
      config: routeErrors(agentsErrors.agent_not_found),
      schema: { tags, summary: 'Change how the agent speaks (only the fields sent)', params, body: BehaviorUpdateRequest, response: { 200: BehaviorResponse } },
    },
    async (request) => v2.patchBehavior(request.principal.accountId, request.params.agent_id, request.body),
  );

  app.get(
    `${base}/dynamic-instructions`,
    {
      config: routeErrors(agentsErrors.agent_not_found),
      schema: { tags, summary: 'Instructions filled from the visitor values in each conversation', params, response: { 200: DynamicInstructionsResponse } },
    },
    async (request) => v2.dynamic(request.principal.accountId, request.params.agent_id),
  );

  app.patch(
    `${base}/dynamic-instructions`,
    {
      config: routeErrors(agentsErrors.agent_not_found),
      schema: {
        tags,
        summary: 'Set the dynamic instructions ({{visitor.<name>}} placeholders)',
        params,
        body: DynamicInstructionsUpdate,
        response: { 200: DynamicInstructionsResponse },
      },
    },
    async (request) => v2.patchDynamic(request.principal.accountId, request.params.agent_id, request.body.instructions),
  );

  app.post(
    `${base}/dynamic-instructions/preview`,
    {
      config: routeErrors(agentsErrors.agent_not_found),
      schema: {
        tags,
        summary: 'Render dynamic instructions with visitor values (a name without a value renders empty)',
        params,
        body: DynamicPreviewRequest,
        response: { 200: DynamicPreviewResponse },
      },
    },
    async (request) => v2.previewDynamic(request.principal.accountId, request.params.agent_id, request.body.values, request.body.instructions),
  );

  app.get(
    `${base}/orphans`,
    {
      config: routeErrors(agentsErrors.agent_not_found),
      schema: { tags, summary: 'Facts whose every source is gone (a page deleted, a section removed)', params, response: { 200: OrphansResponse } },
    },
    async (request) => v2.orphans(request.principal.accountId, request.params.agent_id),
  );

  app.post(
    `${base}/orphans/resolve`,
    {
      config: routeErrors(agentsErrors.agent_not_found),
      schema: { tags, summary: "Keep orphans (they become the owner's) or drop them", params, body: OrphanResolveRequest, response: { 200: OrphansResponse } },
    },
    async (request) => v2.resolveOrphans(request.principal.accountId, request.params.agent_id, request.body.fact_ids, request.body.action),
  );
}
