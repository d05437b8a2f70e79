/**
 * Stripe, through the official `stripe` client: Checkout Sessions for wallet top-ups, the customer
 * portal, and verification of Stripe's signed webhooks. `STRIPE_API_BASE` points the client at
 * another host speaking Stripe's API (tests run a local fake of its wire format).
 */
import type Stripe from 'stripe';

export interface CheckoutFacts {
  id: string;
  url: string | null;
  /** `paid` once the money is in (Stripe's `payment_status`). */
  paid: boolean;
  status: 'open' | 'complete' | 'expired';
  amountCents: number;
  currency: string;
  accountId: number | undefined;
  customerId: string | null;
}

function facts(session: Stripe.Checkout.Session): CheckoutFacts {
  const account = Number(session.metadata?.account_id ?? session.client_reference_id);
  return {
    id: session.id,
    url: session.url ?? null,
    paid: session.payment_status === 'paid',
    status: (session.status ?? 'open') as CheckoutFacts['status'],
    amountCents: Number(session.amount_total ?? 0),
    currency: String(session.currency ?? 'usd').toUpperCase(),
    accountId: Number.isInteger(account) ? account : undefined,
    customerId: typeof session.customer === 'string' ? session.customer : (session.customer?.id ?? null),
  };
}

export class StripePayments {
  /** The client library is loaded only by a server with STRIPE_SECRET_KEY: most never take payments. */
  static async create(secretKey: string, apiBase: string | undefined, webhookSecret: string | undefined): Promise<StripePayments> {
    const { default: StripeClient } = await import('stripe');
    const base = apiBase ? new URL(apiBase) : undefined;
    return new StripePayments(
      new StripeClient(secretKey, {
        maxNetworkRetries: 2,
        timeout: 20_000,
        appInfo: { name: 'Presence' },
        ...(base && {
          host: base.hostname,
          port: base.port || (base.protocol === 'https:' ? 443 : 80),
          protocol: base.protocol.replace(':', '') as 'http' | 'https',
        }),
      }),
      webhookSecret,
    );
  }

  private constructor(
    private readonly stripe: Stripe,
    private readonly webhookSecret: string | undefined,
  ) {}

  get webhooksEnabled(): boolean {
    return Boolean(this.webhookSecret);
  }

  async createCustomer(accountId: number, name: string): Promise<string> {
    const customer = await this.stripe.customers.create(
      { name, metadata: { account_id: String(accountId) } },
      { idempotencyKey: `presence-customer-${accountId}` },
    );
    return customer.id;
  }

  async createCheckout(input: {
    accountId: number;
    amountCents: number;
    currency: string;
    customerId: string;
    successUrl: string;
    cancelUrl: string;
  }): Promise<CheckoutFacts> {
    const session = await this.stripe.checkout.sessions.create({
      mode: 'payment',
      customer: input.customerId,
      client_reference_id: String(input.accountId),
      metadata: { account_id: String(input.accountId), purpose: 'wallet_topup' },
      line_items: [
        {
          quantity: 1,
          price_data: { currency: input.currency.toLowerCase(), unit_amount: input.amountCents, product_data: { name: 'Presence wallet top-up' } },
        },
      ],
      success_url: input.successUrl,
      cancel_url: input.cancelUrl,
    });
    return facts(session);
  }

  /** The Checkout Session, or undefined when Stripe does not know it. */
  async checkout(id: string): Promise<CheckoutFacts | undefined> {
    try {
      return facts(await this.stripe.checkout.sessions.retrieve(id));
    } catch (error) {
      if ((error as { statusCode?: number }).statusCode === 404) return undefined;
      throw error;
    }
  }

  async portal(customerId: string, returnUrl: string): Promise<string> {
    const session = await this.stripe.billingPortal.sessions.create({ customer: customerId, return_url: returnUrl });
    return session.url;
  }

  /**
   * A webhook's event, verified against its `Stripe-Signature` (throws on a bad or stale one).
   * Answers the completed checkout it reports, if it is one.
   */
  completedCheckout(rawBody: Buffer, signature: string): CheckoutFacts | undefined {
    const event = this.stripe.webhooks.constructEvent(rawBody, signature, this.webhookSecret!);
    if (event.type === 'checkout.session.completed' || event.type === 'checkout.session.async_payment_succeeded') {
      return facts(event.data.object as Stripe.Checkout.Session);
    }
    return undefined;
  }
}
