/**
 * Charging sessions as they run. Each session has a meter row (billing_sessions) holding the
 * seconds and premium speech already charged: the watermark. Posting moves watermarks and writes
 * the differences to the ledger in one transaction (the meter rows, then each account row, locked
 * in that order), so a post repeated on another node or after a retry charges nothing twice.
 *
 * - Paid plan: every `chargeIntervalSeconds` one query reads the balances of every account with a
 *   running session here, and what its sessions owe since their last post is worked out in memory.
 *   An account whose balance that would reach before the next check is posted at once (all its
 *   sessions on this node, one transaction), and its sessions end with `insufficient_balance` when
 *   the balance reaches zero; otherwise each session is posted once every `POST_EVERY_CHECKS`
 *   checks (a minute at the default interval) and at its end (billed by the second, every started
 *   second counted). So metering costs a query per check plus a transaction per account that runs
 *   low, not a transaction per session every few seconds, and the ledger has a line per
 *   session-minute rather than one per five seconds.
 * - Free plan: seconds are metered but not charged; the session ends with `free_minutes_exhausted`
 *   when the month's free seconds run out (a timer set at the start, and a look at the account's
 *   month whenever its running sessions could have used what was left).
 */
import type { Kysely } from 'kysely';
import type { Database } from '../core/db/schema.js';
import type { AccountStore } from '../accounts/accounts.js';
import { lockBalance, postEntries, type EntryInput } from './ledger.js';
import { centsFor, monthOf } from '../core/money.js';
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
  /** Premium speech voiced since the last post, in ms. */
  pendingVoicedMs: number;
  /** Seconds the last post left in the meter row (its watermark). */
  postedSeconds: number;
  /** Checks since the last post. */
  checksSincePost: number;
  /** Ends of the session under way (sessions' `ending` hook): no running step counts it meanwhile. */
  ending: number;
  freeTimer?: NodeJS.Timeout;
}

interface Logger {
  error(obj: object, msg: string): void;
}

interface SettleItem {
  sessionId: string;
  /** Session seconds to charge up to (the watermark never goes back). */
  seconds: number;
  /** The session's last post: premium speech rounds up, and the meter row is closed. */
  end?: boolean;
  endReason?: string;
}

interface Settled {
  /** The account's balance after the post. */
  balanceCents: number;
  /** The meter was already closed (the session ended elsewhere): nothing was posted. */
  ended: boolean;
}

/** Accounts posted at once within one check. */
const STEP_CONCURRENCY = 4;
/** A running session is posted to the ledger once every this many checks (a minute at the default 5 s). */
export const POST_EVERY_CHECKS = 12;
/** Accounts whose balances one query reads. */
const BALANCES_PER_QUERY = 1000;

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
  /** Free accounts: seconds left this month at the last look, and when that was (ms). */
  private readonly freeLeft = new Map<number, { seconds: number; at: number }>();
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

  /** Starts the checks, and takes up meters left open by an earlier run (PostgreSQL: other nodes' too). */
  async start(): Promise<void> {
    const open = await this.db
      .selectFrom('billing_sessions')
      .select(['session_id', 'account_id', 'plan', 'started_at', 'seconds'])
      .where('ended_at', 'is', null)
      .limit(100_000)
      .execute();
    for (const row of open) {
      this.live.set(row.session_id, {
        accountId: row.account_id,
        plan: row.plan,
        startedAt: new Date(row.started_at).getTime(),
        pendingVoicedMs: 0,
        postedSeconds: row.seconds,
        checksSincePost: 0,
        ending: 0,
      });
    }
    this.timer = setInterval(() => void this.step(), this.config.chargeIntervalSeconds * 1000);
    this.timer.unref();
  }

  /** Stops the checks; waits for one in flight, so no charge runs after the database closes. */
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
    const live: Live = {
      accountId: session.account_id,
      plan: 'paid',
      startedAt: startedAt.getTime(),
      pendingVoicedMs: 0,
      postedSeconds: 0,
      checksSincePost: 0,
      ending: 0,
    };
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
      this.freeLeft.set(session.account_id, { seconds: left, at: Date.now() });
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

  /** Speech a premium provider voiced for a session (ms of audio), charged at its next post. */
  voiced(sessionId: string, ms: number): void {
    const live = this.live.get(sessionId);
    if (live && ms > 0) live.pendingVoicedMs += ms;
  }

  /** One check over every running session this node meters (see the header). */
  async step(): Promise<void> {
    if (this.stepping) return this.stepping;
    const run = this.check();
    this.stepping = run;
    try {
      await run;
    } finally {
      this.stepping = undefined;
    }
  }

  private async check(): Promise<void> {
    const now = Date.now();
    const byAccount = new Map<number, { plan: Live['plan']; ids: string[] }>();
    for (const [id, live] of this.live) {
      // An ending session's last seconds are settled by `finish` from the duration it records.
      if (live.ending) continue;
      live.checksSincePost++;
      const account = byAccount.get(live.accountId);
      if (account) account.ids.push(id);
      else byAccount.set(live.accountId, { plan: live.plan, ids: [id] });
    }
    if (!byAccount.size) return;
    const paid = [...byAccount].filter(([, account]) => account.plan === 'paid').map(([id]) => id);
    const balances = new Map<number, number>();
    for (let i = 0; i < paid.length; i += BALANCES_PER_QUERY) {
      const rows = await this.db
        .selectFrom('accounts')
        .select(['id', 'balance_cents'])
        .where('id', 'in', paid.slice(i, i + BALANCES_PER_QUERY))
        .execute();
      for (const row of rows) balances.set(row.id, Number(row.balance_cents));
    }
    const work = [...byAccount];
    const worker = async () => {
      for (let next = work.shift(); next; next = work.shift()) {
        const [accountId, account] = next;
        try {
          if (account.plan === 'paid') await this.checkPaid(account.ids, balances.get(accountId) ?? 0, now);
          else await this.checkFree(accountId, account.ids, now);
        } catch (error) {
          this.logger.error({ err: error, account_id: accountId }, 'charging running sessions failed; the next check tries again');
        }
      }
    };
    await Promise.all(Array.from({ length: STEP_CONCURRENCY }, worker));
  }

  /** Posts an account's sessions that are due, or all of them when its balance could run out before the next check. */
  private async checkPaid(ids: string[], balanceCents: number, now: number): Promise<void> {
    const { pricePerMinute, premiumVoicePricePerMinute, chargeIntervalSeconds } = this.config;
    let owed = 0;
    let untilNextCheck = 0;
    for (const id of ids) {
      const live = this.live.get(id)!;
      const elapsed = Math.floor((now - live.startedAt) / 1000);
      owed += centsFor(elapsed, pricePerMinute) - centsFor(live.postedSeconds, pricePerMinute);
      owed += centsFor(Math.ceil(live.pendingVoicedMs / 1000), premiumVoicePricePerMinute);
      untilNextCheck += centsFor(elapsed + Math.ceil(chargeIntervalSeconds), pricePerMinute) - centsFor(elapsed, pricePerMinute);
    }
    const runningOut = balanceCents - owed <= untilNextCheck;
    const due = runningOut ? ids : ids.filter((id) => this.live.get(id)!.checksSincePost >= POST_EVERY_CHECKS);
    if (!due.length) return;
    const settled = await this.settle(due.map((id) => ({ sessionId: id, seconds: Math.floor((now - this.live.get(id)!.startedAt) / 1000) })));
    for (const [id, result] of settled) {
      if (result.ended) this.forget(id);
      else if (result.balanceCents <= 0) await this.endSession(id, 'insufficient_balance');
    }
  }

  /**
   * Meters a free account's sessions (each once every POST_EVERY_CHECKS checks), and ends them when
   * the month's free seconds are used. What is left is looked up again only when the account's
   * running sessions could have used it since the last look.
   */
  private async checkFree(accountId: number, ids: string[], now: number): Promise<void> {
    const due = ids.filter((id) => this.live.get(id)!.checksSincePost >= POST_EVERY_CHECKS);
    if (due.length) {
      const settled = await this.settle(due.map((id) => ({ sessionId: id, seconds: Math.floor((now - this.live.get(id)!.startedAt) / 1000) })));
      for (const [id, result] of settled) if (result.ended) this.forget(id);
    }
    const known = this.freeLeft.get(accountId);
    if (known) {
      const couldHaveUsed = (ids.length * (now - known.at)) / 1000;
      if (known.seconds - couldHaveUsed > 2 * ids.length * this.config.chargeIntervalSeconds) return;
    }
    const left = this.config.freeMonthlySeconds - (await this.hooks.secondsUsedThisMonth(accountId));
    this.freeLeft.set(accountId, { seconds: left, at: Date.now() });
    if (left <= 0) for (const id of ids) await this.endSession(id, 'free_minutes_exhausted');
  }

  /**
   * The session ended: its last post, billed by the second (every started second counts). Safe to
   * call more than once and from any node (the sessions end hook and the durable conversation-ended
   * job both call it).
   */
  async finish(sessionId: string, durationSeconds: number, endReason: string): Promise<void> {
    await this.opening.get(sessionId)?.catch(() => {});
    await this.settle([{ sessionId, seconds: billedSeconds(durationSeconds), end: true, endReason }]);
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
      this.logger.error({ err: error, session_id: sessionId, reason }, 'ending a session for billing failed; the next check tries again');
    }
  }

  /**
   * Moves each session's watermark to its `seconds` (never back) and charges the differences, with
   * the premium speech voiced since its last post, in one transaction: the meter rows locked in
   * order, then each account once. Answers, for each session with a meter (one that started before
   * billing existed has none), the balance after or that its meter had already ended.
   */
  private async settle(items: SettleItem[]): Promise<Map<string, Settled>> {
    const wanted = new Map(items.map((item) => [item.sessionId, item]));
    const voicedMs = new Map(items.map((item) => [item.sessionId, Math.round(this.live.get(item.sessionId)?.pendingVoicedMs ?? 0)]));
    const { settled, posted, charged } = await this.db.transaction().execute(async (trx) => {
      const settled = new Map<string, Settled>();
      const posted = new Map<string, number>();
      const rows = await trx
        .selectFrom('billing_sessions')
        .selectAll()
        .where('session_id', 'in', [...wanted.keys()])
        .orderBy('session_id')
        .forUpdate()
        .execute();
      const balances = new Map<number, number>();
      for (const accountId of [...new Set(rows.map((row) => row.account_id))].sort((a, b) => a - b))
        balances.set(accountId, (await lockBalance(trx, accountId)) ?? 0);
      const entries: EntryInput[] = [];
      for (const row of rows) {
        const item = wanted.get(row.session_id)!;
        if (row.ended_at) {
          settled.set(row.session_id, { balanceCents: balances.get(row.account_id)!, ended: true });
          continue;
        }
        const totalVoicedMs = Number(row.voiced_ms) + voicedMs.get(row.session_id)!;
        const newSeconds = Math.max(row.seconds, item.seconds);
        const voiceSeconds = Math.max(row.voice_seconds, row.premium ? (item.end ? Math.ceil(totalVoicedMs / 1000) : Math.floor(totalVoicedMs / 1000)) : 0);
        let taken = 0;
        if (row.plan === 'paid') {
          // Taken from the balance as far as it goes, never below zero; the entry notes any shortfall.
          const take = (kind: 'session' | 'premium_voice', dueCents: number, seconds: number) => {
            const balance = balances.get(row.account_id)!;
            const taking = Math.min(Math.max(0, dueCents), balance);
            balances.set(row.account_id, balance - taking);
            taken += taking;
            const note = taking < dueCents ? `${dueCents - taking} cents not taken: the balance ran out` : null;
            entries.push({
              accountId: row.account_id,
              sessionId: row.session_id,
              agentId: row.agent_id,
              voiceProvider: row.voice_provider,
              kind,
              amountCents: -taking,
              seconds,
              note,
            });
          };
          if (newSeconds > row.seconds)
            take('session', centsFor(newSeconds, this.config.pricePerMinute) - centsFor(row.seconds, this.config.pricePerMinute), newSeconds - row.seconds);
          if (voiceSeconds > row.voice_seconds)
            take(
              'premium_voice',
              centsFor(voiceSeconds, this.config.premiumVoicePricePerMinute) - centsFor(row.voice_seconds, this.config.premiumVoicePricePerMinute),
              voiceSeconds - row.voice_seconds,
            );
        }
        await trx
          .updateTable('billing_sessions')
          .set({
            seconds: newSeconds,
            voiced_ms: totalVoicedMs,
            voice_seconds: voiceSeconds,
            charged_cents: Number(row.charged_cents) + taken,
            ...(item.end && { ended_at: new Date(), end_reason: item.endReason ?? 'ended' }),
          })
          .where('session_id', '=', row.session_id)
          .execute();
        posted.set(row.session_id, newSeconds);
      }
      await postEntries(trx, entries);
      for (const row of rows) if (!settled.has(row.session_id)) settled.set(row.session_id, { balanceCents: balances.get(row.account_id)!, ended: false });
      return { settled, posted, charged: new Set(entries.map((entry) => entry.accountId)) };
    });
    for (const [id, seconds] of posted) {
      const live = this.live.get(id);
      if (!live) continue;
      live.pendingVoicedMs = Math.max(0, live.pendingVoicedMs - voicedMs.get(id)!);
      live.postedSeconds = seconds;
      live.checksSincePost = 0;
    }
    // The accounts' cached balances (embedded engine) are stale after a charge.
    for (const accountId of charged) this.accounts.forget(accountId);
    return settled;
  }
}

/**
 * The seconds a session of `durationSeconds` is billed: every started second of the duration the
 * session reports (to the millisecond), so one reported as 1.000 s is one second, not two because
 * it lasted 1.0004 s.
 */
export function billedSeconds(durationSeconds: number): number {
  const reported = Math.round(Math.max(0, durationSeconds) * 1000) / 1000;
  return Math.max(0, Math.ceil(reported - 1e-9));
}
