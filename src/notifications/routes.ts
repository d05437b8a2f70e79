/** The notification routes (`/v1/notifications…`): inbox, prefs, alert rules, destinations. */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AgentIdParams } from '../agents/schemas.js';
import { storableText, WebUrl } from '../knowledge/schemas.js';
import { pathInt } from '../core/validation.js';
import { RESERVED_HEADERS } from '../delivery/engine.js';
import { CATEGORY } from './builder.js';
import { CLOCK_TIME, isTimeZone } from './quiet-hours.js';
import { LIMITS } from './destinations.js';
import type { NotificationService } from './service.js';
import { ruleView } from './texts.js';
import { RULE_LIMITS } from './types.js';
import { routeErrors } from '../core/errors.js';
import { agentsErrors } from '../agents/errors.js';
import { deliveryErrors } from '../delivery/errors.js';
import { notificationsErrors } from './errors.js';

const tags = ['Notifications'];

const Category = z.string().regex(CATEGORY, 'category must be a lowercase word: letters, digits, - or _ (at most 40 characters), e.g. lead');
const NonBlank = (max: number) => storableText(max, 1).refine((s) => s.trim().length > 0, { message: 'must not be blank' });

const Conditions = z
  .object({
    keywords: z
      .array(NonBlank(100))
      .min(1)
      .max(RULE_LIMITS.keywords)
      .optional()
      .describe('Any of these words or phrases in what the visitor said (whole words, any case or accents)'),
    min_duration_seconds: z.number().int().min(0).max(86_400).optional().describe('The conversation lasted at least this long'),
    min_visitor_turns: z.number().int().min(0).max(10_000).optional().describe('The visitor spoke or typed at least this many times'),
    detail_collected: z
      .string()
      .regex(/^[A-Za-z][\w.-]{0,59}$/, 'a detail name: letters, digits, _, - or . (e.g. email)')
      .optional()
      .describe('This detail was found in the conversation (email, phone, name, or a visitor value)'),
  })
  .strict();

const AlertRuleIn = z
  .object({
    name: NonBlank(100),
    category: Category,
    when: Conditions.default({}),
    destination_ids: z
      .array(z.number().int().min(1))
      .max(RULE_LIMITS.destinationIds)
      .refine((ids) => new Set(ids).size === ids.length, { message: 'destination_ids must not repeat' })
      .default([]),
    enabled: z.boolean().default(true),
  })
  .strict()
  .meta({ id: 'AlertRuleIn' });

const RuleParams = AgentIdParams.extend({ rule_id: pathInt });
const DestinationParams = z.object({ destination_id: pathInt });

const QuietHoursIn = z
  .object({
    start: z.string().regex(CLOCK_TIME, 'a time of day as HH:MM (24-hour)'),
    end: z.string().regex(CLOCK_TIME, 'a time of day as HH:MM (24-hour)'),
    timezone: z.string().max(64).refine(isTimeZone, { message: 'an IANA time zone, e.g. Europe/Berlin' }).default('UTC'),
  })
  .strict();

const PrefsUpdate = z
  .object({
    categories: z
      .record(Category, z.boolean())
      .refine((c) => Object.keys(c).length <= RULE_LIMITS.categoriesInPrefs, { message: `at most ${RULE_LIMITS.categoriesInPrefs} categories` })
      .optional()
      .describe('Category → whether it is sent to destinations (the inbox always has it)'),
    quiet_hours: QuietHoursIn.nullable().optional().describe('Sends wait until the window ends; null: no quiet hours'),
  })
  .strict()
  .meta({ id: 'PrefsUpdate' });

const MarkReadRequest = z
  .object({
    ids: z.array(z.number().int().min(1)).min(1).max(1000).optional(),
    all: z.literal(true).optional(),
    agent_id: z.number().int().min(1).optional().describe('With all: only this agent’s notifications'),
  })
  .strict()
  .refine((r) => (r.ids !== undefined) !== (r.all !== undefined), { message: 'give either ids or all: true' })
  .meta({ id: 'MarkReadRequest' });

const SampleConversation = z
  .object({
    transcript: z.array(z.object({ role: z.enum(['visitor', 'agent']), text: storableText(5000) }).strict()).max(500),
    duration_seconds: z.number().min(0).max(86_400).default(0),
    visitor_turns: z.number().int().min(0).max(10_000).optional(),
    visitor: z.record(z.string().max(64), z.string().max(1000)).optional(),
  })
  .strict();

const RuleTest = z
  .object({
    rule_id: z.number().int().min(1).optional().describe('A saved rule of the agent'),
    rule: AlertRuleIn.optional().describe('Or a rule as it would be saved'),
    conversation_id: z.uuid().optional().describe('A past, ended conversation'),
    sample: SampleConversation.optional().describe('Or a made-up conversation'),
  })
  .strict()
  .refine((r) => (r.rule_id !== undefined) !== (r.rule !== undefined), { message: 'give either rule_id or rule', path: ['rule'] })
  .refine((r) => (r.conversation_id !== undefined) !== (r.sample !== undefined), { message: 'give either conversation_id or sample', path: ['sample'] })
  .meta({ id: 'RuleTest' });

const DeliveryTest = z
  .object({ destination_id: z.number().int().min(1).optional(), rule_id: z.number().int().min(1).optional() })
  .strict()
  .refine((r) => (r.destination_id !== undefined) !== (r.rule_id !== undefined), { message: 'give either destination_id or rule_id' })
  .meta({ id: 'DeliveryTest' });

const BuilderTurn = z
  .object({
    message: NonBlank(1000).describe('What to be told about, in plain words'),
    draft: AlertRuleIn.partial().optional().describe('The previous proposal, to refine'),
  })
  .strict()
  .meta({ id: 'BuilderTurn' });

const HeaderName = z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$/, 'a header name');
const Headers = z
  .record(
    HeaderName,
    z
      .string()
      .max(1000)
      .refine((v) => !/[\r\n\0]/.test(v), { message: 'header values must be one line' }),
  )
  .refine((h) => Object.keys(h).length <= LIMITS.headers, { message: `at most ${LIMITS.headers} headers` })
  .refine((h) => !Object.keys(h).some((k) => /^x-service-/i.test(k) || RESERVED_HEADERS.includes(k.toLowerCase())), {
    message:
      'headers cannot set X-Service-*, Content-Type, Content-Length, Host, User-Agent or hop-by-hop headers (Connection, Transfer-Encoding, Keep-Alive, TE, Trailer, Upgrade)',
  });

const WebhookDestinationIn = z
  .object({ url: WebUrl, name: NonBlank(100).optional(), headers: Headers.optional(), enabled: z.boolean().optional() })
  .strict()
  .meta({ id: 'WebhookDestinationIn' });

const DestinationPatch = z
  .object({
    name: NonBlank(100).optional(),
    enabled: z.boolean().optional(),
    url: WebUrl.optional(),
    headers: Headers.optional(),
    rotate_secret: z.literal(true).optional(),
  })
  .strict()
  .meta({ id: 'DestinationPatch' });

const InboxQuery = z
  .object({
    status: z
      .string()
      .regex(/^(all|unread)$/)
      .default('all'),
    agent_id: z.coerce.number().int().min(1).max(2_147_483_647).optional(),
    category: Category.optional(),
    limit: z.coerce.number().int().min(1).max(200).default(30),
    offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
  })
  .strict();

export function notificationRoutes(server: FastifyInstance, notifications: NotificationService): void {
  const app = server.withTypeProvider<ZodTypeProvider>();
  const destinations = notifications.destinations;

  // ---------- inbox ----------
  app.get('/v1/notifications', { schema: { tags, summary: 'The inbox, newest first', querystring: InboxQuery } }, async (request) => {
    const q = request.query;
    return notifications.inbox.list(request.principal.accountId, {
      status: q.status as 'all' | 'unread',
      agent_id: q.agent_id,
      category: q.category,
      limit: q.limit,
      offset: q.offset,
    });
  });
  app.get(
    '/v1/notifications/unread-count',
    {
      schema: {
        tags,
        summary: 'Unread notifications',
        querystring: z.object({ agent_id: z.coerce.number().int().min(1).max(2_147_483_647).optional() }).strict(),
      },
    },
    async (request) => notifications.inbox.unreadCount(request.principal.accountId, request.query.agent_id),
  );
  app.post(
    '/v1/notifications/read',
    { schema: { tags, summary: 'Mark notifications read: {"ids": [...]} or {"all": true}', body: MarkReadRequest } },
    async (request) => notifications.inbox.markRead(request.principal.accountId, request.body),
  );

  // ---------- prefs ----------
  app.get(
    '/v1/notifications/prefs/:agent_id',
    { config: routeErrors(agentsErrors.agent_not_found), schema: { tags, summary: "An agent's notification prefs", params: AgentIdParams } },
    async (request) => notifications.prefs.get(request.principal.accountId, request.params.agent_id),
  );
  app.put(
    '/v1/notifications/prefs/:agent_id',
    {
      config: routeErrors(agentsErrors.agent_not_found),
      schema: { tags, summary: 'Which categories are sent, and quiet hours', params: AgentIdParams, body: PrefsUpdate },
    },
    async (request) => notifications.prefs.put(request.principal.accountId, request.params.agent_id, request.body),
  );

  // ---------- rules ----------
  app.get(
    '/v1/notifications/rules/:agent_id',
    { config: routeErrors(agentsErrors.agent_not_found), schema: { tags, summary: "An agent's alert rules", params: AgentIdParams } },
    async (request) => ({
      rules: (await notifications.rules.list(request.principal.accountId, request.params.agent_id)).map(ruleView),
    }),
  );
  app.post(
    '/v1/notifications/rules/:agent_id',
    {
      config: routeErrors(agentsErrors.agent_not_found, notificationsErrors.rule_limit),
      schema: { tags, summary: 'Create an alert rule', params: AgentIdParams, body: AlertRuleIn },
    },
    async (request, reply) => {
      const row = await notifications.rules.create(request.principal.accountId, request.params.agent_id, request.body);
      return reply.code(201).send({ rule: ruleView(row) });
    },
  );
  app.put(
    '/v1/notifications/rules/:agent_id/:rule_id',
    {
      config: routeErrors(agentsErrors.agent_not_found, notificationsErrors.rule_not_found),
      schema: { tags, summary: 'Replace an alert rule', params: RuleParams, body: AlertRuleIn },
    },
    async (request) => ({
      rule: ruleView(await notifications.rules.update(request.principal.accountId, request.params.agent_id, request.params.rule_id, request.body)),
    }),
  );
  app.delete(
    '/v1/notifications/rules/:agent_id/:rule_id',
    {
      config: routeErrors(agentsErrors.agent_not_found, notificationsErrors.rule_not_found),
      schema: {
        tags,
        summary: 'Delete an alert rule (answers the remaining rules)',
        params: RuleParams,
        querystring: z.object({ confirm: z.literal('true') }),
      },
    },
    async (request) => ({
      rules: (await notifications.rules.delete(request.principal.accountId, request.params.agent_id, request.params.rule_id)).map(ruleView),
    }),
  );
  app.post(
    '/v1/notifications/rules/:agent_id/test-delivery',
    {
      config: routeErrors(
        agentsErrors.agent_not_found,
        notificationsErrors.rule_not_found,
        notificationsErrors.destination_not_found,
        notificationsErrors.telegram_not_configured,
      ),
      schema: { tags, summary: "Send a test notification to a destination or a rule's destinations now", params: AgentIdParams, body: DeliveryTest },
    },
    async (request) => notifications.sends.testDelivery(request.principal.accountId, request.params.agent_id, request.body),
  );
  app.post(
    '/v1/notifications/rules/:agent_id/builder',
    {
      config: routeErrors(agentsErrors.agent_not_found),
      schema: { tags, summary: 'Turn a plain-language request into a proposed rule (not saved)', params: AgentIdParams, body: BuilderTurn },
    },
    async (request) => notifications.rules.build(request.principal.accountId, request.params.agent_id, request.body.message.trim(), request.body.draft),
  );
  app.post(
    '/v1/notifications/rules/:agent_id/test',
    {
      config: routeErrors(agentsErrors.agent_not_found, notificationsErrors.conversation_not_found),
      schema: { tags, summary: 'Would a rule fire for a sample or past conversation?', params: AgentIdParams, body: RuleTest },
    },
    async (request) => notifications.rules.test(request.principal.accountId, request.params.agent_id, request.body),
  );

  // ---------- destinations ----------
  const show = (request: { principal: { permissions: ReadonlySet<string> } }) => request.principal.permissions.has('setup');
  const listAnswer = async (accountId: number, showSecret: boolean) => ({
    destinations: (await destinations.list(accountId)).map((row) => notifications.view(row, showSecret)),
  });

  app.get(
    '/v1/notifications/destinations',
    { schema: { tags, summary: 'Webhook and Telegram destinations (secrets masked without setup)' } },
    async (request) => listAnswer(request.principal.accountId, show(request)),
  );
  app.post(
    '/v1/notifications/destinations/telegram/connect',
    {
      config: routeErrors(
        notificationsErrors.telegram_not_configured,
        notificationsErrors.telegram_webhook_set,
        notificationsErrors.telegram_unavailable,
        notificationsErrors.destination_limit,
      ),
      schema: { tags, summary: 'A one-time Telegram deep link; opening it and pressing Start connects the chat' },
    },
    async (request) => destinations.connectTelegram(request.principal.accountId),
  );
  app.get(
    '/v1/notifications/destinations/telegram/connect/:token',
    {
      config: routeErrors(notificationsErrors.connect_token_not_found),
      schema: {
        tags,
        summary: 'Whether the chat of a connect link has connected',
        params: z.object({ token: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'a connect token (letters, digits, _ and -)') }),
      },
    },
    async (request) => {
      const link = await destinations.telegramLink(request.principal.accountId, request.params.token);
      return { status: link.status, expires_at: link.expires_at, destination: link.destination ? notifications.view(link.destination, show(request)) : null };
    },
  );
  app.post(
    '/v1/notifications/destinations/webhook',
    {
      config: routeErrors(notificationsErrors.destination_limit, deliveryErrors.invalid_url, deliveryErrors.private_address),
      schema: { tags, summary: 'Add a signed webhook destination (its whsec_ secret is in the answer)', body: WebhookDestinationIn },
    },
    async (request, reply) => {
      const row = await destinations.createWebhook(request.principal.accountId, request.body);
      return reply.code(201).send({ destination: notifications.view(row, true) });
    },
  );
  app.get(
    '/v1/notifications/destinations/:destination_id/deliveries',
    {
      config: routeErrors(notificationsErrors.destination_not_found),
      schema: { tags, summary: "A destination's sends, newest first", params: DestinationParams },
    },
    async (request) => ({
      deliveries: await notifications.sends.log(request.principal.accountId, request.params.destination_id),
    }),
  );
  app.post(
    '/v1/notifications/destinations/:destination_id/deliveries/:delivery_id/replay',
    {
      config: routeErrors(notificationsErrors.destination_not_found, notificationsErrors.delivery_not_found, notificationsErrors.delivery_not_failed),
      schema: {
        tags,
        summary: 'Make a failed delivery again, from the start of the schedule, with the same delivery id',
        params: DestinationParams.extend({ delivery_id: z.uuid() }),
      },
    },
    async (request) => ({
      delivery: await notifications.sends.replay(request.principal.accountId, request.params.destination_id, request.params.delivery_id),
    }),
  );
  app.patch(
    '/v1/notifications/destinations/:destination_id',
    {
      config: routeErrors(
        notificationsErrors.destination_not_found,
        notificationsErrors.not_a_webhook,
        deliveryErrors.invalid_url,
        deliveryErrors.private_address,
      ),
      schema: {
        tags,
        summary: 'Rename, enable or disable, change the URL or headers, or rotate the secret',
        params: DestinationParams,
        body: DestinationPatch,
      },
    },
    async (request) => ({
      destination: notifications.view(await destinations.patch(request.principal.accountId, request.params.destination_id, request.body), true),
    }),
  );
  app.delete(
    '/v1/notifications/destinations/:destination_id',
    {
      config: routeErrors(notificationsErrors.destination_not_found),
      schema: {
        tags,
        summary: 'Delete a destination (answers the remaining ones)',
        params: DestinationParams,
        querystring: z.object({ confirm: z.literal('true') }),
      },
    },
    async (request) => {
      await notifications.sends.removeDestination(request.principal.accountId, request.params.destination_id);
      return listAnswer(request.principal.accountId, show(request));
    },
  );
}
