/**
 * Sending notifications to destinations. Webhook sends go through the shared delivery engine
 * (signing, schedule, outcomes, log); Telegram sends, and webhook sends held for quiet hours, are
 * durable jobs here on the same schedule (WEBHOOK_RETRY_DELAYS), each attempt logged in
 * `notification_sends`.
 */
import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Db } from '../core/db/database.js';
import type { Database, SendAttempt } from '../core/db/schema.js';
import type { Jobs } from '../core/jobs.js';
import type { Destinations, DestinationRow, Logger } from './destinations.js';
import type { AlertRules } from './rules.js';
import type { TelegramBot } from './telegram.js';
import { telegramText } from './texts.js';
import {
  SEND_QUEUE,
  type DeliveryLogEntry,
  type NotificationHooks,
  type NotificationSettings,
  type TelegramPost,
  type WebhookDelivery,
  type WebhookSender,
} from './types.js';
import { notificationsErrors } from './errors.js';

const iso = (d: Date | string) => new Date(d).toISOString();

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
    private readonly settings: NotificationSettings,
    private readonly logger: Logger,
    private readonly bot: TelegramBot | undefined,
    private readonly webhooks: WebhookSender | undefined,
  ) {}

  async start(): Promise<void> {
    await this.jobs.work<{ sendId: string; attempt: number; round?: number }>(
      SEND_QUEUE,
      { retryLimit: 5, retryDelay: 10, retryBackoff: true, expireInSeconds: 120, concurrency: 2 },
      (data) => this.runSend(data.sendId, data.attempt, data.round ?? 0),
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

  /** One send of a notification to a destination, written with the notification. */
  async queue(
    trx: Kysely<Database>,
    destination: DestinationRow,
    notificationId: string,
    item: Record<string, unknown> & { title: string; body: string; conversation_id: string | null },
    hold: Date | undefined,
  ): Promise<void> {
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
      .values({
        id: sendId,
        account_id: destination.account_id,
        notification_id: notificationId,
        destination_id: destination.id,
        text: telegramText(item.title, item.body),
        payload: JSON.stringify(payload),
        next_attempt_at: hold ?? null,
      })
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
    if (!destination?.enabled || destination.state === 'paused') {
      await this.db.updateTable('notification_sends').set({ status: 'skipped', next_attempt_at: null }).where('id', '=', sendId).execute();
      return;
    }
    if (destination.type === 'webhook') {
      // Held for quiet hours: now handed to the delivery engine, whose log takes it over.
      if (!this.webhooks) throw new Error('webhook deliveries are not available');
      const payload = send.payload as { notification?: { conversation_id?: string | null } };
      await this.db.transaction().execute(async (trx) => {
        await this.webhooks!.enqueue(
          {
            ...this.webhookDelivery(destination, String(send.notification_id), payload.notification?.conversation_id ?? null, JSON.stringify(send.payload)),
            id: sendId,
          },
          trx,
        );
        await trx.deleteFrom('notification_sends').where('id', '=', sendId).execute();
      });
      return;
    }
    if (!this.bot) throw new Error('TELEGRAM_BOT_TOKEN is not set');
    const outcome = await this.bot.send(destination.chat_id!, send.text);
    const record: SendAttempt = {
      at: new Date().toISOString(),
      status_code: outcome.statusCode,
      error: outcome.delivered ? null : outcome.error,
      duration_ms: outcome.durationMs,
    };
    const attempts = [...send.attempts, record];
    const delays = this.settings.retryDelays;
    if (outcome.delivered) {
      await this.db
        .updateTable('notification_sends')
        .set({ status: 'delivered', attempts: JSON.stringify(attempts), next_attempt_at: null })
        .where('id', '=', sendId)
        .execute();
      await this.destinations.recordOutcome(destination.id, 'delivered', null);
      return;
    }
    const inRound = attempt - round;
    if (outcome.retry && inRound <= delays.length) {
      const wait = Math.max(delays[inRound - 1]!, outcome.retryAfterSeconds ?? 0);
      const next = new Date(Date.now() + wait * 1000);
      await this.db.transaction().execute(async (trx) => {
        await trx
          .updateTable('notification_sends')
          .set({ status: 'retrying', attempts: JSON.stringify(attempts), next_attempt_at: next })
          .where('id', '=', sendId)
          .execute();
        await this.jobs.send(SEND_QUEUE, { sendId, attempt: attempt + 1, round }, { startAfter: next }, trx);
      });
      return;
    }
    await this.db
      .updateTable('notification_sends')
      .set({ status: 'failed', attempts: JSON.stringify(attempts), next_attempt_at: null })
      .where('id', '=', sendId)
      .execute();
    await this.destinations.recordOutcome(destination.id, outcome.retry ? 'failed' : 'rejected', outcome.error);
    this.logger.warn({ send_id: sendId, destination_id: destination.id, error: outcome.error }, 'a Telegram notification could not be delivered');
  }

  /** The sends of a destination, newest first (its delivery log; a webhook's from the engine). */
  async log(accountId: number, destinationId: number, limit = 50): Promise<DeliveryLogEntry[]> {
    const destination = await this.destinations.get(accountId, destinationId);
    const rows = await this.db
      .selectFrom('notification_sends')
      .selectAll()
      .where('destination_id', '=', destinationId)
      .orderBy('created_at', 'desc')
      .limit(limit)
      .execute();
    const own: DeliveryLogEntry[] = rows.map((r) => ({
      delivery_id: r.id,
      notification_id: r.notification_id === null ? null : Number(r.notification_id),
      status: r.status,
      attempts: r.attempts,
      next_attempt_at: r.next_attempt_at ? iso(r.next_attempt_at) : null,
      created_at: iso(r.created_at),
    }));
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
    const missing = () => notificationsErrors.delivery_not_found(`No delivery ${deliveryId} of this destination`);
    if (destination.type === 'webhook') {
      if (!this.webhooks) throw missing();
      const replayed = await this.webhooks.replay(destinationId, deliveryId);
      if (!replayed) throw missing();
      return replayed;
    }
    const send = await this.db
      .selectFrom('notification_sends')
      .selectAll()
      .where('id', '=', deliveryId)
      .where('destination_id', '=', destinationId)
      .executeTakeFirst();
    if (!send) throw missing();
    if (send.status !== 'failed') throw notificationsErrors.delivery_not_failed();
    await this.db.transaction().execute(async (trx) => {
      await trx.updateTable('notification_sends').set({ status: 'pending', next_attempt_at: new Date() }).where('id', '=', deliveryId).execute();
      await this.jobs.send(SEND_QUEUE, { sendId: deliveryId, attempt: send.attempts.length + 1, round: send.attempts.length }, {}, trx);
    });
    return (await this.log(accountId, destinationId, 200)).find((d) => d.delivery_id === deliveryId)!;
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
        if (!this.webhooks) throw notificationsErrors.webhooks_unavailable();
        result = await this.webhooks.sendNow({
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
