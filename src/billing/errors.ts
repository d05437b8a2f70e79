/** The errors the billing capability answers with (code, HTTP status, message); see `errorCatalogue`. */
import { errorCatalogue } from '../core/errors.js';

export const billingErrors = errorCatalogue('billing', {
  checkout_not_found: { status: 404, summary: 'No such top-up checkout in this account' },
  invalid_signature: { status: 400, summary: 'The Stripe-Signature does not verify: …' },
  payments_not_configured: {
    status: 503,
    message: 'Payments are not configured on this deployment (STRIPE_SECRET_KEY is unset); an operator credits wallets with `presence accounts set --balance`',
  },
  webhooks_not_configured: { status: 503, message: 'STRIPE_WEBHOOK_SECRET is unset: Stripe webhooks are not accepted' },
});
