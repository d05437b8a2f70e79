/**
 * Billing's answers: the wallet, the month's summary, charges by agent and by premium voice
 * provider, month by month, line items (and their CSV), the plan and its use, and wallet top-ups
 * through Stripe Checkout (credited once per checkout, by the confirm route or Stripe's webhook).
 * Everything is read from billing's own tables: the ledger and the session meters.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../core/db/schema.js';
import type { Config } from '../core/config.js';
import type { AccountStore } from '../accounts/accounts.js';
import { postEntry } from './ledger.js';
import { CURRENCY, formatCents, formatPrice, monthOf } from '../core/money.js';
import type { CheckoutFacts, StripePayments } from './stripe.js';
import './tables.js';
import { billingErrors } from './errors.js';

export interface BillingHooks {
  /** The agent's current name (undefined once deleted). */
  agentName(agentId: number): Promise<string | undefined>;
  /** How many agents the account has. */
  agentCount(accountId: number): Promise<number>;
  /** Session seconds the account used this calendar month, running sessions included. */
  secondsUsedThisMonth(accountId: number): Promise<number>;
}

const paymentsNotConfigured = () => billingErrors.payments_not_configured();

/** The last `count` months ending with `month`, newest first. */
export function monthsBack(month: string, count: number): string[] {
  let [year, m] = month.split('-').map(Number);
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    out.push(`${year}-${String(m).padStart(2, '0')}`);
    if (--m === 0) {
      m = 12;
      year--;
    }
  }
  return out;
}

const cents = (value: unknown) => Number(value ?? 0);
const money = (value: unknown) => formatCents(cents(value));
const minutes = (seconds: number) => Math.round((seconds / 60) * 100) / 100;

export interface LineItem {
  id: number;
  session_id: string;
  agent_id: number | null;
  kind: 'session' | 'premium_voice';
  seconds: number;
  amount: string;
  created_at: string;
}

export class BillingService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly config: Config,
    private readonly accounts: AccountStore,
    private readonly hooks: BillingHooks,
    private readonly stripe: StripePayments | undefined,
  ) {}

  get paymentsEnabled(): boolean {
    return Boolean(this.stripe);
  }

  private prices() {
    return {
      currency: CURRENCY,
      price_per_minute: formatPrice(this.config.billing.pricePerMinute),
      premium_voice_price_per_minute: formatPrice(this.config.billing.premiumVoicePricePerMinute),
    };
  }

  async wallet(accountId: number) {
    const account = await this.accounts.require(accountId);
    const credits = await this.db
      .selectFrom('ledger_entries')
      .select(['id', 'kind', 'amount_cents', 'reference', 'note', 'created_at'])
      .where('account_id', '=', accountId)
      .where('kind', 'in', ['topup', 'adjustment'])
      .orderBy('id', 'desc')
      .limit(20)
      .execute();
    return {
      balance: account.balance,
      plan: account.plan,
      payments_enabled: this.paymentsEnabled,
      ...this.prices(),
      recent_credits: credits.map((c) => ({
        id: Number(c.id),
        kind: c.kind as 'topup' | 'adjustment',
        amount: money(c.amount_cents),
        checkout_session_id: c.kind === 'topup' ? c.reference : null,
        note: c.note,
        created_at: new Date(c.created_at).toISOString(),
      })),
    };
  }

  /** Sums of the month's entries by kind, and the sessions metered in it. */
  private async totals(accountId: number, month: string) {
    const byKind = await this.db
      .selectFrom('ledger_entries')
      .select(['kind', sql<string>`SUM(amount_cents)`.as('amount'), sql<string>`SUM(seconds)`.as('seconds')])
      .where('account_id', '=', accountId)
      .where('month', '=', month)
      .groupBy('kind')
      .execute();
    const kind = (k: string) => byKind.find((r) => r.kind === k);
    const meters = await this.db
      .selectFrom('billing_sessions')
      .select([sql<string>`COUNT(*)`.as('sessions'), sql<string>`COALESCE(SUM(seconds), 0)`.as('seconds')])
      .where('account_id', '=', accountId)
      .where('month', '=', month)
      .executeTakeFirstOrThrow();
    const sessionCents = -cents(kind('session')?.amount);
    const voiceCents = -cents(kind('premium_voice')?.amount);
    return {
      sessions: Number(meters.sessions),
      metered_seconds: Number(meters.seconds),
      charged_session_seconds: Number(kind('session')?.seconds ?? 0),
      session_cents: sessionCents,
      premium_voice_seconds: Number(kind('premium_voice')?.seconds ?? 0),
      premium_voice_cents: voiceCents,
      topup_cents: cents(kind('topup')?.amount),
      adjustment_cents: cents(kind('adjustment')?.amount),
    };
  }

  async summary(accountId: number, month = monthOf(new Date())) {
    const account = await this.accounts.require(accountId);
    const t = await this.totals(accountId, month);
    return {
      month,
      plan: account.plan,
      ...this.prices(),
      sessions: t.sessions,
      session_seconds: t.metered_seconds,
      session_minutes: minutes(t.metered_seconds),
      charged_session_seconds: t.charged_session_seconds,
      session_amount: formatCents(t.session_cents),
      premium_voice_seconds: t.premium_voice_seconds,
      premium_voice_amount: formatCents(t.premium_voice_cents),
      total_charged: formatCents(t.session_cents + t.premium_voice_cents),
      topups: formatCents(t.topup_cents),
      adjustments: formatCents(t.adjustment_cents),
      balance: account.balance,
    };
  }

  async byAgent(accountId: number, month = monthOf(new Date())) {
    const rows = await this.db
      .selectFrom('ledger_entries')
      .select([
        'agent_id',
        sql<string>`COUNT(DISTINCT session_id)`.as('sessions'),
        sql<string>`COALESCE(SUM(seconds) FILTER (WHERE kind = 'session'), 0)`.as('seconds'),
        sql<string>`COALESCE(SUM(-amount_cents) FILTER (WHERE kind = 'session'), 0)`.as('session_cents'),
        sql<string>`COALESCE(SUM(seconds) FILTER (WHERE kind = 'premium_voice'), 0)`.as('voice_seconds'),
        sql<string>`COALESCE(SUM(-amount_cents) FILTER (WHERE kind = 'premium_voice'), 0)`.as('voice_cents'),
      ])
      .where('account_id', '=', accountId)
      .where('month', '=', month)
      .where('kind', 'in', ['session', 'premium_voice'])
      .groupBy('agent_id')
      .orderBy(sql`SUM(-amount_cents)`, 'desc')
      .orderBy('agent_id')
      .execute();
    const agents = await Promise.all(
      rows.map(async (r) => ({
        agent_id: r.agent_id,
        agent_name: r.agent_id === null ? null : ((await this.hooks.agentName(r.agent_id)) ?? null),
        sessions: Number(r.sessions),
        session_seconds: Number(r.seconds),
        session_amount: money(r.session_cents),
        premium_voice_seconds: Number(r.voice_seconds),
        premium_voice_amount: money(r.voice_cents),
        total: formatCents(cents(r.session_cents) + cents(r.voice_cents)),
      })),
    );
    return { month, currency: CURRENCY, agents };
  }

  async voice(accountId: number, month = monthOf(new Date())) {
    const rows = await this.db
      .selectFrom('ledger_entries')
      .select([
        'voice_provider',
        sql<string>`COUNT(DISTINCT session_id)`.as('sessions'),
        sql<string>`SUM(seconds)`.as('seconds'),
        sql<string>`SUM(-amount_cents)`.as('cents'),
      ])
      .where('account_id', '=', accountId)
      .where('month', '=', month)
      .where('kind', '=', 'premium_voice')
      .groupBy('voice_provider')
      .orderBy('voice_provider')
      .execute();
    const providers = rows.map((r) => ({
      provider: r.voice_provider ?? 'unknown',
      sessions: Number(r.sessions),
      seconds: Number(r.seconds),
      minutes: minutes(Number(r.seconds)),
      amount: money(r.cents),
    }));
    return {
      month,
      currency: CURRENCY,
      premium_voice_price_per_minute: formatPrice(this.config.billing.premiumVoicePricePerMinute),
      providers,
      total: formatCents(rows.reduce((a, r) => a + cents(r.cents), 0)),
    };
  }

  async monthly(accountId: number, limit: number) {
    const months = monthsBack(monthOf(new Date()), limit);
    const rows = await this.db
      .selectFrom('ledger_entries')
      .select([
        'month',
        sql<string>`COALESCE(SUM(seconds) FILTER (WHERE kind = 'session'), 0)`.as('seconds'),
        sql<string>`COALESCE(SUM(-amount_cents) FILTER (WHERE kind = 'session'), 0)`.as('session_cents'),
        sql<string>`COALESCE(SUM(seconds) FILTER (WHERE kind = 'premium_voice'), 0)`.as('voice_seconds'),
        sql<string>`COALESCE(SUM(-amount_cents) FILTER (WHERE kind = 'premium_voice'), 0)`.as('voice_cents'),
        sql<string>`COALESCE(SUM(amount_cents) FILTER (WHERE kind = 'topup'), 0)`.as('topup_cents'),
      ])
      .where('account_id', '=', accountId)
      .where('month', 'in', months)
      .groupBy('month')
      .execute();
    const meters = await this.db
      .selectFrom('billing_sessions')
      .select(['month', sql<string>`COUNT(*)`.as('sessions'), sql<string>`SUM(seconds)`.as('seconds')])
      .where('account_id', '=', accountId)
      .where('month', 'in', months)
      .groupBy('month')
      .execute();
    return {
      currency: CURRENCY,
      months: months.map((month) => {
        const r = rows.find((x) => x.month === month);
        const m = meters.find((x) => x.month === month);
        return {
          month,
          sessions: Number(m?.sessions ?? 0),
          session_seconds: Number(m?.seconds ?? 0),
          charged_session_seconds: Number(r?.seconds ?? 0),
          session_amount: money(r?.session_cents),
          premium_voice_seconds: Number(r?.voice_seconds ?? 0),
          premium_voice_amount: money(r?.voice_cents),
          total_charged: formatCents(cents(r?.session_cents) + cents(r?.voice_cents)),
          topups: money(r?.topup_cents),
        };
      }),
    };
  }

  /** One line per session and kind of charge in the month (a running session's steps summed), newest first. */
  private lineItemsQuery(accountId: number, month: string) {
    return this.db
      .selectFrom('ledger_entries')
      .where('account_id', '=', accountId)
      .where('month', '=', month)
      .where('kind', 'in', ['session', 'premium_voice'])
      .groupBy(['session_id', 'kind']);
  }

  async lineItems(
    accountId: number,
    month: string,
    limit: number,
    offset: number,
  ): Promise<{ items: LineItem[]; total: number; limit: number; offset: number; month: string; currency: typeof CURRENCY }> {
    const rows = await this.lineItemsPage(accountId, month, limit, offset);
    const total = await this.db
      .selectFrom(this.lineItemsQuery(accountId, month).select('session_id').as('lines'))
      .select(sql<string>`COUNT(*)`.as('n'))
      .executeTakeFirstOrThrow();
    return { items: rows, total: Number(total.n), limit, offset, month, currency: CURRENCY };
  }

  async lineItemsPage(accountId: number, month: string, limit: number, offset: number): Promise<LineItem[]> {
    const rows = await this.lineItemsQuery(accountId, month)
      .select([
        sql<string>`MIN(id)`.as('id'),
        'session_id',
        sql<number>`MIN(agent_id)`.as('agent_id'),
        'kind',
        sql<string>`SUM(seconds)`.as('seconds'),
        sql<string>`SUM(-amount_cents)`.as('cents'),
        sql<Date>`MIN(created_at)`.as('created_at'),
      ])
      .orderBy(sql`MIN(id)`, 'desc')
      .limit(limit)
      .offset(offset)
      .execute();
    return rows.map((r) => ({
      id: Number(r.id),
      session_id: r.session_id!,
      agent_id: r.agent_id === null ? null : Number(r.agent_id),
      kind: r.kind as LineItem['kind'],
      seconds: Number(r.seconds),
      amount: money(r.cents),
      created_at: new Date(r.created_at).toISOString(),
    }));
  }

  /** The month's line items as CSV lines (header first), read page by page: memory stays flat. */
  async *lineItemsCsv(accountId: number, month: string): AsyncGenerator<string> {
    yield 'id,session_id,agent_id,kind,seconds,amount,created_at\n';
    const page = 1000;
    for (let offset = 0; ; offset += page) {
      const rows = await this.lineItemsPage(accountId, month, page, offset);
      if (rows.length) yield rows.map((r) => `${r.id},${r.session_id},${r.agent_id ?? ''},${r.kind},${r.seconds},${r.amount},${r.created_at}\n`).join('');
      if (rows.length < page) return;
    }
  }

  async plan(accountId: number) {
    const account = await this.accounts.require(accountId);
    const month = monthOf(new Date());
    const [used, agents, running] = await Promise.all([
      this.hooks.secondsUsedThisMonth(accountId),
      this.hooks.agentCount(accountId),
      this.db
        .selectFrom('billing_sessions')
        .select(sql<string>`COUNT(*)`.as('n'))
        .where('account_id', '=', accountId)
        .where('ended_at', 'is', null)
        .executeTakeFirstOrThrow(),
    ]);
    const free = account.plan === 'free';
    const seconds = Math.round(used);
    return {
      plan: account.plan,
      ...this.prices(),
      limits: {
        agents: free ? 1 : null,
        premium_voices: !free,
        monthly_session_seconds: free ? this.config.freeMonthlySeconds : null,
        running_sessions: free ? 1 : null,
        max_session_seconds: free ? this.config.freeSessionSeconds : null,
      },
      usage: {
        month,
        session_seconds: seconds,
        session_minutes: minutes(seconds),
        free_seconds_remaining: free ? Math.max(0, this.config.freeMonthlySeconds - seconds) : null,
        agents,
        running_sessions: Number(running.n),
      },
      balance: account.balance,
    };
  }

  /** Usage at a glance for /v1/usage/summary: this month's metered seconds and charges. */
  async usage(accountId: number) {
    const account = await this.accounts.require(accountId);
    const month = monthOf(new Date());
    const t = await this.totals(accountId, month);
    const used = Math.round(await this.hooks.secondsUsedThisMonth(accountId));
    const free = account.plan === 'free';
    return {
      month,
      plan: account.plan,
      sessions: t.sessions,
      session_seconds: used,
      session_minutes: minutes(used),
      free_seconds_included: free ? this.config.freeMonthlySeconds : null,
      free_seconds_remaining: free ? Math.max(0, this.config.freeMonthlySeconds - used) : null,
      premium_voice_seconds: t.premium_voice_seconds,
      charged: formatCents(t.session_cents + t.premium_voice_cents),
      balance: account.balance,
      currency: CURRENCY,
    };
  }

  // ---- Stripe ----

  private requireStripe(): StripePayments {
    if (!this.stripe) throw paymentsNotConfigured();
    return this.stripe;
  }

  private async customerFor(accountId: number): Promise<string> {
    const stripe = this.requireStripe();
    const known = await this.db.selectFrom('billing_customers').select('stripe_customer_id').where('account_id', '=', accountId).executeTakeFirst();
    if (known) return known.stripe_customer_id;
    const account = await this.accounts.require(accountId);
    const id = await stripe.createCustomer(accountId, account.name);
    await this.db
      .insertInto('billing_customers')
      .values({ account_id: accountId, stripe_customer_id: id })
      .onConflict((oc) => oc.column('account_id').doNothing())
      .execute();
    return (await this.db.selectFrom('billing_customers').select('stripe_customer_id').where('account_id', '=', accountId).executeTakeFirstOrThrow())
      .stripe_customer_id;
  }

  async topup(accountId: number, amountCents: number, urls: { successUrl?: string; cancelUrl?: string }) {
    const stripe = this.requireStripe();
    const customerId = await this.customerFor(accountId);
    const base = this.config.publicUrl;
    const checkout = await stripe.createCheckout({
      accountId,
      amountCents,
      currency: CURRENCY,
      customerId,
      successUrl: urls.successUrl ?? `${base}/?topup=done&checkout_session_id={CHECKOUT_SESSION_ID}`,
      cancelUrl: urls.cancelUrl ?? `${base}/?topup=cancelled`,
    });
    await this.db.insertInto('billing_checkouts').values({ id: checkout.id, account_id: accountId, amount_cents: amountCents }).execute();
    return { checkout_session_id: checkout.id, url: checkout.url, amount: formatCents(amountCents), currency: CURRENCY };
  }

  /** Confirms a top-up: credits the wallet once when Stripe says the checkout is paid. */
  async confirm(accountId: number, checkoutSessionId: string) {
    const stripe = this.requireStripe();
    const mine = await this.db
      .selectFrom('billing_checkouts')
      .selectAll()
      .where('id', '=', checkoutSessionId)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    if (!mine) throw billingErrors.checkout_not_found(`No top-up checkout ${checkoutSessionId} in this account`);
    const checkout = await stripe.checkout(checkoutSessionId);
    if (!checkout) throw billingErrors.checkout_not_found(`Stripe does not know checkout ${checkoutSessionId}`);
    const credited = checkout.paid ? await this.credit(checkout) : false;
    const row = await this.db.selectFrom('billing_checkouts').select(['status', 'amount_cents']).where('id', '=', checkoutSessionId).executeTakeFirstOrThrow();
    const account = await this.accounts.require(accountId);
    return {
      checkout_session_id: checkoutSessionId,
      status: row.status === 'credited' ? ('credited' as const) : checkout.status === 'expired' ? ('expired' as const) : ('open' as const),
      paid: checkout.paid,
      credited_now: credited,
      amount: money(row.amount_cents),
      balance: account.balance,
      currency: CURRENCY,
    };
  }

  /** Stripe's signed webhook: a completed, paid checkout credits its wallet (once). */
  async webhook(rawBody: Buffer, signature: string | undefined): Promise<{ received: true; credited: boolean }> {
    const stripe = this.requireStripe();
    if (!stripe.webhooksEnabled) throw billingErrors.webhooks_not_configured();
    let checkout: CheckoutFacts | undefined;
    try {
      checkout = stripe.completedCheckout(rawBody, signature ?? '');
    } catch (error) {
      throw billingErrors.invalid_signature(`The Stripe-Signature does not verify: ${(error as Error).message}`);
    }
    return { received: true, credited: checkout?.paid ? await this.credit(checkout) : false };
  }

  /**
   * Credits a paid checkout to the account that opened it, once: the checkout row is locked and
   * marked in the same transaction as the ledger entry (whose reference is also unique).
   */
  private async credit(checkout: CheckoutFacts): Promise<boolean> {
    const credited = await this.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('billing_checkouts').selectAll().where('id', '=', checkout.id).forUpdate().executeTakeFirst();
      if (!row || row.status === 'credited') return undefined;
      if (checkout.accountId !== undefined && checkout.accountId !== row.account_id) return undefined;
      // What Stripe collected is what is credited (it is the amount the checkout asked for).
      const amount = checkout.amountCents || cents(row.amount_cents);
      await postEntry(trx, { accountId: row.account_id, kind: 'topup', amountCents: amount, reference: checkout.id, note: 'Stripe Checkout' });
      await trx
        .updateTable('billing_checkouts')
        .set({ status: 'credited', credited_at: new Date(), amount_cents: amount })
        .where('id', '=', checkout.id)
        .execute();
      return row.account_id;
    });
    if (credited === undefined) return false;
    this.accounts.forget(credited);
    return true;
  }

  async portal(accountId: number, returnUrl?: string) {
    const stripe = this.requireStripe();
    const customerId = await this.customerFor(accountId);
    return { url: await stripe.portal(customerId, returnUrl ?? `${this.config.publicUrl}/`) };
  }
}
