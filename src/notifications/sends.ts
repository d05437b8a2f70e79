/**
 * Sending notifications to destinations, all through the shared delivery engine (src/delivery),
 * the service's one retry engine: webhooks signed, Telegram messages as its `telegram` channel
 * (deliveries.ts), one schedule (WEBHOOK_RETRY_DELAYS), one attempt log, outcome hooks and replay.
 * A send held for quiet hours is a delivery whose first attempt waits for the window's end. A
 * send's key makes its delivery id (a re-run of the same send finds the same row).
 */
import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Db } from '../core/db/database.js';
import type { Database } from '../core/db/schema.js';
import type { Jobs } from '../core/jobs.js';
import type { Destinations, DestinationRow } from './destinations.js';
import type { AlertRules } from './rules.js';
import type { TelegramBot } from './telegram.js';
import { telegramText } from './texts.js';
import { SEND_QUEUE, type DeliveryLogEntry, type NotificationDeliveries, type NotificationHooks, type TelegramPost, type WebhookDelivery } from './types.js';
import { notificationsErrors } from './errors.js';

/** A UUID from a key, so a re-run of the same send finds the same row. */
function keyedUuid(key: string): string {
  const hex = crypto.createHash('sha256').update(key).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16)}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export class Sends {
  constructor(
    private readonly db: Db,
    private readonly jobs: Jobs,
    private readonly destinations: Destinations,
    private readonly rules: AlertRules,
    private readonly hooks: NotificationHooks,
    private readonly bot: TelegramBot | undefined,
    private readonly deliveries: NotificationDeliveries,
  ) {}

  /** Sends queued on this room's own queue before they moved to the engine are handed to it when due. */
  async start(): Promise<void> {
    await this.jobs.work<{ sendId: string }>(SEND_QUEUE, { retryLimit: 5, retryDelay: 10, retryBackoff: true, expireInSeconds: 120, concurrency: 2 }, (data) =>
      this.deliveries.wake(data.sendId),
    );
  }

  /** One of the account's Telegram chats, or undefined. */
  telegramDestination(accountId: number, destinationId: number) {
    return this.db
      .selectFrom('notification_destinations')
      .selectAll()
      .where('id', '=', destinationId)
      .where('account_id', '=', accountId)
      .where('type', '=', 'telegram')
      .executeTakeFirst();
  }

  async sendTelegram(post: TelegramPost): Promise<boolean> {
    const destination = await this.telegramDestination(post.accountId, post.destinationId);
    if (!destination) return false;
    const id = keyedUuid(`telegram:${post.accountId}:${post.key}`);
    await this.db
      .transaction()
      .execute((trx) =>
        this.deliveries.enqueueTelegram(
          { id, accountId: post.accountId, destinationId: destination.id, conversationId: null, notificationId: null, text: post.text },
          trx,
        ),
      );
    return true;
  }

  /** One send of a notification to a destination, written with the notification (held until `hold`, if given). */
  async queue(
    trx: Kysely<Database>,
    destination: DestinationRow,
    notificationId: string,
    item: Record<string, unknown> & { title: string; body: string; conversation_id: string | null },
    hold: Date | undefined,
  ): Promise<void> {
    if (destination.type === 'webhook') {
      const body = JSON.stringify({ type: 'notification', notification: item });
      await this.deliveries.enqueueWebhook({ ...this.webhookDelivery(destination, notificationId, item.conversation_id, body), notBefore: hold }, trx);
      return;
    }
    await this.deliveries.enqueueTelegram(
      {
        id: keyedUuid(`notification:${notificationId}:${destination.id}`),
        accountId: destination.account_id,
        destinationId: destination.id,
        conversationId: item.conversation_id,
        notificationId,
        text: telegramText(item.title, item.body),
        notBefore: hold,
      },
      trx,
    );
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

  /** The sends of a destination, newest first (its delivery log, from the engine). */
  async log(accountId: number, destinationId: number, limit = 50): Promise<DeliveryLogEntry[]> {
    await this.destinations.get(accountId, destinationId);
    return this.deliveries.list(destinationId, limit);
  }

  /** Deletes a destination (rules stop naming it) and its delivery log. */
  async removeDestination(accountId: number, destinationId: number): Promise<void> {
    await this.destinations.get(accountId, destinationId);
    await this.destinations.remove(accountId, destinationId);
    await this.deliveries.forget(destinationId);
  }

  /** A failed send made again from the start of the schedule, with the same delivery id. */
  async replay(accountId: number, destinationId: number, deliveryId: string): Promise<DeliveryLogEntry> {
    await this.destinations.get(accountId, destinationId);
    const replayed = await this.deliveries.replay(destinationId, deliveryId);
    if (!replayed) throw notificationsErrors.delivery_not_found(`No delivery ${deliveryId} of this destination`);
    return replayed;
  }

  /**
   * Sends a sample notification now to one destination (or each of a rule's) and says what

   */
  async testDelivery(
    accountId: number,
    agentId: number,
    request: { destination_id?: number; rule_id?: number },
  ): Promise<{ results: Array<{ destination_id: number; type: string; delivered: boolean; status_code: number | null; error: string | null }> }> {
    const agent = await this.hooks.agent(accountId, agentId);
    let ids: number[];
    let ruleName = 'Test notification';
    let category = 'alert';
    if (request.rule_id !== undefined) {
      const rule = await this.rules.get(accountId, agentId, request.rule_id);
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
      const item = {
        id: 0,
        agent_id: agent.id,
        agent_name: agent.name,
        conversation_id: null,
        rule_id: request.rule_id ?? null,
        rule_name: ruleName,
        category,
        title,
        body,
        created_at: new Date().toISOString(),
        test: true,
      };
      let result: { delivered: boolean; status_code: number | null; error: string | null };
      if (destination.type === 'webhook') {
        result = await this.deliveries.sendNow({
          accountId,
          destinationId: destination.id,
          url: destination.url!,
          secret: destination.secret!,
          headers: destination.headers ?? {},
          body: JSON.stringify({ type: 'notification', notification: item }),
        });
      } else {
        if (!this.bot) throw notificationsErrors.telegram_not_configured('Telegram is not set up on this server (TELEGRAM_BOT_TOKEN)');
        const outcome = await this.bot.send(destination.chat_id!, telegramText(title, body));
        result = { delivered: outcome.delivered, status_code: outcome.statusCode, error: outcome.delivered ? null : outcome.error };
      }
      if (result.delivered) await this.destinations.resume(destination.id);
      results.push({ destination_id: destination.id, type: destination.type, ...result });
    }
    return { results };
  }
}
