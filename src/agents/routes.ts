/** HTTP routes of the Agents table. Thin: parse, call the service, shape the answer. */
import { agentsErrors } from './errors.js';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Agent, AgentService } from './service.js';
import type { PreviewLinks } from './preview-links.js';
import {
  AgentCreateRequest,
  AgentIdParams,
  AgentResponse,
  AgentUpdateRequest,
  DeleteQuery,
  EmbedConfigResponse,
  EmbedConfigUpdate,
  HasAgentsResponse,
  PreviewRequest,
  PreviewResponse,
  SigningSecretResponse,
  VisitorValuesResponse,
  VisitorValuesUpdate,
} from './schemas.js';
import { routeErrors, ValidationFailed, validationItem } from '../core/errors.js';

const UPDATE_ONLY = ['welcome_message', 'fillers_enabled', 'status'] as const;

export function agentResponse(agent: Agent, defaultAgentId: number | null): z.infer<typeof AgentResponse> {
  return {
    id: agent.id,
    name: agent.name,
    avatar_id: agent.avatar_id,
    voice_id: agent.voice_id,
    tts_primary: agent.tts_primary,
    languages: agent.languages as z.infer<typeof AgentResponse>['languages'],
    studio: agent.studio,
    website_url: agent.website_url,
    system_prompt: agent.system_prompt,
    concurrency_limit: agent.concurrency_limit,
    welcome_message: agent.welcome_message,
    fillers_enabled: agent.fillers_enabled,
    status: agent.status,
    is_default: defaultAgentId === agent.id,
    liveavatar_avatar_id: agent.liveavatar_avatar_id ?? null,
    created_at: new Date(agent.created_at).toISOString(),
    updated_at: new Date(agent.updated_at).toISOString(),
  };
}

export function agentRoutes(server: FastifyInstance, agents: AgentService, previews: PreviewLinks): void {
  const app = server.withTypeProvider<ZodTypeProvider>();
  const tags = ['Agents'];
  const params = AgentIdParams;
  const respond = async (accountId: number, agent: Agent) => {
    const account = await agents.account(accountId);
    return agentResponse(agent, account.default_agent_id);
  };

  app.post(
    '/v1/agent/create',
    {
      config: routeErrors(
        agentsErrors.agent_limit,
        agentsErrors.unknown_avatar,
        agentsErrors.unknown_voice,
        agentsErrors.paid_feature,
        agentsErrors.voice_face_mismatch,
        agentsErrors.invalid_look,
      ),
      schema: { tags, summary: 'Create an agent', body: AgentCreateRequest, response: { 200: AgentResponse } },
      // welcome_message, fillers_enabled and status are update-only: say so rather than drop them.
      preValidation: async (request) => {
        const body = request.body as Record<string, unknown> | null;
        const present = UPDATE_ONLY.filter((f) => body && typeof body === 'object' && f in body);
        if (present.length) {
          throw new ValidationFailed(
            present.map((f) => validationItem(['body', f], `${f} is set with PATCH /v1/agent/{agent_id} once the agent exists`, body![f], 'extra_forbidden')),
          );
        }
      },
    },
    async (request) => {
      const agent = await agents.create(request.principal.accountId, request.body);
      return respond(request.principal.accountId, agent);
    },
  );

  app.get('/v1/agent/list', { schema: { tags, summary: 'List agents', response: { 200: z.array(AgentResponse) } } }, async (request) => {
    const account = await agents.account(request.principal.accountId);
    return (await agents.list(account.id)).map((a) => agentResponse(a, account.default_agent_id));
  });

  app.get('/v1/agent/has-agents', { schema: { tags, summary: 'Whether the account has agents', response: { 200: HasAgentsResponse } } }, async (request) => {
    const account = await agents.account(request.principal.accountId);
    const count = await agents.count(account.id);
    return { has_agents: count > 0, count, default_agent_id: account.default_agent_id };
  });

  app.get(
    '/v1/agent/:agent_id',
    { config: routeErrors(agentsErrors.agent_not_found), schema: { tags, summary: 'Get an agent', params, response: { 200: AgentResponse } } },
    async (request) => {
      return respond(request.principal.accountId, await agents.get(request.principal.accountId, request.params.agent_id));
    },
  );

  app.patch(
    '/v1/agent/:agent_id',
    {
      config: routeErrors(
        agentsErrors.agent_not_found,
        agentsErrors.liveavatar_avatar_id_taken,
        agentsErrors.unknown_avatar,
        agentsErrors.unknown_voice,
        agentsErrors.paid_feature,
        agentsErrors.voice_face_mismatch,
        agentsErrors.invalid_look,
      ),
      schema: {
        tags,
        summary: 'Update an agent (only the fields that change; studio merges)',
        params,
        body: AgentUpdateRequest,
        response: { 200: AgentResponse },
      },
    },
    async (request) => {
      return respond(request.principal.accountId, await agents.update(request.principal.accountId, request.params.agent_id, request.body));
    },
  );

  app.delete(
    '/v1/agent/:agent_id',
    {
      config: routeErrors(agentsErrors.agent_not_found),
      schema: { tags, summary: 'Delete an agent and everything it owns', params, querystring: DeleteQuery, response: { 204: z.null() } },
    },
    async (request, reply) => {
      await agents.delete(request.principal.accountId, request.params.agent_id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/v1/agent/:agent_id/duplicate',
    {
      config: routeErrors(agentsErrors.agent_not_found, agentsErrors.agent_limit),
      schema: { tags, summary: 'Copy an agent with its settings and knowledge', params, response: { 200: AgentResponse } },
    },
    async (request) => {
      return respond(request.principal.accountId, await agents.duplicate(request.principal.accountId, request.params.agent_id));
    },
  );

  app.post(
    '/v1/agent/:agent_id/set-default',
    {
      config: routeErrors(agentsErrors.agent_not_found),
      schema: { tags, summary: "Make this the account's default agent", params, response: { 200: AgentResponse } },
    },
    async (request) => {
      return respond(request.principal.accountId, await agents.setDefault(request.principal.accountId, request.params.agent_id));
    },
  );

  // ---- embed ----
  const embedTags = ['Embed'];
  app.get(
    '/v1/agent/:agent_id/embed',
    {
      config: routeErrors(agentsErrors.agent_not_found),
      schema: { tags: embedTags, summary: 'Embed configuration and snippets', params, response: { 200: EmbedConfigResponse } },
    },
    async (request) => {
      return agents.embedResponse(await agents.get(request.principal.accountId, request.params.agent_id));
    },
  );
  app.patch(
    '/v1/agent/:agent_id/embed',
    {
      config: routeErrors(agentsErrors.agent_not_found),
      schema: { tags: embedTags, summary: 'Change embed settings', params, body: EmbedConfigUpdate, response: { 200: EmbedConfigResponse } },
    },
    async (request) => {
      return agents.embedResponse(await agents.updateEmbed(request.principal.accountId, request.params.agent_id, request.body));
    },
  );
  app.post(
    '/v1/agent/:agent_id/embed/regenerate',
    {
      config: routeErrors(agentsErrors.agent_not_found),
      schema: { tags: embedTags, summary: 'Replace the public embed key (the old snippet stops working)', params, response: { 200: EmbedConfigResponse } },
    },
    async (request) => {
      return agents.embedResponse(await agents.regenerateEmbedKey(request.principal.accountId, request.params.agent_id));
    },
  );
  app.post(
    '/v1/agent/:agent_id/embed/apply-to-all',
    {
      config: routeErrors(agentsErrors.agent_not_found),
      schema: {
        tags: embedTags,
        summary: "Copy this agent's widget settings (not its key) to all the account's agents",
        params,
        response: { 200: z.object({ source_agent_id: z.number(), updated_agent_ids: z.array(z.number()), fields: z.array(z.string()) }) },
      },
    },
    async (request) => agents.applyEmbedToAll(request.principal.accountId, request.params.agent_id),
  );

  app.post(
    '/v1/agent/:agent_id/preview',
    {
      config: routeErrors(agentsErrors.agent_not_found),
      schema: {
        tags,
        summary: 'A short-lived link that shows the agent as saved, without a metered session',
        params,
        response: {
          200: z.object({
            agent_id: z.number(),
            preview_url: z.string(),
            expires_at: z.string(),
            avatar_id: z.string(),
            voice_id: z.string(),
            studio: z.unknown(),
            welcome_message: z.string().nullable(),
          }),
        },
      },
    },
    async (request) => {
      const agent = await agents.get(request.principal.accountId, request.params.agent_id);
      return {
        agent_id: agent.id,
        ...previews.create(agent.id),
        avatar_id: agent.avatar_id,
        voice_id: agent.voice_id,
        studio: agent.studio,
        welcome_message: agent.welcome_message,
      };
    },
  );

  // ---- visitor values ----
  const vvTags = ['Visitor values'];
  app.get(
    '/v1/agent/:agent_id/visitor-values',
    {
      config: routeErrors(agentsErrors.agent_not_found),
      schema: { tags: vvTags, summary: 'Declared visitor values and how to sign them', params, response: { 200: VisitorValuesResponse } },
    },
    async (request) => {
      return agents.visitorValuesResponse(await agents.get(request.principal.accountId, request.params.agent_id));
    },
  );
  app.patch(
    '/v1/agent/:agent_id/visitor-values',
    {
      config: routeErrors(agentsErrors.agent_not_found),
      schema: { tags: vvTags, summary: 'Declare visitor values', params, body: VisitorValuesUpdate, response: { 200: VisitorValuesResponse } },
    },
    async (request) => {
      return agents.visitorValuesResponse(await agents.updateVisitorValues(request.principal.accountId, request.params.agent_id, request.body));
    },
  );
  const secretResponse = (agent: Agent) => ({
    agent_id: agent.id,
    secret: agent.visitor_secret,
    rotated_at: new Date(agent.visitor_secret_rotated_at).toISOString(),
  });
  app.get(
    '/v1/agent/:agent_id/visitor-values/secret',
    {
      config: routeErrors(agentsErrors.agent_not_found),
      schema: { tags: vvTags, summary: 'Reveal the visitor signing secret', params, response: { 200: SigningSecretResponse } },
    },
    async (request) => {
      return secretResponse(await agents.get(request.principal.accountId, request.params.agent_id));
    },
  );
  app.post(
    '/v1/agent/:agent_id/visitor-values/secret',
    {
      config: routeErrors(agentsErrors.agent_not_found),
      schema: {
        tags: vvTags,
        summary: 'Rotate the visitor signing secret (the old one stops working at once)',
        params,
        response: { 200: SigningSecretResponse },
      },
    },
    async (request) => {
      return secretResponse(await agents.rotateVisitorSecret(request.principal.accountId, request.params.agent_id));
    },
  );
  app.post(
    '/v1/agent/:agent_id/visitor-values/preview',
    {
      config: routeErrors(agentsErrors.agent_not_found),
      schema: {
        tags: vvTags,
        summary: 'Check signed sample values and show what the agent would receive',
        params,
        body: PreviewRequest,
        response: { 200: PreviewResponse },
      },
    },
    async (request) => {
      const agent = await agents.get(request.principal.accountId, request.params.agent_id);
      return agents.previewVisitorValues(agent, request.body);
    },
  );
}
