/**
 * Notifications: alert rules per agent, the inbox, prefs, and sending to destinations.
 *
 * Entry: `conversationEnded` (a ConversationEndedHook app.ts wires to the conversation records'
 * durable ended job). It evaluates the agent's enabled rules; each rule that fires makes one inbox
 * notification (keyed by rule and conversation, so a re-run hook adds nothing) and, in the same
 * transaction, one durable send job per destination of the rule, unless the agent's prefs turn the
 * category off; during quiet hours the sends wait for the window's end. Webhook destinations go
 * through the shared delivery engine (signing, schedule, outcomes); Telegram sends are jobs here on
 * the same schedule (WEBHOOK_RETRY_DELAYS).
 *
 * For handoff's destinations it offers two small channels (`channels`): a post to the console
 * inbox, and a Telegram message to one of the account's connected chats.
 */
import crypto from 'node:crypto';
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Db } from '../core/db/database.js';
import type { Database, NotificationRulesTable, NotificationsTable, SendAttempt } from '../core/db/schema.js';
import { ApiError, ValidationFailed, validationItem } from '../core/errors.js';
import type { Jobs } from '../core/jobs.js';
import type { EndedConversation } from '../conversation/types.js';
import { evaluate, excerpt, formatDuration, type AlertConditions, type ConversationFacts, type DetailFinder, type Evaluation } from './conditions.js';
import { quietUntil, type QuietHours } from './quiet-hours.js';
import { Destinations, destinationView, type DestinationRow, type Logger } from './destinations.js';
import { buildWithModel, parseRequest, SUGGESTED_CATEGORIES, type BuilderAnswer, type BuilderLlm, type ProposedRule } from './builder.js';
import type { TelegramBot } from './telegram.js';

export const SEND_QUEUE = 'notifications.send';

export const RULE_LIMITS = { rulesPerAgent: 50, keywords: 20, destinationIds: 10, inboxPerAccount: 10_000, categoriesInPrefs: 50 } as const;

export interface AlertRuleInput {
  name: string;
  category: string;
  when: AlertConditions;
  destination_ids: number[];
  enabled: boolean;
}

export type RuleRow = Selectable<NotificationRulesTable>;
type NotificationRow = Selectable<NotificationsTable>;

export interface RuleView extends AlertRuleInput {
  id: number;
  agent_id: number;
  created_at: string;
  updated_at: string;
}

export interface NotificationItem {
  id: number;
  agent_id: number;
  agent_name: string;
  conversation_id: string | null;
  rule_id: number | null;
  source: string;
  category: string;
  title: string;
  body: string;
  created_at: string;
  read: boolean;
}

export interface Prefs {
  agent_id: number;
  /** Category → whether it goes out to destinations; categories not listed do. */
  categories: Record<string, boolean>;
  quiet_hours: QuietHours | null;
}

/** A post to the console inbox (handoff's "inbox" destination). */
export interface InboxPost {
  accountId: number;
  agentId: number;
  agentName: string;
  conversationId?: string | null;
  /** Defaults to `handoff`. */
  category?: string;
  title: string;
  body: string;
  /** Makes the post idempotent: the same key posts once (e.g. `<rule id>:<conversation id>`). */
  key: string;
}

/** A Telegram message to a connected chat (handoff's chat-messenger destination). */
export interface TelegramPost {
  accountId: number;
  /** A Telegram destination of the account (GET /v1/notifications/destinations). */
  destinationId: number;
  text: string;
  /** Makes the send idempotent: the same key is sent once (and is its delivery id's seed). */
  key: string;
}

/** What handoff (or any capability) may post through notifications. */
export interface NotificationChannels {
  postToInbox(post: InboxPost): Promise<{ id: number; created: boolean }>;
  /** Queues a durable send; false when the destination is not one of the account's Telegram chats. */
  sendTelegram(post: TelegramPost): Promise<boolean>;
  /** Whether the id is one of the account's connected Telegram chats (rules check it when saved). */
  isTelegramDestination(accountId: number, destinationId: number): Promise<boolean>;
}

/**
 * The webhook side of the shared delivery engine (src/delivery), as notifications use it: signed,
 * durable deliveries on the interface's schedule, logged per destination (see webhooks.ts).
 */
export interface WebhookSender {
  /** Refuses a URL the engine would refuse (throws the 422 `private_address`). */
  checkUrl(url: string): Promise<void>;
  /** Queues a delivery inside `trx` (once per `dedupeKey`). */
  enqueue(delivery: WebhookDelivery, trx: Kysely<Database>): Promise<void>;
  /** One attempt now (test sends), logged. */
  sendNow(delivery: Omit<WebhookDelivery, 'dedupeKey' | 'conversationId'>): Promise<{ delivered: boolean; status_code: number | null; error: string | null }>;
  /** A destination's deliveries, newest first. */
  list(destinationId: number, limit: number): Promise<DeliveryLogEntry[]>;
  /** A failed delivery again from the start of the schedule, same delivery id; undefined if unknown. */
  replay(destinationId: number, deliveryId: string): Promise<DeliveryLogEntry | undefined>;
  /** The destination is deleted: its log goes. */
  forget(destinationId: number): Promise<void>;
}

export interface WebhookDelivery {
  accountId: number;
  destinationId: number;
  conversationId: string | null;
  dedupeKey: string;
  /** The delivery id to use: a send held for quiet hours keeps the id its log entry showed. */
  id?: string;
  url: string;
  secret: string;
  headers: Record<string, string>;
  body: string;
}

export interface DeliveryLogEntry {
  delivery_id: string;
  conversation_id?: string | null;
  notification_id?: number | null;
  status: string;
  attempts: Array<{ at: string; status_code: number | null; error: string | null; duration_ms: number }>;
  next_attempt_at: string | null;
  created_at: string;
}

export interface NotificationHooks {
  /** The agent if it belongs to the account (404 agent_not_found otherwise). */
  agent(accountId: number, agentId: number): Promise<{ id: number; name: string }>;
  /** An ended conversation of the account, for `test`. */
  conversation(accountId: number, conversationId: string): Promise<EndedConversation | undefined>;
  /** Adds the category to the conversation (reports filter on it). */
  tagConversation(conversationId: string, category: string): Promise<void>;
  /** Finds a detail in a conversation (app.ts: a value the website passed, else handoff's extractors). */
  findDetail: DetailFinder;
}

export interface NotificationSettings {
  retryDelays: number[];
  llm?: BuilderLlm;
}

const iso = (d: Date | string) => new Date(d).toISOString();

export function ruleView(row: RuleRow): RuleView {
  return {
    id: row.id,
    agent_id: row.agent_id,
    name: row.name,
    category: row.category,
    when: row.conditions as AlertConditions,
    destination_ids: row.destination_ids,
    enabled: row.enabled,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

function itemView(row: NotificationRow): NotificationItem {
  return {
    id: Number(row.id),
    agent_id: row.agent_id,
    agent_name: row.agent_name,
    conversation_id: row.conversation_id,
    rule_id: row.rule_id,
    source: row.source,
    category: row.category,
    title: row.title,
    body: row.body,
    created_at: iso(row.created_at),
    read: row.read_at !== null,
  };
}

/** A UUID from a key, so a re-run of the same send finds the same row. */
function keyedUuid(key: string): string {
  const hex = crypto.createHash('sha256').update(key).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16)}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export class NotificationService {
  readonly destinations: Destinations;
  readonly channels: NotificationChannels;
  private readonly findDetail: DetailFinder;

  constructor(
    private readonly db: Db,
    private readonly jobs: Jobs,
    private readonly hooks: NotificationHooks,
    private readonly settings: NotificationSettings,
    private readonly logger: Logger,
    private readonly bot: TelegramBot | undefined,
    private webhooks: WebhookSender | undefined,
  ) {
    this.findDetail = hooks.findDetail;
    this.destinations = new Destinations(db, bot, logger, (url) => this.checkWebhookUrl(url));
    this.channels = {
      postToInbox: (post) => this.postToInbox(post),
      sendTelegram: (post) => this.sendTelegram(post),
      isTelegramDestination: async (accountId, destinationId) => !!(await this.telegramDestination(accountId, destinationId)),
    };
  }

  private async checkWebhookUrl(url: string): Promise<void> {
    if (this.webhooks) await this.webhooks.checkUrl(url);
  }

  async start(): Promise<void> {
    await this.jobs.work<{ sendId: string; attempt: number; round?: number }>(SEND_QUEUE, { retryLimit: 5, retryDelay: 10, retryBackoff: true, expireInSeconds: 120, concurrency: 2 }, (data) => this.runSend(data.sendId, data.attempt, data.round ?? 0));
  }

  stop(): void {
    this.destinations.stop();
  }

  // ---------- rules ----------

  async listRules(accountId: number, agentId: number): Promise<RuleRow[]> {
    await this.hooks.agent(accountId, agentId);
    return this.db.selectFrom('notification_rules').selectAll().where('account_id', '=', accountId).where('agent_id', '=', agentId).orderBy('id').execute();
  }

  private async rule(accountId: number, agentId: number, ruleId: number): Promise<RuleRow> {
    await this.hooks.agent(accountId, agentId);
    const row = await this.db.selectFrom('notification_rules').selectAll().where('account_id', '=', accountId).where('agent_id', '=', agentId).where('id', '=', ruleId).executeTakeFirst();
    if (!row) throw new ApiError(404, 'rule_not_found', `No alert rule with id ${ruleId} for this agent`);
    return row;
  }

  /** Destination ids must be the account's own: 422 naming the first unknown one. */
  private async checkDestinations(accountId: number, ids: number[], loc: Array<string | number>): Promise<void> {
    if (!ids.length) return;
    const rows = await this.db.selectFrom('notification_destinations').select('id').where('account_id', '=', accountId).where('id', 'in', ids).execute();
    const known = new Set(rows.map((r) => r.id));
    const index = ids.findIndex((id) => !known.has(id));
    if (index >= 0) throw new ValidationFailed([validationItem([...loc, index], `No notification destination with id ${ids[index]} in this account`, ids[index], 'unknown_destination')]);
  }

  async createRule(accountId: number, agentId: number, input: AlertRuleInput): Promise<RuleRow> {
    await this.hooks.agent(accountId, agentId);
    await this.checkDestinations(accountId, input.destination_ids, ['body', 'destination_ids']);
    const { count } = await this.db.selectFrom('notification_rules').select((eb) => eb.fn.countAll<string>().as('count')).where('agent_id', '=', agentId).executeTakeFirstOrThrow();
    if (Number(count) >= RULE_LIMITS.rulesPerAgent) throw new ApiError(409, 'rule_limit', `An agent has at most ${RULE_LIMITS.rulesPerAgent} alert rules; delete one first`);
    return this.db
      .insertInto('notification_rules')
      .values({ account_id: accountId, agent_id: agentId, name: input.name, category: input.category, conditions: JSON.stringify(input.when), destination_ids: input.destination_ids, enabled: input.enabled })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  async updateRule(accountId: number, agentId: number, ruleId: number, input: AlertRuleInput): Promise<RuleRow> {
    await this.rule(accountId, agentId, ruleId);
    await this.checkDestinations(accountId, input.destination_ids, ['body', 'destination_ids']);
    return this.db
      .updateTable('notification_rules')
      .set({ name: input.name, category: input.category, conditions: JSON.stringify(input.when), destination_ids: input.destination_ids, enabled: input.enabled, updated_at: new Date() })
      .where('id', '=', ruleId)
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  async deleteRule(accountId: number, agentId: number, ruleId: number): Promise<RuleRow[]> {
    await this.rule(accountId, agentId, ruleId);
    await this.db.deleteFrom('notification_rules').where('id', '=', ruleId).execute();
    return this.listRules(accountId, agentId);
  }

  // ---------- test and builder ----------

  /** Whether a rule (saved, or as given) would fire for a sample or a past conversation. */
  async testRule(accountId: number, agentId: number, request: { rule_id?: number; rule?: AlertRuleInput; conversation_id?: string; sample?: SampleConversation }): Promise<TestAnswer> {
    const agent = await this.hooks.agent(accountId, agentId);
    const rule = request.rule_id !== undefined ? ruleView(await this.rule(accountId, agentId, request.rule_id)) : request.rule!;
    let facts: ConversationFacts & { conversationId: string | null; agentName: string };
    if (request.conversation_id) {
      const conversation = await this.hooks.conversation(accountId, request.conversation_id);
      if (!conversation) throw new ApiError(404, 'conversation_not_found', `No ended conversation with id ${request.conversation_id} in this account`);
      facts = { ...conversation, agentName: conversation.agentName };
    } else {
      const sample = request.sample!;
      const start = Date.now() - sample.duration_seconds * 1000;
      const transcript = sample.transcript.map((turn, i) => ({ role: turn.role, text: turn.text, at: new Date(start + i * 1000).toISOString() }));
      facts = {
        conversationId: null,
        agentName: agent.name,
        transcript,
        durationSeconds: sample.duration_seconds,
        visitorTurns: sample.visitor_turns ?? transcript.filter((t) => t.role === 'visitor').length,
        visitor: sample.visitor ?? {},
      };
    }
    const evaluation = await evaluate(rule.when, facts, this.findDetail);
    return {
      would_fire: evaluation.fires,
      conditions: evaluation.checks,
      notification: evaluation.fires ? { category: rule.category, ...notificationText(rule.name, facts.agentName, facts, evaluation) } : null,
    };
  }

  async build(accountId: number, agentId: number, message: string, draft?: Partial<ProposedRule>): Promise<BuilderAnswer> {
    await this.hooks.agent(accountId, agentId);
    if (draft?.destination_ids?.length) await this.checkDestinations(accountId, draft.destination_ids, ['body', 'draft', 'destination_ids']);
    return this.settings.llm ? buildWithModel(this.settings.llm, message, draft) : parseRequest(message, draft);
  }

  // ---------- prefs ----------

  async prefs(accountId: number, agentId: number): Promise<Prefs> {
    await this.hooks.agent(accountId, agentId);
    return this.loadPrefs(agentId);
  }

  private async loadPrefs(agentId: number): Promise<Prefs> {
    const [row, rules] = await Promise.all([
      this.db.selectFrom('notification_prefs').selectAll().where('agent_id', '=', agentId).executeTakeFirst(),
      this.db.selectFrom('notification_rules').select('category').distinct().where('agent_id', '=', agentId).execute(),
    ]);
    // Every category the agent's rules use is listed (on unless turned off), with the suggested ones.
    const categories: Record<string, boolean> = {};
    for (const name of [...SUGGESTED_CATEGORIES, ...rules.map((r) => r.category)]) categories[name] = true;
    Object.assign(categories, row?.categories ?? {});
    return { agent_id: agentId, categories, quiet_hours: row?.quiet_hours ?? null };
  }

  async putPrefs(accountId: number, agentId: number, update: { categories?: Record<string, boolean>; quiet_hours?: QuietHours | null }): Promise<Prefs> {
    await this.hooks.agent(accountId, agentId);
    const current = await this.db.selectFrom('notification_prefs').selectAll().where('agent_id', '=', agentId).executeTakeFirst();
    const categories = update.categories ?? current?.categories ?? {};
    const quiet = update.quiet_hours !== undefined ? update.quiet_hours : (current?.quiet_hours ?? null);
    await this.db
      .insertInto('notification_prefs')
      .values({ agent_id: agentId, account_id: accountId, categories: JSON.stringify(categories), quiet_hours: quiet ? JSON.stringify(quiet) : null })
      .onConflict((oc) => oc.column('agent_id').doUpdateSet({ categories: JSON.stringify(categories), quiet_hours: quiet ? JSON.stringify(quiet) : null, updated_at: new Date() }))
      .execute();
    return this.loadPrefs(agentId);
  }

  // ---------- inbox ----------

  async inbox(accountId: number, filters: { status: 'all' | 'unread'; agent_id?: number; category?: string; limit: number; offset: number }): Promise<{ items: NotificationItem[]; total: number; unread: number; limit: number; offset: number }> {
    let query = this.db.selectFrom('notifications').where('account_id', '=', accountId);
    if (filters.agent_id !== undefined) query = query.where('agent_id', '=', filters.agent_id);
    if (filters.category) query = query.where('category', '=', filters.category);
    const unreadQuery = query.where('read_at', 'is', null);
    if (filters.status === 'unread') query = query.where('read_at', 'is', null);
    const [rows, total, unread] = await Promise.all([
      query.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(filters.limit).offset(filters.offset).execute(),
      query.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
      unreadQuery.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { items: rows.map(itemView), total: Number(total.n), unread: Number(unread.n), limit: filters.limit, offset: filters.offset };
  }

  async unreadCount(accountId: number, agentId?: number): Promise<{ unread: number }> {
    let query = this.db.selectFrom('notifications').where('account_id', '=', accountId).where('read_at', 'is', null);
    if (agentId !== undefined) query = query.where('agent_id', '=', agentId);
    const { n } = await query.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
    return { unread: Number(n) };
  }

  async markRead(accountId: number, request: { ids?: number[]; all?: boolean; agent_id?: number }): Promise<{ marked: number; unread: number }> {
    let update = this.db.updateTable('notifications').set({ read_at: new Date() }).where('account_id', '=', accountId).where('read_at', 'is', null);
    if (request.ids) update = update.where('id', 'in', request.ids.map(String));
    if (request.agent_id !== undefined) update = update.where('agent_id', '=', request.agent_id);
    const result = await update.executeTakeFirst();
    return { marked: Number(result.numUpdatedRows ?? 0), ...(await this.unreadCount(accountId)) };
  }

  /** Inserts a notification once per key; keeps the newest RULE_LIMITS.inboxPerAccount. */
  private async insertNotification(trx: Kysely<Database>, values: { account_id: number; agent_id: number; agent_name: string; conversation_id: string | null; rule_id: number | null; source: string; dedupe_key: string; category: string; title: string; body: string }): Promise<string | undefined> {
    const row = await trx.insertInto('notifications').values(values).onConflict((oc) => oc.columns(['account_id', 'dedupe_key']).doNothing()).returning('id').executeTakeFirst();
    if (!row) return undefined;
    // Ordered as the inbox index is (account, created_at, id), so the bound costs one index walk.
    await sql`DELETE FROM notifications WHERE account_id = ${values.account_id} AND (created_at, id) <= (
      SELECT created_at, id FROM notifications WHERE account_id = ${values.account_id} ORDER BY created_at DESC, id DESC OFFSET ${RULE_LIMITS.inboxPerAccount} LIMIT 1)`.execute(trx);
    return row.id;
  }

  async postToInbox(post: InboxPost): Promise<{ id: number; created: boolean }> {
    const values = {
      account_id: post.accountId,
      agent_id: post.agentId,
      agent_name: post.agentName,
      conversation_id: post.conversationId ?? null,
      rule_id: null,
      source: 'handoff',
      dedupe_key: `post:${post.key}`,
      category: post.category ?? 'handoff',
      title: post.title.slice(0, 200),
      body: post.body.slice(0, 10_000),
    };
    const id = await this.db.transaction().execute((trx) => this.insertNotification(trx, values));
    if (id) return { id: Number(id), created: true };
    const existing = await this.db.selectFrom('notifications').select('id').where('account_id', '=', post.accountId).where('dedupe_key', '=', values.dedupe_key).executeTakeFirstOrThrow();
    return { id: Number(existing.id), created: false };
  }

  /** One of the account's Telegram chats, or undefined. */
  private telegramDestination(accountId: number, destinationId: number) {
    return this.db.selectFrom('notification_destinations').selectAll().where('id', '=', destinationId).where('account_id', '=', accountId).where('type', '=', 'telegram').executeTakeFirst();
  }

  async sendTelegram(post: TelegramPost): Promise<boolean> {
    const destination = await this.telegramDestination(post.accountId, post.destinationId);
    if (!destination) return false;
    const sendId = keyedUuid(`telegram:${post.accountId}:${post.key}`);
    await this.db.transaction().execute(async (trx) => {
      const inserted = await trx
        .insertInto('notification_sends')
        .values({ id: sendId, account_id: post.accountId, notification_id: null, destination_id: destination.id, text: post.text.slice(0, 4096) })
        .onConflict((oc) => oc.column('id').doNothing())
        .returning('id')
        .executeTakeFirst();
      if (inserted) await this.jobs.send(SEND_QUEUE, { sendId, attempt: 1 }, {}, trx);
    });
    return true;
  }

  // ---------- the ended hook ----------

  /** The ConversationEndedHook: idempotent (one notification per rule and conversation). */
  async conversationEnded(conversation: EndedConversation): Promise<void> {
    const rules = await this.db.selectFrom('notification_rules').selectAll().where('account_id', '=', conversation.accountId).where('agent_id', '=', conversation.agentId).where('enabled', '=', true).orderBy('id').execute();
    if (!rules.length) return;
    const prefs = await this.loadPrefs(conversation.agentId);
    for (const rule of rules) {
      const evaluation = await evaluate(rule.conditions as AlertConditions, conversation, this.findDetail);
      if (!evaluation.fires) continue;
      const text = notificationText(rule.name, conversation.agentName, conversation, evaluation);
      // Tagged first (idempotent), so a conversation in the inbox already carries its category.
      await this.hooks.tagConversation(conversation.conversationId, rule.category);
      await this.db.transaction().execute(async (trx) => {
        const id = await this.insertNotification(trx, {
          account_id: conversation.accountId,
          agent_id: conversation.agentId,
          agent_name: conversation.agentName,
          conversation_id: conversation.conversationId,
          rule_id: rule.id,
          source: 'alert_rule',
          dedupe_key: `rule:${rule.id}:${conversation.conversationId}`,
          category: rule.category,
          title: text.title,
          body: text.body,
        });
        if (!id || prefs.categories[rule.category] === false || !rule.destination_ids.length) return;
        const hold = quietUntil(prefs.quiet_hours, new Date());
        const destinations = await trx.selectFrom('notification_destinations').selectAll().where('account_id', '=', conversation.accountId).where('id', 'in', rule.destination_ids).where('enabled', '=', true).execute();
        const item = { id: Number(id), agent_id: conversation.agentId, agent_name: conversation.agentName, conversation_id: conversation.conversationId, rule_id: rule.id, rule_name: rule.name, category: rule.category, ...text, created_at: new Date().toISOString() };
        for (const destination of destinations) await this.queueSend(trx, destination, id, item, hold);
      });
    }
  }

  /** One send of a notification to a destination, written with the notification. */
  private async queueSend(trx: Kysely<Database>, destination: DestinationRow, notificationId: string, item: Record<string, unknown> & { title: string; body: string; conversation_id: string | null }, hold: Date | undefined): Promise<void> {
    const payload = { type: 'notification', notification: item };
    if (destination.type === 'webhook' && !this.webhooks) {
      // Never a reason to lose the inbox entry (or to fail the ended job for every hook).
      this.logger.warn({ destination_id: destination.id }, 'webhook deliveries are not available; the notification stays in the inbox only');
      return;
    }
    if (destination.type === 'webhook' && this.webhooks && !hold) {
      await this.webhooks.enqueue(this.webhookDelivery(destination, notificationId, item.conversation_id, JSON.stringify(payload)), trx);
      return;
    }
    // Telegram sends, and webhook sends held for quiet hours, are jobs here.
    const sendId = keyedUuid(`notification:${notificationId}:${destination.id}`);
    const inserted = await trx
      .insertInto('notification_sends')
      .values({ id: sendId, account_id: destination.account_id, notification_id: notificationId, destination_id: destination.id, text: telegramText(item.title, item.body), payload: JSON.stringify(payload), next_attempt_at: hold ?? null })
      .onConflict((oc) => oc.column('id').doNothing())
      .returning('id')
      .executeTakeFirst();
    if (inserted) await this.jobs.send(SEND_QUEUE, { sendId, attempt: 1 }, hold ? { startAfter: hold } : {}, trx);
  }

  private webhookDelivery(destination: DestinationRow, notificationId: string, conversationId: string | null, body: string): WebhookDelivery {
    return {
      accountId: destination.account_id,
      destinationId: destination.id,
      conversationId,
      dedupeKey: `notification:${notificationId}:${destination.id}`,
      url: destination.url!,
      secret: destination.secret!,
      headers: destination.headers ?? {},
      body,
    };
  }

  // ---------- sending ----------

  /** Attempt `attempt` of a send (counted over its life); `round` attempts came before a replay. */
  private async runSend(sendId: string, attempt: number, round: number): Promise<void> {
    const send = await this.db.selectFrom('notification_sends').selectAll().where('id', '=', sendId).executeTakeFirst();
    if (!send || send.status === 'delivered' || send.status === 'failed' || send.status === 'skipped') return;
    // A job re-run after a crash that had already recorded this attempt (its next one is queued).
    if (send.attempts.length >= attempt) return;
    const destination = await this.destinations.byId(send.destination_id);
    if (!destination || !destination.enabled || destination.state === 'paused') {
      await this.db.updateTable('notification_sends').set({ status: 'skipped', next_attempt_at: null }).where('id', '=', sendId).execute();
      return;
    }
    if (destination.type === 'webhook') {
      // Held for quiet hours: now handed to the delivery engine, whose log takes it over.
      if (!this.webhooks) throw new Error('webhook deliveries are not available');
      const payload = send.payload as { notification?: { conversation_id?: string | null } };
      await this.db.transaction().execute(async (trx) => {
        await this.webhooks!.enqueue({ ...this.webhookDelivery(destination, String(send.notification_id), payload.notification?.conversation_id ?? null, JSON.stringify(send.payload)), id: sendId }, trx);
        await trx.deleteFrom('notification_sends').where('id', '=', sendId).execute();
      });
      return;
    }
    if (!this.bot) throw new Error('TELEGRAM_BOT_TOKEN is not set');
    const outcome = await this.bot.send(destination.chat_id!, send.text);
    const record: SendAttempt = { at: new Date().toISOString(), status_code: outcome.statusCode, error: outcome.delivered ? null : outcome.error, duration_ms: outcome.durationMs };
    const attempts = [...send.attempts, record];
    const delays = this.settings.retryDelays;
    if (outcome.delivered) {
      await this.db.updateTable('notification_sends').set({ status: 'delivered', attempts: JSON.stringify(attempts), next_attempt_at: null }).where('id', '=', sendId).execute();
      await this.destinations.recordOutcome(destination.id, 'delivered', null);
      return;
    }
    const inRound = attempt - round;
    if (outcome.retry && inRound <= delays.length) {
      const wait = Math.max(delays[inRound - 1]!, outcome.retryAfterSeconds ?? 0);
      const next = new Date(Date.now() + wait * 1000);
      await this.db.transaction().execute(async (trx) => {
        await trx.updateTable('notification_sends').set({ status: 'retrying', attempts: JSON.stringify(attempts), next_attempt_at: next }).where('id', '=', sendId).execute();
        await this.jobs.send(SEND_QUEUE, { sendId, attempt: attempt + 1, round }, { startAfter: next }, trx);
      });
      return;
    }
    await this.db.updateTable('notification_sends').set({ status: 'failed', attempts: JSON.stringify(attempts), next_attempt_at: null }).where('id', '=', sendId).execute();
    await this.destinations.recordOutcome(destination.id, outcome.retry ? 'failed' : 'rejected', outcome.error);
    this.logger.warn({ send_id: sendId, destination_id: destination.id, error: outcome.error }, 'a Telegram notification could not be delivered');
  }

  /** The sends of a destination, newest first (its delivery log; a webhook's from the engine). */
  async sends(accountId: number, destinationId: number, limit = 50): Promise<DeliveryLogEntry[]> {
    const destination = await this.destinations.get(accountId, destinationId);
    const rows = await this.db.selectFrom('notification_sends').selectAll().where('destination_id', '=', destinationId).orderBy('created_at', 'desc').limit(limit).execute();
    const own: DeliveryLogEntry[] = rows.map((r) => ({ delivery_id: r.id, notification_id: r.notification_id === null ? null : Number(r.notification_id), status: r.status, attempts: r.attempts, next_attempt_at: r.next_attempt_at ? iso(r.next_attempt_at) : null, created_at: iso(r.created_at) }));
    if (destination.type !== 'webhook' || !this.webhooks) return own;
    return [...own, ...(await this.webhooks.list(destinationId, limit))].sort((a, b) => b.created_at.localeCompare(a.created_at)).slice(0, limit);
  }

  /** Deletes a destination (rules stop naming it) and, for a webhook, its delivery log. */
  async removeDestination(accountId: number, destinationId: number): Promise<void> {
    const destination = await this.destinations.get(accountId, destinationId);
    await this.destinations.remove(accountId, destinationId);
    if (destination.type === 'webhook') await this.webhooks?.forget(destinationId);
  }

  /** A failed send made again from the start of the schedule, with the same delivery id. */
  async replay(accountId: number, destinationId: number, deliveryId: string): Promise<DeliveryLogEntry> {
    const destination = await this.destinations.get(accountId, destinationId);
    const missing = () => new ApiError(404, 'delivery_not_found', `No delivery ${deliveryId} of this destination`);
    if (destination.type === 'webhook') {
      if (!this.webhooks) throw missing();
      const replayed = await this.webhooks.replay(destinationId, deliveryId);
      if (!replayed) throw missing();
      return replayed;
    }
    const send = await this.db.selectFrom('notification_sends').selectAll().where('id', '=', deliveryId).where('destination_id', '=', destinationId).executeTakeFirst();
    if (!send) throw missing();
    if (send.status !== 'failed') throw new ApiError(409, 'delivery_not_failed', 'Only a failed delivery can be replayed');
    await this.db.transaction().execute(async (trx) => {
      await trx.updateTable('notification_sends').set({ status: 'pending', next_attempt_at: new Date() }).where('id', '=', deliveryId).execute();
      await this.jobs.send(SEND_QUEUE, { sendId: deliveryId, attempt: send.attempts.length + 1, round: send.attempts.length }, {}, trx);
    });
    return (await this.sends(accountId, destinationId, 200)).find((d) => d.delivery_id === deliveryId)!;
  }

  /**
   * Sends a sample notification now to one destination (or each of a rule's) and says what
   * happened; a success resumes a paused destination.
   */
  async testDelivery(accountId: number, agentId: number, request: { destination_id?: number; rule_id?: number }): Promise<{ results: Array<{ destination_id: number; type: string; delivered: boolean; status_code: number | null; error: string | null }> }> {
    const agent = await this.hooks.agent(accountId, agentId);
    let ids: number[];
    let ruleName = 'Test notification';
    let category = 'alert';
    if (request.rule_id !== undefined) {
      const rule = await this.rule(accountId, agentId, request.rule_id);
      ids = rule.destination_ids;
      ruleName = rule.name;
      category = rule.category;
    } else {
      ids = [(await this.destinations.get(accountId, request.destination_id!)).id];
    }
    const results = [];
    for (const id of ids) {
      const destination = await this.destinations.byId(id);
      if (!destination) continue;
      const title = `${ruleName} (test)`;
      const body = `This is a test notification from ${agent.name}. Real ones tell what the visitor said.`;
      const item = { id: 0, agent_id: agent.id, agent_name: agent.name, conversation_id: null, rule_id: request.rule_id ?? null, rule_name: ruleName, category, title, body, created_at: new Date().toISOString(), test: true };
      let result: { delivered: boolean; status_code: number | null; error: string | null };
      if (destination.type === 'webhook') {
        if (!this.webhooks) throw new ApiError(503, 'webhooks_unavailable', 'Webhook deliveries are not available on this server');
        result = await this.webhooks.sendNow({ accountId, destinationId: destination.id, url: destination.url!, secret: destination.secret!, headers: destination.headers ?? {}, body: JSON.stringify({ type: 'notification', notification: item }) });
      } else {
        if (!this.bot) throw new ApiError(503, 'telegram_not_configured', 'Telegram is not set up on this server (TELEGRAM_BOT_TOKEN)');
        const outcome = await this.bot.send(destination.chat_id!, telegramText(title, body));
        result = { delivered: outcome.delivered, status_code: outcome.statusCode, error: outcome.delivered ? null : outcome.error };
      }
      if (result.delivered) await this.destinations.resume(destination.id);
      results.push({ destination_id: destination.id, type: destination.type, ...result });
    }
    return { results };
  }

  view(row: DestinationRow, showSecret: boolean) {
    return destinationView(row, showSecret);
  }
}

export interface SampleConversation {
  transcript: Array<{ role: 'visitor' | 'agent'; text: string }>;
  duration_seconds: number;
  visitor_turns?: number;
  visitor?: Record<string, string>;
}

export interface TestAnswer {
  would_fire: boolean;
  conditions: Evaluation['checks'];
  notification: { category: string; title: string; body: string } | null;
}

/** The inbox entry's words: the rule's name, then what happened and what the visitor said. */
export function notificationText(ruleName: string, agentName: string, conversation: ConversationFacts, evaluation: Evaluation): { title: string; body: string } {
  const lines: string[] = [];
  if (evaluation.matched) lines.push(`Visitor said: "${evaluation.matched.excerpt}"`);
  else {
    const first = conversation.transcript.find((t) => t.role === 'visitor');
    if (first) lines.push(`Visitor said: "${excerpt(first.text, 200)}"`);
  }
  if (evaluation.detail) lines.push(`${evaluation.detail.name}: ${evaluation.detail.value}`);
  lines.push(`${agentName} · ${formatDuration(conversation.durationSeconds)} · ${conversation.visitorTurns} visitor turn${conversation.visitorTurns === 1 ? '' : 's'}`);
  return { title: ruleName.slice(0, 200), body: lines.join('\n') };
}

export function telegramText(title: string, body: string): string {
  return `🔔 ${title}\n${body}`.slice(0, 4096);
}
