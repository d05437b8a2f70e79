/**
 * Notification webhooks through the shared delivery engine (src/delivery): signed like data
 * handoffs (X-Service-Timestamp/Signature/Delivery, the destination's own `whsec_` secret), on the
 * WEBHOOK_RETRY_DELAYS schedule and outcome table, every attempt logged. The engine knows a
 * destination as the owner `notification:<destination id>`; its outcome hook keeps the
 * destination's state (a 4xx or a redirect: needs attention; 10 failed deliveries in a row: paused),
 * in the transaction that records the outcome.
 */
import { DeliveryNotFailed, DeliveryNotFound, type DeliveryEngine, type DeliveryView } from '../delivery/engine.js';
import type { Destinations } from './destinations.js';
import type { DeliveryLogEntry, WebhookSender } from './types.js';
import { notificationsErrors } from './errors.js';

export const OWNER_KIND = 'notification';
export const USER_AGENT = 'Presence-Notifications/1.0';

const owner = (destinationId: number) => ({ kind: OWNER_KIND, id: String(destinationId) });

function logEntry(view: DeliveryView): DeliveryLogEntry {
  return {
    delivery_id: view.delivery_id,
    conversation_id: view.conversation_id,
    status: view.status,
    attempts: view.attempts.map((a) => ({ at: a.at, status_code: a.status_code, error: a.error, duration_ms: a.duration_ms })),
    next_attempt_at: view.next_attempt_at,
    created_at: view.created_at,
  };
}

/** Registers the notification owner on the engine (before it starts) and answers the sender. */
export function notificationWebhooks(engine: DeliveryEngine, destinations: () => Destinations): WebhookSender {
  engine.owner(OWNER_KIND, {
    // A deleted, disabled or paused destination takes no further attempts.
    secret: async (ownerId) => {
      const row = await destinations().byId(Number(ownerId));
      return row?.enabled && row.state !== 'paused' ? row.secret : null;
    },
    outcome: async (event, trx) => {
      await destinations().recordOutcome(
        Number(event.owner.id),
        event.outcome === 'delivered' ? 'delivered' : event.outcome === 'rejected' ? 'rejected' : 'failed',
        event.error,
        trx,
      );
    },
  });
  return {
    checkUrl: (url) => engine.checkUrl(url),
    async enqueue(delivery, trx) {
      await engine.enqueue(
        {
          accountId: delivery.accountId,
          owner: owner(delivery.destinationId),
          id: delivery.id,
          conversationId: delivery.conversationId,
          dedupeKey: delivery.dedupeKey,
          url: delivery.url,
          method: 'POST',
          contentType: 'application/json; charset=utf-8',
          headers: delivery.headers,
          payload: delivery.body,
          secret: delivery.secret,
          userAgent: USER_AGENT,
        },
        trx,
      );
    },
    async sendNow(delivery) {
      const result = await engine.sendNow({
        accountId: delivery.accountId,
        owner: owner(delivery.destinationId),
        url: delivery.url,
        method: 'POST',
        contentType: 'application/json; charset=utf-8',
        headers: delivery.headers,
        payload: delivery.body,
        secret: delivery.secret,
        userAgent: USER_AGENT,
      });
      return { delivered: result.delivered, status_code: result.status_code, error: result.error };
    },
    async list(destinationId, limit) {
      return (await engine.list(owner(destinationId), { limit, offset: 0 })).map(logEntry);
    },
    async replay(destinationId, deliveryId) {
      try {
        return logEntry(await engine.replay(owner(destinationId), deliveryId));
      } catch (error) {
        if (error instanceof DeliveryNotFound) return undefined;
        if (error instanceof DeliveryNotFailed) throw notificationsErrors.delivery_not_failed();
        throw error;
      }
    },
    forget: (destinationId) => engine.forget(owner(destinationId)),
  };
}
