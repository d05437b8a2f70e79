/**
 * The data-handoff routes (`/v1/agent/{agent_id}/v2/rules…`, contract: "Data handoff"): rules,
 * their delivery log, a test send, and the replay of a failed delivery.
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AgentIdParams } from '../agents/schemas.js';
import { storableText } from '../knowledge/schemas.js';
import { FORMATS } from './formats.js';
import { DESTINATION_TYPES } from './rules.js';
import { DETAIL_KINDS } from './details/spec.js';
import type { Handoff } from './handoff.js';
import { routeErrors } from '../core/errors.js';
import { agentsErrors } from '../agents/errors.js';
import { deliveryErrors } from '../delivery/errors.js';
import { handoffErrors } from './errors.js';

const DetailIn = z
  .object({
    name: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, 'a detail name is letters, digits and _ (at most 64), not starting with a digit'),
    description: storableText(500).default(''),
    required: z.boolean().default(false),
    type: z.enum(DETAIL_KINDS).optional().describe('The kind of value; guessed from the name and description when absent'),
  })
  .strict()
  .meta({ id: 'HandoffDetail' });

const HeaderName = z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/, 'not a valid HTTP header name');
const HeaderValue = z
  .string()
  .max(2000)
  .regex(/^[^\r\n\0]*$/, 'a header value must not contain line breaks');

const destinationFields = {
  url: z.string().max(2048).optional(),
  method: z.enum(['POST', 'GET']).optional(),
  format: z.enum(FORMATS).optional(),
  headers: z
    .record(HeaderName, HeaderValue)
    .refine((h) => Object.keys(h).length <= 20, { message: 'at most 20 custom headers' })
    .optional(),
  destination_id: z.number().int().min(1).max(2_147_483_647).optional().describe('telegram only: a Telegram destination of the account'),
  template: storableText(20_000).optional(),
};
const DestinationIn = z
  .object({ type: z.enum(DESTINATION_TYPES), ...destinationFields })
  .strict()
  .meta({ id: 'HandoffDestination' });
const DestinationPatch = z
  .object({ type: z.enum(DESTINATION_TYPES).optional(), ...destinationFields })
  .strict()
  .meta({ id: 'HandoffDestinationPatch' });

const RuleCreateRequest = z
  .object({
    name: z.string().trim().min(1).max(100),
    details: z.array(DetailIn).max(20).default([]),
    destination: DestinationIn,
    enabled: z.boolean().default(true),
  })
  .strict()
  .meta({ id: 'RuleCreateRequest' });

const RuleUpdateRequest = z
  .object({
    name: z.string().trim().min(1).max(100).optional(),
    details: z.array(DetailIn).max(20).optional(),
    destination: DestinationPatch.optional(),
    enabled: z.boolean().optional(),
    rotate_secret: z.boolean().optional().describe('true: replace the webhook secret'),
  })
  .strict()
  .meta({ id: 'RuleUpdateRequest' });

const Rule = z
  .object({
    id: z.number().int(),
    agent_id: z.number().int(),
    name: z.string(),
    details: z.array(z.object({ name: z.string(), description: z.string(), required: z.boolean(), type: z.enum(DETAIL_KINDS).optional() })),
    destination: z.object({
      type: z.enum(DESTINATION_TYPES),
      url: z.string().optional(),
      method: z.enum(['POST', 'GET']).optional(),
      format: z.enum(FORMATS).optional(),
      headers: z.record(z.string(), z.string()).optional(),
      destination_id: z.number().int().optional(),
      template: z.string(),
    }),
    enabled: z.boolean(),
    state: z.enum(['active', 'needs_attention', 'paused']),
    secret: z.string().optional().describe('The webhook signing secret (whsec_…); masked to a key without setup'),
    consecutive_failures: z.number().int(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'Rule' });
const RulesResponse = z.object({ rules: z.array(Rule) }).meta({ id: 'RulesResponse' });
const RuleCreateResponse = z.object({ rule: Rule }).meta({ id: 'RuleCreateResponse' });

const Attempt = z.object({
  at: z.string(),
  status_code: z.number().int().nullable(),
  error: z.string().nullable(),
  duration_ms: z.number().int(),
  response_excerpt: z.string().nullable(),
});
const Delivery = z
  .object({
    delivery_id: z.string(),
    conversation_id: z.string().nullable(),
    kind: z.enum(['event', 'test']),
    status: z.enum(['pending', 'retrying', 'delivered', 'failed']),
    method: z.enum(['POST', 'GET']),
    url: z.string(),
    created_at: z.string(),
    attempts: z.array(Attempt),
    next_attempt_at: z.string().nullable(),
  })
  .meta({ id: 'HandoffDelivery' });
const TestResponse = z
  .object({
    delivered: z.boolean(),
    status_code: z.number().int().nullable(),
    error: z.string().nullable(),
    delivery_id: z.string().nullable(),
    duration_ms: z.number().int(),
  })
  .meta({ id: 'RuleTestResponse' });

const RuleParams = AgentIdParams.extend({ rule_id: z.coerce.number().int().min(1).max(2_147_483_647) });
const DeliveryParams = RuleParams.extend({ delivery_id: z.uuid() });
const Page = z.object({ limit: z.coerce.number().int().min(1).max(200).default(50), offset: z.coerce.number().int().min(0).max(1_000_000).default(0) });

export interface HandoffRouteDeps {
  handoff: Handoff;
  /** The agent of the account (404 agent_not_found otherwise). */
  agent(accountId: number, agentId: number): Promise<{ id: number; name: string }>;
}

export function handoffRoutes(server: FastifyInstance, deps: HandoffRouteDeps): void {
  const app = server.withTypeProvider<ZodTypeProvider>();
  const { handoff } = deps;
  const rules = handoff.rules;
  const tags = ['Data handoff'];
  const base = '/v1/agent/:agent_id/v2/rules';
  const canSee = (permissions: ReadonlySet<string>) => permissions.has('setup');
  const listOf = async (accountId: number, agentId: number, showSecret: boolean) => ({
    rules: (await rules.list(agentId)).filter((r) => r.accountId === accountId).map((r) => rules.view(r, showSecret)),
  });

  app.get(
    base,
    {
      config: routeErrors(agentsErrors.agent_not_found),
      schema: { tags, summary: "The agent's data-handoff rules", params: AgentIdParams, response: { 200: RulesResponse } },
    },
    async (request) => {
      const { accountId, permissions } = request.principal;
      await deps.agent(accountId, request.params.agent_id);
      return listOf(accountId, request.params.agent_id, canSee(permissions));
    },
  );

  app.post(
    base,
    {
      config: routeErrors(
        agentsErrors.agent_not_found,
        handoffErrors.rule_limit,
        handoffErrors.destination_unavailable,
        deliveryErrors.invalid_url,
        deliveryErrors.private_address,
      ),
      schema: {
        tags,
        summary: 'Create a data-handoff rule (its template is checked now)',
        params: AgentIdParams,
        body: RuleCreateRequest,
        response: { 200: RuleCreateResponse },
      },
    },
    async (request) => {
      const { accountId } = request.principal;
      await deps.agent(accountId, request.params.agent_id);
      const rule = await rules.create(accountId, request.params.agent_id, request.body);
      return { rule: rules.view(rule, true) };
    },
  );

  app.patch(
    `${base}/:rule_id`,
    {
      config: routeErrors(
        agentsErrors.agent_not_found,
        handoffErrors.rule_not_found,
        handoffErrors.destination_unavailable,
        deliveryErrors.invalid_url,
        deliveryErrors.private_address,
      ),
      schema: {
        tags,
        summary: 'Change a rule; {"rotate_secret": true} replaces its webhook secret',
        params: RuleParams,
        body: RuleUpdateRequest,
        response: { 200: RulesResponse },
      },
    },
    async (request) => {
      const { accountId } = request.principal;
      await deps.agent(accountId, request.params.agent_id);
      await rules.update(accountId, request.params.agent_id, request.params.rule_id, request.body);
      return listOf(accountId, request.params.agent_id, true);
    },
  );

  app.delete(
    `${base}/:rule_id`,
    {
      config: routeErrors(agentsErrors.agent_not_found, handoffErrors.rule_not_found),
      schema: { tags, summary: 'Delete a rule (and its delivery log)', params: RuleParams, response: { 200: RulesResponse } },
    },
    async (request) => {
      const { accountId, permissions } = request.principal;
      await deps.agent(accountId, request.params.agent_id);
      await handoff.remove(accountId, request.params.agent_id, request.params.rule_id);
      return listOf(accountId, request.params.agent_id, canSee(permissions));
    },
  );

  app.get(
    `${base}/:rule_id/deliveries`,
    {
      config: routeErrors(agentsErrors.agent_not_found, handoffErrors.rule_not_found),
      schema: {
        tags,
        summary: "The rule's deliveries, newest first, each with its attempts",
        params: RuleParams,
        querystring: Page,
        response: { 200: z.object({ deliveries: z.array(Delivery) }) },
      },
    },
    async (request) => {
      const { accountId } = request.principal;
      await deps.agent(accountId, request.params.agent_id);
      return { deliveries: await handoff.deliveryLog(accountId, request.params.agent_id, request.params.rule_id, request.query) };
    },
  );

  app.post(
    `${base}/:rule_id/test`,
    {
      config: routeErrors(agentsErrors.agent_not_found, handoffErrors.rule_not_found),
      schema: {
        tags,
        summary: 'Send one delivery now with sample values; a success resumes a paused rule',
        params: RuleParams,
        response: { 200: TestResponse },
      },
    },
    async (request) => {
      const { accountId } = request.principal;
      const agent = await deps.agent(accountId, request.params.agent_id);
      const result = await handoff.test(accountId, agent.id, request.params.rule_id, agent.name);
      return {
        delivered: result.delivered,
        status_code: result.status_code,
        error: result.error,
        delivery_id: result.delivery_id || null,
        duration_ms: result.duration_ms,
      };
    },
  );

  app.post(
    `${base}/:rule_id/deliveries/:delivery_id/replay`,
    {
      config: routeErrors(agentsErrors.agent_not_found, handoffErrors.rule_not_found, handoffErrors.delivery_not_found, handoffErrors.delivery_not_failed),
      schema: {
        tags,
        summary: 'Make a failed delivery again (same X-Service-Delivery), from the start of the schedule',
        params: DeliveryParams,
        response: { 200: z.object({ delivery: Delivery }) },
      },
    },
    async (request) => {
      const { accountId } = request.principal;
      await deps.agent(accountId, request.params.agent_id);
      return { delivery: await handoff.replay(accountId, request.params.agent_id, request.params.rule_id, request.params.delivery_id) };
    },
  );
}
