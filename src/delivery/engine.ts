/**
 * The delivery engine: deliveries that are never lost, the one retry engine of the service. Data
 * handoffs and notification webhooks are signed HTTP deliveries (the built-in `http` channel);
 * notifications' Telegram chats are a channel of their own, registered by notifications
 * (src/delivery/channels.ts), so the engine never knows Telegram. An owner (a capability)
 * enqueues a delivery; the engine makes the attempts as durable jobs (src/core/jobs.ts), each
 * webhook signed afresh with the same X-Service-Delivery id, on the WEBHOOK_RETRY_DELAYS schedule,
 * and logs every attempt. When a delivery is finally delivered or failed, the owner's outcome hook
 * runs in the same transaction that records it (so a count of failures in a row is never off by a
 * crash).
 *
 *   const deliveries = new DeliveryEngine(db, jobs, logger, { retryDelays, timeoutSeconds, allowPrivate });
 *   deliveries.owner('notification', { secret: async (id) => …, outcome: async (event, trx) => … });
 *   deliveries.channel('telegram', { attempt: async (delivery) => … });  // another way to deliver
 *   await deliveries.start();
 *   await deliveries.enqueue({ accountId, owner: { kind: 'notification', id: '7' }, url, method: 'POST',
 *                              contentType: 'application/json; charset=utf-8', payload, secret,
 *                              userAgent: 'Presence-Notifications/1.0', dedupeKey: `n:7:${conversationId}` });
 *   await deliveries.checkUrl(url)         // when a URL is saved: 422 private_address / invalid_url
 *   await deliveries.enqueue({ …, channel: 'telegram', url: 'telegram:42', notBefore })  // a target reference, held until notBefore
 *   await deliveries.sendNow({ … })        // one attempt now (a console "Send test"), logged
 *   await deliveries.replay(deliveryId)    // a failed delivery, again from the start of the schedule
 *   await deliveries.list({ kind, id })    // the log, newest first
 */
import crypto from 'node:crypto';
import type { Db } from '../core/db/database.js';
import type { Jobs, JobsLogger } from '../core/jobs.js';
import { resolvesPrivate } from '../core/net.js';
import { attempt, type AttemptResult } from './http.js';
import { signature } from './signing.js';
import { statusError, verdict } from './outcomes.js';
import { deliveryErrors } from './errors.js';
import { HTTP_CHANNEL, type ChannelResult, type DeliveryChannel } from './channels.js';

export const DELIVERY_QUEUE = 'delivery.attempt';
export const DEFAULT_USER_AGENT = 'Presence-DataHandoff/1.0';
/** Headers the service sets on every delivery; an owner's custom headers never replace them. */
/** Headers a webhook's custom headers cannot set: ours on every delivery, and the hop-by-hop ones (RFC 9110 7.6.1) that would corrupt the request. */
export const RESERVED_HEADERS = [
  'content-type',
  'user-agent',
  'x-service-timestamp',
  'x-service-signature',
  'x-service-delivery',
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'te',
  'trailer',
  'upgrade',
  'proxy-connection',
];
/** Finished deliveries are kept in the log this long. */
const LOG_RETENTION_DAYS = 30;

export interface DeliveryOwnerRef {
  /** The capability: `handoff`, `notification`. */
  kind: string;
  id: string;
}

export interface DeliveryInput {
  /** The delivery id (X-Service-Delivery), when the owner chose one (a UUID); else a new one. */
  id?: string;
  accountId: number;
  owner: DeliveryOwnerRef;
  conversationId?: string | null;
  /** At most one delivery per key (e.g. rule + conversation): a second enqueue answers the first. */
  dedupeKey?: string;
  /** `http` (the default: a signed webhook) or a registered channel (`deliveries.channel`). */
  channel?: string;
  /** The webhook URL; for another channel its target reference (never a credential). */
  url: string;
  method: 'POST' | 'GET';
  /** POST only. */
  contentType?: string;
  /** The owner's custom headers (reserved ones are dropped). */
  headers?: Record<string, string>;
  /** The POST body, or for GET the query string appended to the URL (no leading `?`). */
  payload: string;
  /** The webhook's signing secret (another channel has none: leave it empty). */
  secret: string;
  userAgent?: string;
  /** The first attempt waits until then (a notification held for quiet hours); now by default. */
  notBefore?: Date;
}

export interface DeliveryOutcomeEvent {
  deliveryId: string;
  accountId: number;
  owner: DeliveryOwnerRef;
  conversationId: string | null;
  /** `delivered`; `rejected` (a 4xx, a redirect: not retried, needs attention); `exhausted` (every attempt failed). */
  outcome: 'delivered' | 'rejected' | 'exhausted';
  statusCode: number | null;
  error: string | null;
  attempts: number;
}

export interface DeliveryOwner {
  /** The owner's current secret (a rotation applies to the next attempt); null: the owner is gone, stop. */
  secret?(ownerId: string): Promise<string | null | undefined>;
  /** Why the owner takes no delivery now (disabled, paused), if so: a due delivery then ends `skipped`. */
  skip?(ownerId: string): Promise<string | undefined>;
  /** Runs in the transaction that records the final outcome of a non-test delivery. */
  outcome?(event: DeliveryOutcomeEvent, trx: Db): Promise<void>;
}

export interface DeliverySettings {
  /** Seconds between attempts (WEBHOOK_RETRY_DELAYS): attempts = delays + 1. */
  retryDelays: number[];
  timeoutSeconds: number;
  allowPrivate: boolean;
  /** Attempts running at once in this process (default 8). */
  concurrency?: number;
}

export interface AttemptLogEntry {
  at: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  response_excerpt: string | null;
}

export interface DeliveryView {
  delivery_id: string;
  conversation_id: string | null;
  kind: 'event' | 'test';
  /** `skipped`: its owner or target was off (disabled, paused) when the attempt was due. */
  status: 'pending' | 'retrying' | 'delivered' | 'failed' | 'skipped';
  method: 'POST' | 'GET';
  url: string;
  created_at: string;
  attempts: AttemptLogEntry[];
  next_attempt_at: string | null;
  /** Only when asked for (`list(…, { payload: true })`). */
  payload?: string;
}

/** The view of an owner with no `skip` hook and only webhooks (handoff): never `skipped`. */
export type WebhookDeliveryView = DeliveryView & { status: Exclude<DeliveryView['status'], 'skipped'> };

export interface TestSendResult {
  delivery_id: string;
  delivered: boolean;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}

export class DeliveryNotFound extends Error {}
export class DeliveryNotFailed extends Error {}

/** The full URL of a GET delivery: the URL (without its fragment) and the payload after its own parameters. */
export function urlWithQuery(url: string, query: string): string {
  const target = new URL(url);
  target.hash = '';
  const base = target.href;
  if (!query) return base;
  const joiner = base.endsWith('?') || base.endsWith('&') ? '' : target.search ? '&' : '?';
  return base + joiner + query;
}

export function customHeaders(headers: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (!RESERVED_HEADERS.includes(name.toLowerCase())) out[name] = value;
  }
  return out;
}

type Row = {
  id: string;
  account_id: number;
  owner_kind: string;
  owner_id: string;
  conversation_id: string | null;
  kind: 'event' | 'test';
  channel: string;
  url: string;
  method: 'POST' | 'GET';
  content_type: string | null;
  headers: Record<string, string>;
  payload: string;
  secret: string;
  user_agent: string;
  status: 'pending' | 'retrying' | 'delivered' | 'failed' | 'skipped';
  attempts: number;
  round_start: number;
};

export class DeliveryEngine {
  private readonly owners = new Map<string, DeliveryOwner>();
  private readonly channels = new Map<string, DeliveryChannel>();
  private pruneTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Db,
    private readonly jobs: Jobs,
    private readonly logger: JobsLogger,
    readonly settings: DeliverySettings,
  ) {}

  /** Registers an owner's hooks (before `start`, so jobs left from a previous run find them). */
  owner(kind: string, hooks: DeliveryOwner): void {
    this.owners.set(kind, hooks);
  }

  /** Registers another way to deliver (before `start`); `http` is built in. */
  channel(name: string, channel: DeliveryChannel): void {
    if (name === HTTP_CHANNEL) throw new Error('the http channel is built in');
    this.channels.set(name, channel);
  }

  /** Attempts are made one schedule step at a time, each a job; a crash mid-attempt runs it again. */
  async start(): Promise<void> {
    await this.jobs.work<{ deliveryId: string; number: number }>(
      DELIVERY_QUEUE,
      { retryLimit: 5, retryDelay: 5, retryBackoff: true, expireInSeconds: this.settings.timeoutSeconds + 60, concurrency: this.settings.concurrency ?? 8 },
      async ({ deliveryId, number }) => this.runAttempt(deliveryId, number),
    );
    await this.prune();
    this.pruneTimer = setInterval(() => void this.prune(), 6 * 3600_000);
    this.pruneTimer.unref();
  }

  stop(): void {
    clearInterval(this.pruneTimer);
  }

  /**
   * The check made when an owner saves a webhook URL: http(s), no credentials in it, and (unless
   * WEBHOOK_ALLOW_PRIVATE=1) not a loopback or private-network address, by name or after resolving
   * (422 `private_address`). Connections check again at connect time.
   */
  async checkUrl(url: string): Promise<void> {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw deliveryErrors.invalid_url('The webhook URL is not a URL');
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw deliveryErrors.invalid_url('The webhook URL must be http or https');
    if (parsed.username || parsed.password) throw deliveryErrors.invalid_url('Put credentials in a custom header, not in the webhook URL');
    if (this.settings.allowPrivate) return;
    const address = await resolvesPrivate(parsed.hostname);
    if (address)
      throw deliveryErrors.private_address(`${parsed.hostname} is a loopback or private-network address (${address}); webhooks must be on the public internet`);
  }

  /**
   * Records a delivery and queues its first attempt now, in one transaction (the caller's when
   * given). With a `dedupeKey` already used, nothing new is made: answers the existing id.
   */
  async enqueue(input: DeliveryInput, trx?: Db): Promise<{ deliveryId: string; created: boolean }> {
    const write = async (t: Db) => {
      const id = input.id ?? crypto.randomUUID();
      const inserted = await t
        .insertInto('deliveries')
        .values({ ...this.rowValues(input, 'event'), id, status: 'pending', next_attempt_at: input.notBefore ?? new Date() })
        .onConflict((oc) => oc.column('dedupe_key').doNothing())
        .returning('id')
        .executeTakeFirst();
      if (!inserted) {
        const existing = await t.selectFrom('deliveries').select('id').where('dedupe_key', '=', input.dedupeKey!).executeTakeFirstOrThrow();
        return { deliveryId: existing.id, created: false };
      }
      await this.jobs.send(
        DELIVERY_QUEUE,
        { deliveryId: id, number: 1 },
        { singletonKey: `${id}:1`, ...(input.notBefore && { startAfter: input.notBefore }) },
        t,
      );
      return { deliveryId: id, created: true };
    };
    return trx ? write(trx) : this.db.transaction().execute(write);
  }

  /** One attempt now, answered when it is done (a "Send test"); logged, never retried, no outcome hook. */
  async sendNow(input: Omit<DeliveryInput, 'dedupeKey'>): Promise<TestSendResult> {
    const id = input.id ?? crypto.randomUUID();
    await this.db
      .insertInto('deliveries')
      .values({ ...this.rowValues(input, 'test'), id, status: 'pending' })
      .execute();
    const row = await this.load(id);
    const outcome = await this.perform(row!, input.secret);
    const result = 'skipped' in outcome ? { statusCode: null, error: `skipped: ${outcome.skipped}`, durationMs: 0, excerpt: null } : outcome;
    const delivered = !('skipped' in outcome) && outcome.verdict === 'delivered';
    const error = result.error ?? statusError(result.statusCode);
    await this.db.transaction().execute(async (trx) => {
      await this.logAttempt(trx, id, 1, result, error);
      await trx
        .updateTable('deliveries')
        .set({ status: delivered ? 'delivered' : 'failed', attempts: 1, last_error: error, updated_at: new Date(), finished_at: new Date() })
        .where('id', '=', id)
        .execute();
    });
    return { delivery_id: id, delivered, status_code: result.statusCode, error, duration_ms: result.durationMs };
  }

  /** A failed delivery is made again, from the start of the schedule, with the same delivery id. */
  async replay(owner: DeliveryOwnerRef, deliveryId: string): Promise<DeliveryView> {
    await this.db.transaction().execute(async (trx) => {
      const row = await trx
        .selectFrom('deliveries')
        .select(['status', 'attempts'])
        .where('id', '=', deliveryId)
        .where('owner_kind', '=', owner.kind)
        .where('owner_id', '=', owner.id)
        .executeTakeFirst();
      if (!row) throw new DeliveryNotFound(deliveryId);
      if (row.status !== 'failed') throw new DeliveryNotFailed(deliveryId);
      await trx
        .updateTable('deliveries')
        .set({ status: 'pending', round_start: row.attempts, next_attempt_at: new Date(), finished_at: null, updated_at: new Date() })
        .where('id', '=', deliveryId)
        .execute();
      const number = row.attempts + 1;
      await this.jobs.send(DELIVERY_QUEUE, { deliveryId, number }, { singletonKey: `${deliveryId}:${number}` }, trx);
    });
    return (await this.view(owner, deliveryId))!;
  }

  /**
   * The next attempt of a waiting delivery, now (if it is still waiting). For jobs of an owner's
   * own from before its sends moved here (notifications' `notifications.send`), so none is lost.
   */
  async wake(deliveryId: string): Promise<void> {
    const row = await this.db.selectFrom('deliveries').select(['status', 'attempts', 'kind']).where('id', '=', deliveryId).executeTakeFirst();
    if (row?.kind !== 'event' || (row.status !== 'pending' && row.status !== 'retrying')) return;
    const number = row.attempts + 1;
    await this.jobs.send(DELIVERY_QUEUE, { deliveryId, number }, { singletonKey: `${deliveryId}:${number}` });
  }

  /** An owner's deliveries, newest first, with their attempts (and, when asked, their payloads). */
  list(
    owner: DeliveryOwnerRef,
    page: { limit: number; offset: number } = { limit: 50, offset: 0 },
    include: { payload?: boolean } = {},
  ): Promise<DeliveryView[]> {
    return this.views(owner, page, undefined, include.payload);
  }

  async view(owner: DeliveryOwnerRef, deliveryId: string, include: { payload?: boolean } = {}): Promise<DeliveryView | undefined> {
    return (await this.views(owner, { limit: 1, offset: 0 }, deliveryId, include.payload))[0];
  }

  private async views(owner: DeliveryOwnerRef, page: { limit: number; offset: number }, onlyId?: string, withPayload = false): Promise<DeliveryView[]> {
    let query = this.db
      .selectFrom('deliveries')
      .select(['id', 'conversation_id', 'kind', 'status', 'method', 'url', 'created_at', 'next_attempt_at'])
      // Bodies are read only by an owner that shows something from them.
      .$if(withPayload, (q) => q.select('payload'))
      .where('owner_kind', '=', owner.kind)
      .where('owner_id', '=', owner.id);
    if (onlyId) query = query.where('id', '=', onlyId);
    const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit).offset(page.offset).execute();
    if (!rows.length) return [];
    const attempts = await this.db
      .selectFrom('delivery_attempts')
      .select(['delivery_id', 'at', 'status_code', 'error', 'duration_ms', 'response_excerpt'])
      .where(
        'delivery_id',
        'in',
        rows.map((r) => r.id),
      )
      .orderBy('number')
      .execute();
    const byDelivery = new Map<string, AttemptLogEntry[]>();
    for (const a of attempts) {
      const list = byDelivery.get(a.delivery_id) ?? [];
      list.push({
        at: new Date(a.at).toISOString(),
        status_code: a.status_code,
        error: a.error,
        duration_ms: a.duration_ms,
        response_excerpt: a.response_excerpt,
      });
      byDelivery.set(a.delivery_id, list);
    }
    return rows.map((r) => ({
      delivery_id: r.id,
      conversation_id: r.conversation_id,
      kind: r.kind,
      status: r.status,
      method: r.method,
      url: r.url,
      created_at: new Date(r.created_at).toISOString(),
      attempts: byDelivery.get(r.id) ?? [],
      next_attempt_at: r.next_attempt_at && (r.status === 'pending' || r.status === 'retrying') ? new Date(r.next_attempt_at).toISOString() : null,
      ...(r.payload !== undefined && { payload: r.payload }),
    }));
  }

  /** An owner is deleted: its deliveries and their log go too (queued attempts then find nothing). */
  async forget(owner: DeliveryOwnerRef): Promise<void> {
    await this.db.deleteFrom('deliveries').where('owner_kind', '=', owner.kind).where('owner_id', '=', owner.id).execute();
  }

  private rowValues(input: Omit<DeliveryInput, 'dedupeKey'> & { dedupeKey?: string }, kind: 'event' | 'test') {
    return {
      account_id: input.accountId,
      owner_kind: input.owner.kind,
      owner_id: input.owner.id,
      dedupe_key: input.dedupeKey ?? null,
      conversation_id: input.conversationId ?? null,
      kind,
      channel: input.channel ?? HTTP_CHANNEL,
      url: input.url,
      method: input.method,
      content_type: input.method === 'POST' ? (input.contentType ?? 'application/json; charset=utf-8') : null,
      headers: JSON.stringify(customHeaders(input.headers)),
      payload: input.payload,
      secret: input.secret,
      user_agent: input.userAgent ?? DEFAULT_USER_AGENT,
      updated_at: new Date(),
    };
  }

  private async load(id: string): Promise<Row | undefined> {
    return (await this.db.selectFrom('deliveries').selectAll().where('id', '=', id).executeTakeFirst()) as Row | undefined;
  }

  /** One attempt through the delivery's channel: a webhook is signed (now, afresh) and sent. */
  private async perform(row: Row, secret: string): Promise<ChannelResult> {
    if (row.channel !== HTTP_CHANNEL) {
      const channel = this.channels.get(row.channel);
      // A server without the channel (e.g. no bot token now): the job fails and is retried by the queue.
      if (!channel) throw new Error(`no delivery channel ${row.channel} on this server`);
      return channel.attempt({ deliveryId: row.id, ownerKind: row.owner_kind, ownerId: row.owner_id, target: row.url, payload: row.payload });
    }
    const result = await this.performHttp(row, secret);
    return { ...result, verdict: verdict(result) };
  }

  private performHttp(row: Row, secret: string): Promise<AttemptResult> {
    const timestamp = Math.floor(Date.now() / 1000);
    const headers: Record<string, string> = {
      ...customHeaders(row.headers),
      'User-Agent': row.user_agent,
      'X-Service-Timestamp': String(timestamp),
      'X-Service-Signature': signature(secret, timestamp, row.payload),
      'X-Service-Delivery': row.id,
    };
    if (row.method === 'POST') headers['Content-Type'] = row.content_type ?? 'application/json; charset=utf-8';
    let url: string;
    try {
      url = row.method === 'GET' ? urlWithQuery(row.url, row.payload) : row.url;
    } catch {
      return Promise.resolve({ statusCode: null, error: 'bad_url: not an http or https URL', durationMs: 0, excerpt: null });
    }
    return attempt(
      { url, method: row.method, headers, ...(row.method === 'POST' && { body: row.payload }) },
      { timeoutMs: this.settings.timeoutSeconds * 1000, allowPrivate: this.settings.allowPrivate },
    );
  }

  private async logAttempt(trx: Db, deliveryId: string, number: number, result: AttemptResult, error: string | null): Promise<boolean> {
    const inserted = await trx
      .insertInto('delivery_attempts')
      .values({
        delivery_id: deliveryId,
        number,
        at: new Date(Date.now() - result.durationMs),
        status_code: result.statusCode,
        error,
        duration_ms: result.durationMs,
        response_excerpt: result.excerpt,
      })
      .onConflict((oc) => oc.columns(['delivery_id', 'number']).doNothing())
      .returning('id')
      .executeTakeFirst();
    return !!inserted;
  }

  /** The job: attempt `number` of a delivery (skipped when it was already made or the delivery is done). */
  private async runAttempt(deliveryId: string, number: number): Promise<void> {
    const row = await this.load(deliveryId);
    if (row?.kind !== 'event' || row.status === 'delivered' || row.status === 'failed' || row.status === 'skipped' || row.attempts !== number - 1) return;
    const hooks = this.owners.get(row.owner_kind);
    const off = await hooks?.skip?.(row.owner_id);
    const current = hooks?.secret && row.channel === HTTP_CHANNEL ? await hooks.secret(row.owner_id) : undefined;
    if (current === null) {
      // The owner was deleted while this waited: nothing to deliver for.
      await this.db
        .updateTable('deliveries')
        .set({ status: 'failed', last_error: 'the webhook was deleted', next_attempt_at: null, finished_at: new Date(), updated_at: new Date() })
        .where('id', '=', deliveryId)
        .execute();
      return;
    }
    const result = off === undefined ? await this.perform(row, current ?? row.secret) : { skipped: off };
    if ('skipped' in result) {
      await this.db
        .updateTable('deliveries')
        .set({ status: 'skipped', last_error: result.skipped, next_attempt_at: null, finished_at: new Date(), updated_at: new Date() })
        .where('id', '=', deliveryId)
        .where('attempts', '=', number - 1)
        .execute();
      return;
    }
    const judged = result.verdict;
    const error = result.error ?? statusError(result.statusCode);
    const inRound = number - row.round_start;
    const scheduled = this.settings.retryDelays[inRound - 1];
    // A receiver may stretch a wait (Telegram's retry_after), up to the schedule's longest: a huge or
    // broken value from the other side must not park a delivery for ever or overflow the date.
    const asked = Number.isFinite(result.retryAfterSeconds) ? Math.min(result.retryAfterSeconds!, Math.max(...this.settings.retryDelays)) : 0;
    const delay = scheduled === undefined ? undefined : Math.max(scheduled, asked);
    const retry = judged === 'retry' && delay !== undefined;
    await this.db.transaction().execute(async (trx) => {
      if (!(await this.logAttempt(trx, deliveryId, number, result, error))) return;
      const now = new Date();
      const next = retry ? new Date(now.getTime() + delay * 1000) : null;
      const status = judged === 'delivered' ? 'delivered' : retry ? 'retrying' : 'failed';
      const updated = await trx
        .updateTable('deliveries')
        .set({ status, attempts: number, last_error: error, next_attempt_at: next, updated_at: now, ...(status !== 'retrying' && { finished_at: now }) })
        .where('id', '=', deliveryId)
        .where('attempts', '=', number - 1)
        .returning('id')
        .executeTakeFirst();
      if (!updated) return;
      if (retry) {
        await this.jobs.send(DELIVERY_QUEUE, { deliveryId, number: number + 1 }, { startAfter: next!, singletonKey: `${deliveryId}:${number + 1}` }, trx);
        return;
      }
      const outcome = judged === 'delivered' ? 'delivered' : judged === 'rejected' ? 'rejected' : 'exhausted';
      await hooks?.outcome?.(
        {
          deliveryId,
          accountId: row.account_id,
          owner: { kind: row.owner_kind, id: row.owner_id },
          conversationId: row.conversation_id,
          outcome,
          statusCode: result.statusCode,
          error,
          attempts: number,
        },
        trx as unknown as Db,
      );
    });
    const what = row.channel === HTTP_CHANNEL ? 'webhook delivery' : `${row.channel} delivery`;
    if (judged !== 'delivered')
      this.logger.warn(
        { delivery: deliveryId, attempt: number, status_code: result.statusCode, error, retry },
        retry ? `${what} failed; it will be retried` : `${what} failed`,
      );
  }

  private async prune(): Promise<void> {
    try {
      const cutoff = new Date(Date.now() - LOG_RETENTION_DAYS * 86400_000);
      await this.db.deleteFrom('deliveries').where('finished_at', '<', cutoff).execute();
    } catch (error) {
      this.logger.warn({ err: error }, 'old deliveries could not be pruned');
    }
  }
}
