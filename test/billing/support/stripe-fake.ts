/**
 * A local Stripe: the few API endpoints Presence calls (customers, Checkout Sessions, billing portal
 * sessions) in Stripe's wire format (form-encoded requests with bracket keys, JSON objects, the
 * error envelope), for the real `stripe` client to talk to. `pay()` marks a checkout paid as a
 * payer would, and `signedEvent()` makes a webhook body signed exactly as Stripe signs them.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import Stripe from 'stripe';

export const FAKE_SECRET_KEY = 'sk_test_presencefake';
export const FAKE_WEBHOOK_SECRET = 'whsec_presencefaketestsecret';

type Form = Record<string, any>;

/** `line_items[0][price_data][unit_amount]=500` → nested objects and arrays, as Stripe reads them. */
function parseForm(body: string): Form {
  const out: Form = {};
  for (const [key, value] of new URLSearchParams(body)) {
    const parts = key.replace(/\]/g, '').split('[');
    let node: any = out;
    parts.forEach((part, i) => {
      if (i === parts.length - 1) node[part] = value;
      else node = node[part] ??= /^\d+$/.test(parts[i + 1]) ? [] : {};
    });
  }
  return out;
}

const id = (prefix: string) => `${prefix}_${crypto.randomBytes(12).toString('hex')}`;

export class StripeFake {
  readonly checkouts = new Map<string, any>();
  readonly customers = new Map<string, any>();
  readonly requests: Array<{ method: string; path: string; form: Form; idempotencyKey?: string }> = [];
  private server!: http.Server;
  url = '';

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => this.handle(req, res, body));
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
  }

  stop(): Promise<void> {
    // The stripe client keeps connections alive; close them too, or close() waits for ever.
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    return closed;
  }

  private send(res: http.ServerResponse, status: number, body: unknown): void {
    res.writeHead(status, { 'content-type': 'application/json', 'request-id': id('req') });
    res.end(JSON.stringify(body));
  }

  private error(res: http.ServerResponse, status: number, type: string, message: string, extra: Form = {}): void {
    this.send(res, status, { error: { type, message, ...extra } });
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse, body: string): void {
    const path = (req.url ?? '').split('?')[0];
    const form = parseForm(req.method === 'GET' ? ((req.url ?? '').split('?')[1] ?? '') : body);
    this.requests.push({ method: req.method!, path, form, idempotencyKey: req.headers['idempotency-key'] as string | undefined });
    if (req.headers.authorization !== `Bearer ${FAKE_SECRET_KEY}`) {
      return this.error(res, 401, 'invalid_request_error', 'Invalid API Key provided');
    }
    if (req.method === 'POST' && path === '/v1/customers') {
      const customer = {
        id: id('cus'),
        object: 'customer',
        name: form.name ?? null,
        metadata: form.metadata ?? {},
        created: Math.floor(Date.now() / 1000),
        livemode: false,
      };
      this.customers.set(customer.id, customer);
      return this.send(res, 200, customer);
    }
    if (req.method === 'POST' && path === '/v1/checkout/sessions') {
      const item = form.line_items?.[0];
      const amount = Number(item?.price_data?.unit_amount) * Number(item?.quantity ?? 1);
      if (!Number.isInteger(amount) || amount < 50) return this.error(res, 400, 'invalid_request_error', 'Invalid line_items', { param: 'line_items' });
      if (!form.success_url)
        return this.error(res, 400, 'invalid_request_error', 'Missing required param: success_url.', { param: 'success_url', code: 'parameter_missing' });
      const sid = `cs_test_${crypto.randomBytes(24).toString('hex')}`;
      const session = {
        id: sid,
        object: 'checkout.session',
        mode: form.mode,
        status: 'open',
        payment_status: 'unpaid',
        amount_total: amount,
        amount_subtotal: amount,
        currency: item.price_data.currency,
        customer: form.customer ?? null,
        client_reference_id: form.client_reference_id ?? null,
        metadata: form.metadata ?? {},
        success_url: form.success_url,
        cancel_url: form.cancel_url ?? null,
        url: `https://checkout.stripe.com/c/pay/${sid}`,
        created: Math.floor(Date.now() / 1000),
        livemode: false,
      };
      this.checkouts.set(sid, session);
      return this.send(res, 200, session);
    }
    const retrieve = /^\/v1\/checkout\/sessions\/([^/]+)$/.exec(path);
    if (req.method === 'GET' && retrieve) {
      const session = this.checkouts.get(decodeURIComponent(retrieve[1]));
      if (!session)
        return this.error(res, 404, 'invalid_request_error', `No such checkout.session: '${retrieve[1]}'`, { code: 'resource_missing', param: 'session' });
      return this.send(res, 200, session);
    }
    if (req.method === 'POST' && path === '/v1/billing_portal/sessions') {
      if (!this.customers.has(form.customer))
        return this.error(res, 400, 'invalid_request_error', `No such customer: '${form.customer}'`, { code: 'resource_missing', param: 'customer' });
      const sid = id('bps');
      return this.send(res, 200, {
        id: sid,
        object: 'billing_portal.session',
        customer: form.customer,
        return_url: form.return_url ?? null,
        url: `https://billing.stripe.com/p/session/${sid}`,
        livemode: false,
      });
    }
    this.error(res, 404, 'invalid_request_error', `Unrecognized request URL (${req.method}: ${path}).`);
  }

  /** The payer paid the checkout. */
  pay(checkoutId: string): any {
    const session = this.checkouts.get(checkoutId);
    session.status = 'complete';
    session.payment_status = 'paid';
    return session;
  }

  /** A `checkout.session.completed` webhook body and its `Stripe-Signature` header. */
  signedEvent(checkoutId: string, secret = FAKE_WEBHOOK_SECRET): { payload: string; signature: string } {
    const payload = JSON.stringify({
      id: id('evt'),
      object: 'event',
      api_version: '2025-10-29.clover',
      created: Math.floor(Date.now() / 1000),
      type: 'checkout.session.completed',
      livemode: false,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
      data: { object: this.checkouts.get(checkoutId) },
    });
    return { payload, signature: Stripe.webhooks.generateTestHeaderString({ payload, secret }) };
  }
}
