/** HTTP routes of the Business Brain's knowledge. Thin: parse, call the service, shape the answer. */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AgentIdParams, DeleteQuery } from '../agents/schemas.js';
import type { KnowledgeService } from './service.js';
import { routeErrors } from '../core/errors.js';
import { agentsErrors } from '../agents/errors.js';
import { knowledgeErrors } from './errors.js';
import {
  AgentPageResponse,
  BrainStatusResponse,
  ClearPagesQuery,
  EditPageRequest,
  ExtractLinksResponse,
  GenerateBrainRequest,
  KBSectionCreate,
  KBSectionsResponse,
  KBSectionUpdate,
  PageParams,
  PageRequest,
  TopicParams,
} from './schemas.js';

export function knowledgeRoutes(server: FastifyInstance, knowledge: KnowledgeService): void {
  const app = server.withTypeProvider<ZodTypeProvider>();
  const tags = ['Knowledge and brain'];
  const params = AgentIdParams;

  app.get(
    '/v1/agent/:agent_id/extract-links',
    {
      config: routeErrors(agentsErrors.agent_not_found, knowledgeErrors.no_website, knowledgeErrors.private_address, knowledgeErrors.website_unreachable),
      schema: { tags, summary: "Find the pages of the agent's website, scored and categorised", params, response: { 200: ExtractLinksResponse } },
    },
    async (request) => {
      const found = await knowledge.extractLinks(request.principal.accountId, request.params.agent_id);
      return { homepage_url: found.homepageUrl, links: found.links, total_found: found.totalFound };
    },
  );

  app.post(
    '/v1/agent/:agent_id/generate-brain',
    {
      config: routeErrors(
        agentsErrors.agent_not_found,
        knowledgeErrors.too_many_pages,
        knowledgeErrors.build_in_progress,
        knowledgeErrors.page_limit,
        knowledgeErrors.no_website,
      ),
      schema: {
        tags,
        summary: 'Build the brain from the given pages (or the website)',
        params,
        body: GenerateBrainRequest.nullish(),
        response: { 200: BrainStatusResponse },
      },
    },
    async (request) => knowledge.generate(request.principal.accountId, request.params.agent_id, request.body?.pages),
  );

  app.get(
    '/v1/agent/:agent_id/brain-status',
    {
      config: routeErrors(agentsErrors.agent_not_found),
      schema: { tags, summary: "The brain build's state (and, when complete, the instructions)", params, response: { 200: BrainStatusResponse } },
    },
    async (request) => knowledge.status(request.principal.accountId, request.params.agent_id),
  );

  app.post(
    '/v1/agent/:agent_id/add-page',
    {
      config: routeErrors(agentsErrors.agent_not_found, knowledgeErrors.invalid_url, knowledgeErrors.page_limit),
      schema: { tags, summary: 'Read one more page into the knowledge (in the background)', params, body: PageRequest, response: { 202: AgentPageResponse } },
    },
    async (request, reply) => reply.code(202).send(await knowledge.addPage(request.principal.accountId, request.params.agent_id, request.body)),
  );

  app.get(
    '/v1/agent/:agent_id/pages/list',
    {
      config: routeErrors(agentsErrors.agent_not_found),
      schema: { tags, summary: "The agent's pages", params, response: { 200: z.array(AgentPageResponse) } },
    },
    async (request) => knowledge.listPages(request.principal.accountId, request.params.agent_id),
  );

  app.get(
    '/v1/agent/:agent_id/pages/:page_id',
    {
      config: routeErrors(agentsErrors.agent_not_found, knowledgeErrors.page_not_found),
      schema: { tags, summary: 'One page with its readable text', params: PageParams, response: { 200: AgentPageResponse } },
    },
    async (request) => knowledge.getPage(request.principal.accountId, request.params.agent_id, request.params.page_id),
  );

  app.patch(
    '/v1/agent/:agent_id/pages/:page_id',
    {
      config: routeErrors(agentsErrors.agent_not_found, knowledgeErrors.page_not_found),
      schema: {
        tags,
        summary: "Edit a page: its category, or the owner's own text for it",
        params: PageParams,
        body: EditPageRequest,
        response: { 200: AgentPageResponse },
      },
    },
    async (request) => knowledge.editPage(request.principal.accountId, request.params.agent_id, request.params.page_id, request.body),
  );

  app.delete(
    '/v1/agent/:agent_id/pages/:page_id',
    {
      config: routeErrors(agentsErrors.agent_not_found, knowledgeErrors.page_not_found),
      schema: { tags, summary: 'Delete a page from the knowledge', params: PageParams, querystring: DeleteQuery, response: { 204: z.null() } },
    },
    async (request, reply) => {
      await knowledge.deletePage(request.principal.accountId, request.params.agent_id, request.params.page_id);
      return reply.code(204).send(null);
    },
  );

  app.delete(
    '/v1/agent/:agent_id/pages',
    {
      config: routeErrors(agentsErrors.agent_not_found),
      schema: {
        tags,
        summary: 'Clear the pages (optionally only primary or only background ones)',
        params,
        querystring: ClearPagesQuery,
        response: { 204: z.null() },
      },
    },
    async (request, reply) => {
      const only = request.query.is_primary === undefined ? undefined : request.query.is_primary === 'true';
      await knowledge.clearPages(request.principal.accountId, request.params.agent_id, only);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/v1/agent/:agent_id/kb-sections',
    {
      config: routeErrors(agentsErrors.agent_not_found),
      schema: { tags, summary: 'Knowledge-base sections', params, response: { 200: KBSectionsResponse } },
    },
    async (request) => knowledge.sections(request.principal.accountId, request.params.agent_id),
  );

  app.post(
    '/v1/agent/:agent_id/kb-sections',
    {
      config: routeErrors(agentsErrors.agent_not_found, knowledgeErrors.section_limit, knowledgeErrors.section_exists),
      schema: {
        tags,
        summary: 'Add a knowledge-base section (its topic is a slug of the title)',
        params,
        body: KBSectionCreate,
        response: { 200: KBSectionsResponse },
      },
    },
    async (request) => knowledge.createSection(request.principal.accountId, request.params.agent_id, request.body),
  );

  app.patch(
    '/v1/agent/:agent_id/kb-sections/:topic',
    {
      config: routeErrors(agentsErrors.agent_not_found, knowledgeErrors.section_not_found),
      schema: {
        tags,
        summary: 'Update a knowledge-base section (its topic stays)',
        params: TopicParams,
        body: KBSectionUpdate,
        response: { 200: KBSectionsResponse },
      },
    },
    async (request) => knowledge.updateSection(request.principal.accountId, request.params.agent_id, request.params.topic, request.body),
  );

  app.delete(
    '/v1/agent/:agent_id/kb-sections/:topic',
    {
      config: routeErrors(agentsErrors.agent_not_found, knowledgeErrors.section_not_found),
      schema: { tags, summary: 'Delete a knowledge-base section', params: TopicParams, querystring: DeleteQuery, response: { 200: KBSectionsResponse } },
    },
    async (request) => knowledge.deleteSection(request.principal.accountId, request.params.agent_id, request.params.topic),
  );
}
