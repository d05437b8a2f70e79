/**
 * Notification sends through the shared delivery engine (src/delivery), the service's one retry
 * engine: webhooks are signed like data handoffs (X-Service-Timestamp/Signature/Delivery, the
 * destination's own `whsec_` secret); Telegram messages are the engine's `telegram` channel,
 * registered here. Both go on the WEBHOOK_RETRY_DELAYS schedule and outcome table, every attempt
 * logged. The engine knows a destination as the owner `notification:<destination id>`; its outcome
 * hook keeps the destination's state (a 4xx, a redirect, a blocked bot: needs attention; 10 failed
 * deliveries in a row: paused), in the transaction that records the outcome.
 *
 * A Telegram delivery stores `telegram:<destination id>` and `{"text", "notification_id"}`: the
 * chat is looked up at each attempt and the bot token is the server's, so neither the token nor a
 * chat moved since is ever in a delivery record.
 */
import { DeliveryNotFailed, DeliveryNotFound, type DeliveryEngine, type DeliveryView } from '../delivery/engine.js';
import type { ChannelResult, DeliveryChannel } from '../delivery/channels.js';
import type { Destinations } from './destinations.js';
import type { TelegramBot } from './telegram.js';
import type { DeliveryLogEntry, NotificationDeliveries, WebhookDelivery } from './types.js';
import { notificationsErrors } from './errors.js';

export const OWNER_KIND = 'notification';
export const TELEGRAM_CHANNEL = 'telegram';
export const USER_AGENT = 'Presence-Notifications/1.0';

const owner = (destinationId: number) => ({ kind: OWNER_KIND, id: String(destinationId) });

interface TelegramPayload {
  text: string;
  notification_id: number | string | null;
}

function logEntry(view: DeliveryView): DeliveryLogEntry {
  const entry: DeliveryLogEntry = {
    delivery_id: view.delivery_id,
    conversation_id: view.conversation_id,
    status: view.status,
    attempts: view.attempts.map((a) => ({ at: a.at, status_code: a.status_code, error: a.error, duration_ms: a.duration_ms })),
    next_attempt_at: view.next_attempt_at,
    created_at: view.created_at,
  };
  // A Telegram send names its notification (as its log always did); a webhook's body has it.
  if (view.url.startsWith(`${TELEGRAM_CHANNEL}:`) && view.payload) {
    const id = (JSON.parse(view.payload) as TelegramPayload).notification_id;
    entry.notification_id = id === null || id === undefined ? null : Number(id);
  }
  return entry;
}

/** The Telegram channel: one sendMessage to the destination's chat, judged like a webhook answer. */
function telegramChannel(bot: TelegramBot, destinations: () => Destinations): DeliveryChannel {
  return {
    async attempt(delivery): Promise<ChannelResult> {
      const destination = await destinations().byId(Number(delivery.ownerId));
      // (A disabled or paused one was skipped by the owner's hook before this.)
      if (destination?.type !== 'telegram' || !destination.chat_id) return { skipped: 'the Telegram destination is gone' };
      const { text } = JSON.parse(delivery.payload) as TelegramPayload;
      const outcome = await bot.send(destination.chat_id, text);
      if (outcome.delivered) return { verdict: 'delivered', statusCode: 200, error: null, durationMs: outcome.durationMs, excerpt: null };
      return {
        verdict: outcome.retry ? 'retry' : 'rejected',
        statusCode: outcome.statusCode,
        error: outcome.error,
        durationMs: outcome.durationMs,
        excerpt: null,
        ...(outcome.retryAfterSeconds !== undefined && { retryAfterSeconds: outcome.retryAfterSeconds }),
      };
    },
  };
}

/** What every webhook send of a destination is: a signed JSON POST from notifications. */
function signedPost(delivery: Omit<WebhookDelivery, 'dedupeKey' | 'conversationId' | 'notBefore'>) {
  return {
    accountId: delivery.accountId,
    owner: owner(delivery.destinationId),
    url: delivery.url,
    method: 'POST' as const,
    contentType: 'application/json; charset=utf-8',
    headers: delivery.headers,
    payload: delivery.body,
    secret: delivery.secret,
    userAgent: USER_AGENT,
  };
}

/**
 * Registers the notification owner, and the Telegram channel when the server has a bot, on the
 * engine (before it starts), and answers what notifications send through.
 */
export function notificationDeliveries(engine: DeliveryEngine, destinations: () => Destinations, bot: TelegramBot | undefined): NotificationDeliveries {
  engine.owner(OWNER_KIND, {
    // A disabled or paused destination skips what comes due (webhook or Telegram), as a send held
    // for quiet hours always did; a deleted one takes no further webhook attempts.
    skip: async (ownerId) => {
      const row = await destinations().byId(Number(ownerId));
      return row && (!row.enabled || row.state === 'paused') ? 'the destination is disabled or paused' : undefined;
    },
    secret: async (ownerId) => (await destinations().byId(Number(ownerId)))?.secret ?? null,
    outcome: async (event, trx) => {
      await destinations().recordOutcome(
        Number(event.owner.id),
        event.outcome === 'delivered' ? 'delivered' : event.outcome === 'rejected' ? 'rejected' : 'failed',
        event.error,
        trx,
      );
    },
  });
  if (bot) engine.channel(TELEGRAM_CHANNEL, telegramChannel(bot, destinations));
  return {
    checkUrl: (url) => engine.checkUrl(url),
    async enqueueWebhook(delivery, trx) {
      await engine.enqueue(
        { ...signedPost(delivery), conversationId: delivery.conversationId, dedupeKey: delivery.dedupeKey, notBefore: delivery.notBefore },
        trx,
      );
    },
    async enqueueTelegram(send, trx) {
      const payload: TelegramPayload = { text: send.text.slice(0, 4096), notification_id: send.notificationId };
      await engine.enqueue(
        {
          id: send.id,
          accountId: send.accountId,
          owner: owner(send.destinationId),
          conversationId: send.conversationId,
          dedupeKey: `notification-send:${send.id}`,
          channel: TELEGRAM_CHANNEL,
          url: `${TELEGRAM_CHANNEL}:${send.destinationId}`,
          method: 'POST',
          payload: JSON.stringify(payload),
          secret: '',
          userAgent: USER_AGENT,
          notBefore: send.notBefore,
        },
        trx,
      );
    },
    async sendNow(delivery) {
      const result = await engine.sendNow(signedPost(delivery));
      return { delivered: result.delivered, status_code: result.status_code, error: result.error };
    },
    wake: (deliveryId) => engine.wake(deliveryId),
    async list(destinationId, limit) {
      return (await engine.list(owner(destinationId), { limit, offset: 0 }, { payload: true })).map(logEntry);
    },
    async replay(destinationId, deliveryId) {
      try {
        await engine.replay(owner(destinationId), deliveryId);
        return logEntry((await engine.view(owner(destinationId), deliveryId, { payload: true }))!);
      } catch (error) {
        if (error instanceof DeliveryNotFound) return undefined;
        if (error instanceof DeliveryNotFailed) throw notificationsErrors.delivery_not_failed();
        throw error;
      }
    },
    forget: (destinationId) => engine.forget(owner(destinationId)),
  };
}
