/**
 * Charging sessions as they run. Each session has a meter row (billing_sessions) holding the
 * seconds and premium speech already charged: the watermark. Every charge step moves the watermark
 * and posts the difference to the ledger in one transaction (the meter row, then the account row,
 * locked in that order), so a step repeated on another node or after a retry charges nothing twice.
 *
 * - Paid plan: every `chargeIntervalSeconds` the running session is charged up to now; when the
 *   balance reaches zero it ends with `insufficient_balance` (render socket closed 4001 by the
 *   sessions/realtime end path). Its last step (billed by the second, every started second counted)
 *   runs when it ends.
 * - Free plan: seconds are metered but not charged; the session ends with `free_minutes_exhausted`
 *   when the month's free seconds run out (a timer set at the start, and the same check each step).
 */
import type { Kysely } from 'kysely';
import type { Database } from '../core/db/schema.js';
import type { AccountStore } from '../accounts/accounts.js';
import { charge } from './ledger.js';
import { centsFor, monthOf } from './money.js';
import './tables.js';

export interface MeterHooks {
  /** Ends a running session with this reason (the sessions capability's end). */
  endSession(sessionId: string, reason: string): Promise<unknown>;
  /** Session seconds the account used this calendar month, running sessions included. */
  secondsUsedThisMonth(accountId: number): Promise<number>;
}

export interface MeterConfig {
  pricePerMinute: number;
  premiumVoicePricePerMinute: number;
  chargeIntervalSeconds: number;
  freeMonthlySeconds: number;
}

export interface MeteredSession {
  id: string;
  account_id: number;
  agent_id: number;
  voice_provider: string;
  created_at: Date | string;
}

interface Live {
  accountId: number;
  plan: 'free' | 'paid';
  startedAt: number;
  /** Premium speech voiced since the last step, in ms. */
  pendingVoicedMs: number;
  /** Ends of the session under way (sessions' `ending` hook): no running step counts it meanwhile. */
  ending: number;
  freeTimer?: NodeJS.Timeout;
}

interface Logger {
  error(obj: object, msg: string): void;
}

/** Sessions charged at once within one step. */
const STEP_CONCURRENCY = 8;

export const isPremiumProvider = (provider: string) => provider !== 'kokoro';

/**
 * A free session ends this much after its allowance runs out by this process's clock, so that the
 * duration the database records (its own clock, from the session's start transaction to its end
 * transaction) covers the whole allowance: ending a hair early would let another session start
 * with a fraction of a second left.
 */
const FREE_END_MARGIN_MS = 250;

export class BillingMeter {
  private readonly live = new Map<string, Live>();
  /** Meters still being opened, so an end never overtakes its start. */
  private readonly opening = new Map<string, Promise<void>>();
  private timer?: NodeJS.Timeout;
  private stepping?: Promise<void>;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly config: MeterConfig,
    private readonly accounts: AccountStore,
    private readonly hooks: MeterHooks,
    private readonly logger: Logger,
  ) {}

  /** Starts the charging steps, and takes up meters left open by an earlier run (PostgreSQL: other nodes' too). */
  async start(): Promise<void> {
    const open = await this.db.selectFrom('billing_sessions').select(['session_id', 'account_id', 'plan', 'started_at']).where('ended_at', 'is', null).limit(100_000).execute();
    for (const row of open) this.live.set(row.session_id, { accountId: row.account_id, plan: row.plan, startedAt: new Date(row.started_at).getTime(), pendingVoicedMs: 0, ending: 0 });
    this.timer = setInterval(() => void this.step(), this.config.chargeIntervalSeconds * 1000);
    this.timer.unref();
  }

  /** Stops the steps; waits for one in flight, so no charge runs after the database closes. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    for (const live of this.live.values()) if (live.freeTimer) clearTimeout(live.freeTimer);
    await this.stepping;
  }

  /** A session started: its meter opens (idempotent). */
  opened(session: MeteredSession): Promise<void> {
    const open = this.open(session).finally(() => this.opening.delete(session.id));
    this.opening.set(session.id, open);
    return open;
  }

  private async open(session: MeteredSession): Promise<void> {
    const startedAt = new Date(session.created_at);
    // Tracked at once, so speech voiced while the meter row is being written is not lost.
    const live: Live = { accountId: session.account_id, plan: 'paid', startedAt: startedAt.getTime(), pendingVoicedMs: 0, ending: 0 };
    this.live.set(session.id, live);
    const account = await this.accounts.require(session.account_id);
    live.plan = account.plan;
    await this.db
      .insertInto('billing_sessions')
      .values({
        session_id: session.id,
        account_id: session.account_id,
        agent_id: session.agent_id,
        plan: account.plan,
        voice_provider: session.voice_provider,
        premium: isPremiumProvider(session.voice_provider),
        started_at: startedAt,
        month: monthOf(startedAt),
      })
      .onConflict((oc) => oc.column('session_id').doNothing())
      .execute();
    if (account.plan === 'free') {
      const left = this.config.freeMonthlySeconds - (await this.hooks.secondsUsedThisMonth(session.account_id));
      live.freeTimer = setTimeout(() => void this.endSession(session.id, 'free_minutes_exhausted'), Math.max(0, left * 1000) + FREE_END_MARGIN_MS);
      live.freeTimer.unref();
    }
  }

  /** The session is about to end (sessions hook): its running seconds stop counting until `notEnded`. */
  ending(sessionId: string): void {
    const live = this.live.get(sessionId);
    if (live) live.ending++;
  }

  /** An end that did not happen (the session was not active): counting goes on. */
  notEnded(sessionId: string): void {
    const live = this.live.get(sessionId);
    if (live && live.ending > 0) live.ending--;
  }

  /** Speech a premium provider voiced for a session (ms of audio), charged at the next step. */
  voiced(sessionId: string, ms: number): void {
    const live = this.live.get(sessionId);
    if (live && ms > 0) live.pendingVoicedMs += ms;
  }

  /** One charging step over every running session this node meters. */
  async step(): Promise<void> {
    if (this.stepping) return this.stepping;
    // A few sessions at a time: each is one short transaction, and a slow one holds up no other.
    const queue = [...this.live.keys()];
    const worker = async () => {
      for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
        try {
          await this.chargeRunning(id);
        } catch (error) {
          this.logger.error({ err: error, session_id: id }, 'charging a running session failed; the next step tries again');
        }
      }
    };
    const run = Promise.all(Array.from({ length: STEP_CONCURRENCY }, worker)).then(() => {});
    this.stepping = run;
    try {
      await run;
    } finally {
      this.stepping = undefined;
    }
  }

  /** Charges a running session up to now; ends it when the balance or the free minutes run out. */
  async chargeRunning(sessionId: string): Promise<void> {
    const live = this.live.get(sessionId);
    // An ending session's last seconds are settled by `finish` from the duration it records.
    if (!live || live.ending) return;
    const seconds = Math.floor((Date.now() - live.startedAt) / 1000);
    const result = await this.settle(sessionId, seconds, false);
    if (!result) return;
    if (result.ended) {
      this.forget(sessionId);
      return;
    }
    if (live.plan === 'paid' && result.balanceCents <= 0) {
      await this.endSession(sessionId, 'insufficient_balance');
    } else if (live.plan === 'free' && (await this.hooks.secondsUsedThisMonth(live.accountId)) >= this.config.freeMonthlySeconds) {
      await this.endSession(sessionId, 'free_minutes_exhausted');
    }
  }

  /**
   * The session ended: its last step, billed by the second (every started second counts). Safe to
   * call more than once and from any node (the sessions end hook and the durable conversation-ended
   * job both call it).
   */
  async finish(sessionId: string, durationSeconds: number, endReason: string): Promise<void> {
    await this.opening.get(sessionId)?.catch(() => {});
    await this.settle(sessionId, Math.ceil(Math.max(0, durationSeconds) - 1e-6), true, endReason);
    this.forget(sessionId);
  }

  private forget(sessionId: string): void {
    const live = this.live.get(sessionId);
    if (live?.freeTimer) clearTimeout(live.freeTimer);
    this.live.delete(sessionId);
  }

  private async endSession(sessionId: string, reason: string): Promise<void> {
    try {
      await this.hooks.endSession(sessionId, reason);
    } catch (error) {
      this.logger.error({ err: error, session_id: sessionId, reason }, 'ending a session for billing failed; the next step tries again');
    }
  }

  /**
   * Moves the session's watermark to `seconds` (never back) and charges the difference, with the
   * premium speech voiced since the last step. Answers the balance after, or undefined when the
   * session has no meter (it started before billing existed).
   */
  private async settle(sessionId: string, seconds: number, end: boolean, endReason?: string): Promise<{ balanceCents: number; ended: boolean } | undefined> {
    const live = this.live.get(sessionId);
    const voicedMs = Math.round(live?.pendingVoicedMs ?? 0);
    const result = await this.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('billing_sessions').selectAll().where('session_id', '=', sessionId).forUpdate().executeTakeFirst();
      if (!row) return undefined;
      if (row.ended_at) return { balanceCents: 0, ended: true as const };
      const totalVoicedMs = Number(row.voiced_ms) + voicedMs;
      const newSeconds = Math.max(row.seconds, seconds);
      const voiceSeconds = Math.max(row.voice_seconds, row.premium ? (end ? Math.ceil(totalVoicedMs / 1000) : Math.floor(totalVoicedMs / 1000)) : 0);
      let taken = 0;
      let balanceCents = (await trx.selectFrom('accounts').select('balance_cents').where('id', '=', row.account_id).executeTakeFirst())?.balance_cents ?? 0;
      if (row.plan === 'paid') {
        const common = { accountId: row.account_id, sessionId, agentId: row.agent_id, voiceProvider: row.voice_provider };
        if (newSeconds > row.seconds) {
          const due = centsFor(newSeconds, this.config.pricePerMinute) - centsFor(row.seconds, this.config.pricePerMinute);
          const r = await charge(trx, { ...common, kind: 'session', amountCents: due, seconds: newSeconds - row.seconds });
          taken += r.takenCents;
          balanceCents = r.balanceCents;
        }
        if (voiceSeconds > row.voice_seconds) {
          const due = centsFor(voiceSeconds, this.config.premiumVoicePricePerMinute) - centsFor(row.voice_seconds, this.config.premiumVoicePricePerMinute);
          const r = await charge(trx, { ...common, kind: 'premium_voice', amountCents: due, seconds: voiceSeconds - row.voice_seconds });
          taken += r.takenCents;
          balanceCents = r.balanceCents;
        }
      }
      await trx
        .updateTable('billing_sessions')
        .set({
          seconds: newSeconds,
          voiced_ms: totalVoicedMs,
          voice_seconds: voiceSeconds,
          charged_cents: Number(row.charged_cents) + taken,
          ...(end && { ended_at: new Date(), end_reason: endReason ?? 'ended' }),
        })
        .where('session_id', '=', sessionId)
        .execute();
      return { balanceCents: Number(balanceCents), ended: false, accountId: row.account_id };
    });
    if (result && live) live.pendingVoicedMs = Math.max(0, live.pendingVoicedMs - voicedMs);
    // The account's cached balance (embedded engine) is stale after a charge.
    if (result && !result.ended) this.accounts.forget(result.accountId!);
    return result;
  }
}
