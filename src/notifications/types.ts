/** The notifications room's shapes and limits, shared by its parts and the routes. */
import type { Kysely, Selectable } from 'kysely';
import type { Database, NotificationRulesTable } from '../core/db/schema.js';
import type { EndedConversation } from '../conversation/types.js';
import type { AlertConditions, DetailFinder, Evaluation } from './conditions.js';
import type { QuietHours } from './quiet-hours.js';
import type { BuilderLlm } from './builder.js';

/** The queue Telegram sends (and held webhook sends) used before they moved to the delivery engine; drained into it. */
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
 * Notifications' side of the shared delivery engine (src/delivery), the one retry engine: signed
 * webhooks and Telegram messages, durable on the interface's schedule, logged per destination
 * (see deliveries.ts).
 */
export interface NotificationDeliveries {
  /** Refuses a URL the engine would refuse (throws the 422 `private_address`). */
  checkUrl(url: string): Promise<void>;
  /** Queues a webhook delivery inside `trx` (once per `dedupeKey`). */
  enqueueWebhook(delivery: WebhookDelivery, trx: Kysely<Database>): Promise<void>;
  /** Queues a Telegram message inside `trx` (once per `id`). */
  enqueueTelegram(send: TelegramSend, trx: Kysely<Database>): Promise<void>;
  /** One webhook attempt now (test sends), logged. */
  sendNow(
    delivery: Omit<WebhookDelivery, 'dedupeKey' | 'conversationId' | 'notBefore'>,
  ): Promise<{ delivered: boolean; status_code: number | null; error: string | null }>;
  /** A send queued on the old `notifications.send` queue, before sends moved to the engine, is due. */
  wake(deliveryId: string): Promise<void>;
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
  url: string;
  secret: string;
  headers: Record<string, string>;
  body: string;
  /** Held for quiet hours until then. */
  notBefore?: Date;
}

export interface TelegramSend {
  /** The delivery id: a UUID made from the send's key, so a re-run of the same send finds its row. */
  id: string;
  accountId: number;
  destinationId: number;
  conversationId: string | null;
  notificationId: string | null;
  text: string;
  /** Held for quiet hours until then. */
  notBefore?: Date;
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
