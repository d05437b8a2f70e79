/** Billing and usage routes (interface "Billing", "Usage and reports"; contract "Billing"). */
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { routeErrors, validationItem, ValidationFailed } from '../core/errors.js';
import type { BillingService } from './service.js';
import { billingErrors } from './errors.js';
import { monthOf } from '../core/money.js';
import {
  amountToCents,
  BillingSummaryResponse,
  ByAgentResponse,
  ConfirmQuery,
  ConfirmResponse,
  LineItemsQuery,
  LineItemsResponse,
  MAX_TOPUP_CENTS,
  MIN_TOPUP_CENTS,
  MonthlyQuery,
  MonthlyResponse,
  MonthQuery,
  PlanResponse,
  PortalResponse,
  TopupRequest,
  TopupResponse,
  UsageSummaryResponse,
  VoiceResponse,
  WalletResponse,
} from './schemas.js';

export function billingRoutes(server: FastifyInstance, billing: BillingService): void {
  const app = server.withTypeProvider<ZodTypeProvider>();
  const tags = ['Billing'];
  const month = (m: string | undefined) => m ?? monthOf(new Date());

  app.get(
    '/v1/usage/summary',
    {
      schema: {
        tags: ['Usage and reports'],
        summary: "This month's usage: session seconds, free minutes left, charges",
        response: { 200: UsageSummaryResponse },
      },
    },
    async (request) => billing.usage(request.principal.accountId),
  );

  app.get(
    '/v1/billing/summary',
    { schema: { tags, summary: "A month's charges, top-ups and adjustments", querystring: MonthQuery, response: { 200: BillingSummaryResponse } } },
    async (request) => billing.summary(request.principal.accountId, month(request.query.month)),
  );

  app.get(
    '/v1/billing/by-agent',
    { schema: { tags, summary: "A month's charges per agent", querystring: MonthQuery, response: { 200: ByAgentResponse } } },
    async (request) => billing.byAgent(request.principal.accountId, month(request.query.month)),
  );

  app.get(
    '/v1/billing/voice',
    { schema: { tags, summary: "A month's premium speech per voice provider", querystring: MonthQuery, response: { 200: VoiceResponse } } },
    async (request) => billing.voice(request.principal.accountId, month(request.query.month)),
  );

  app.get(
    '/v1/billing/monthly',
    { schema: { tags, summary: 'The last N months (this one first)', querystring: MonthlyQuery, response: { 200: MonthlyResponse } } },
    async (request) => billing.monthly(request.principal.accountId, request.query.limit),
  );

  app.get(
    '/v1/billing/line-items',
    { schema: { tags, summary: "A month's line items, paged", querystring: LineItemsQuery, response: { 200: LineItemsResponse } } },
    async (request) => {
      const q = request.query;
      return billing.lineItems(request.principal.accountId, month(q.month), q.limit, q.offset);
    },
  );

  app.get(
    '/v1/billing/export/line-items',
    {
      schema: {
        tags,
        summary: "A month's line items as CSV (text/csv, streamed)",
        querystring: MonthQuery,
        produces: ['text/csv'],
        response: { 200: z.string().describe('CSV: id,session_id,agent_id,kind,seconds,amount,created_at') },
      },
    },
    async (request, reply) => {
      const m = month(request.query.month);
      reply.header('content-type', 'text/csv; charset=utf-8').header('content-disposition', `attachment; filename="line-items-${m}.csv"`);
      // A stream skips the JSON serializer; the schema above is for the OpenAPI document.
      return reply.send(Readable.from(billing.lineItemsCsv(request.principal.accountId, m)) as unknown as string);
    },
  );

  app.get(
    '/v1/billing/wallet',
    { schema: { tags, summary: 'The wallet: balance, currency, recent credits', response: { 200: WalletResponse } } },
    async (request) => billing.wallet(request.principal.accountId),
  );

  app.post(
    '/v1/billing/wallet/topup',
    {
      config: routeErrors(billingErrors.payments_not_configured),
      schema: { tags, summary: 'Open a Stripe Checkout to add money to the wallet', body: TopupRequest, response: { 200: TopupResponse } },
    },
    async (request) => {
      const cents = amountToCents(request.body.amount);
      if (cents === undefined)
        throw new ValidationFailed([
          validationItem(['body', 'amount'], 'Value error, amount must be a decimal amount with at most two places, like "25.00"', request.body.amount),
        ]);
      if (cents < MIN_TOPUP_CENTS || cents > MAX_TOPUP_CENTS) {
        throw new ValidationFailed([validationItem(['body', 'amount'], 'Value error, amount must be from 1.00 to 10000.00', request.body.amount)]);
      }
      return billing.topup(request.principal.accountId, cents, { successUrl: request.body.success_url, cancelUrl: request.body.cancel_url });
    },
  );

  app.get(
    '/v1/billing/wallet/topup/confirm',
    {
      config: routeErrors(billingErrors.checkout_not_found, billingErrors.payments_not_configured),
      schema: {
        tags,
        summary: 'Confirm a top-up: credits the wallet once when the checkout is paid (idempotent)',
        querystring: ConfirmQuery,
        response: { 200: ConfirmResponse },
      },
    },
    async (request) => billing.confirm(request.principal.accountId, request.query.checkout_session_id),
  );

  app.post(
    '/v1/billing/wallet/portal',
    {
      config: routeErrors(billingErrors.payments_not_configured),
      schema: { tags, summary: "A link to Stripe's customer portal (invoices, payment methods)", response: { 200: PortalResponse } },
    },
    async (request) => billing.portal(request.principal.accountId),
  );

  app.get('/v1/billing/plan', { schema: { tags, summary: "The plan, its limits and this month's use", response: { 200: PlanResponse } } }, async (request) =>
    billing.plan(request.principal.accountId),
  );

  // Stripe's webhook: no API key (Stripe signs it), and the raw body, which the signature covers.
  void server.register(async (scope) => {
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    scope.post(
      '/v1/billing/stripe/webhook',
      {
        config: { public: true, ...routeErrors(billingErrors.payments_not_configured, billingErrors.webhooks_not_configured, billingErrors.invalid_signature) },
        schema: {
          tags,
          summary: "Stripe's signed webhook (checkout.session.completed credits the wallet once)",
          security: [],
          response: { 200: z.object({ received: z.literal(true), credited: z.boolean() }) },
        } as object,
      },
      async (request) => {
        const signature = request.headers['stripe-signature'];
        return billing.webhook(
          Buffer.isBuffer(request.body) ? request.body : Buffer.from(String(request.body ?? '')),
          typeof signature === 'string' ? signature : undefined,
        );
      },
    );
  });
}
