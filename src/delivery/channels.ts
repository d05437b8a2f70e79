/**
 * How an attempt is made, per channel. The engine's own channel is `http` (signed webhooks,
 * src/delivery/http.ts); a capability registers others (`deliveries.channel(name, …)`: notifications'
 * Telegram chats) and so sends through the one schedule, attempt log, outcome hooks and replay
 * without the engine knowing the service it talks to.
 *
 * A channel delivery stores a target reference (e.g. `telegram:<destination id>`), never a
 * credential: the channel resolves the target and its credentials at each attempt.
 */
import type { AttemptResult } from './http.js';
import type { AttemptVerdict } from './outcomes.js';

export interface ChannelDelivery {
  deliveryId: string;
  ownerKind: string;
  ownerId: string;
  /** The stored target reference. */
  target: string;
  /** The stored payload (the channel's own format). */
  payload: string;
}

/** One attempt's result, judged by the channel (delivered, retried on the schedule, or rejected). */
export type ChannelResult =
  | (AttemptResult & {
      verdict: AttemptVerdict;
      /** The receiver asked to wait at least this long (Telegram's `retry_after`): the next attempt waits for the longer of it and the schedule. */
      retryAfterSeconds?: number;
    })
  /** Not attempted: the target is gone or off; the delivery ends `skipped`, no outcome hook. */
  | { skipped: string };

export interface DeliveryChannel {
  attempt(delivery: ChannelDelivery): Promise<ChannelResult>;
}

export const HTTP_CHANNEL = 'http';
