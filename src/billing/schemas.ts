/** Request and answer schemas of the billing and usage routes (they also feed the OpenAPI document). */
import { z } from 'zod';

const MONTH_PATTERN = '^\\d{4}-(0[1-9]|1[0-2])$';
export const Month = z
  .string()
  .regex(new RegExp(MONTH_PATTERN), { message: `String should match pattern '${MONTH_PATTERN}'` })
  .describe('YYYY-MM (UTC); default the current month');
const Money = z.string().describe('Decimal with two places, e.g. "25.00"');

export const MonthQuery = z.object({ month: Month.optional() });
export const MonthlyQuery = z.object({ limit: z.coerce.number().int().min(1).max(60).default(12) });
export const LineItemsQuery = z.object({
  month: Month.optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  offset: z.coerce.number().int().min(0).default(0),
});
export const ConfirmQuery = z.object({ checkout_session_id: z.string().min(10).max(255) });

/** Top-ups from 1.00 to 10,000.00, given as "25.00" or 25. */
export const MIN_TOPUP_CENTS = 100;
export const MAX_TOPUP_CENTS = 1_000_000;
export const TopupRequest = z
  .object({
    // A number is read as its decimal text, so 25 and "25.00" are the same amount.
    amount: z
      .preprocess((v) => (typeof v === 'number' ? String(v) : v), z.string().max(32))
      .describe('Amount to add, 1.00 to 10000.00, as "25.00" (or the number 25)'),
    success_url: z
      .url({ protocol: /^https?$/ })
      .max(2000)
      .optional()
      .describe('Where Stripe sends the payer after paying; may contain {CHECKOUT_SESSION_ID}'),
    cancel_url: z
      .url({ protocol: /^https?$/ })
      .max(2000)
      .optional(),
  })
  .strict()
  .meta({ id: 'TopupRequest' });

/** "25.00" or 25 → 2500; undefined when it is not an amount of at most two decimals. */
export function amountToCents(amount: string | number): number | undefined {
  const text = typeof amount === 'number' ? (Number.isFinite(amount) ? String(amount) : '') : amount.trim();
  if (!/^\d{1,7}(\.\d{1,2})?$/.test(text)) return undefined;
  const [whole, frac = ''] = text.split('.');
  return Number(whole) * 100 + Number(frac.padEnd(2, '0'));
}

const Prices = {
  currency: z.literal('USD'),
  price_per_minute: Money,
  premium_voice_price_per_minute: Money,
};

export const WalletResponse = z
  .object({
    balance: Money,
    currency: z.literal('USD'),
    plan: z.enum(['free', 'paid']),
    payments_enabled: z.boolean().describe('Whether top-ups through Stripe are available'),
    price_per_minute: Money,
    premium_voice_price_per_minute: Money,
    recent_credits: z
      .array(
        z.object({
          id: z.number().int(),
          kind: z.enum(['topup', 'adjustment']),
          amount: Money,
          checkout_session_id: z.string().nullable(),
          note: z.string().nullable(),
          created_at: z.string(),
        }),
      )
      .describe('The last 20 top-ups and operator adjustments, newest first'),
  })
  .meta({ id: 'WalletResponse' });

export const BillingSummaryResponse = z
  .object({
    month: z.string(),
    plan: z.enum(['free', 'paid']),
    ...Prices,
    sessions: z.number().int().describe('Sessions started in the month'),
    session_seconds: z.number().int().describe('Metered seconds of those sessions (every plan)'),
    session_minutes: z.number(),
    charged_session_seconds: z.number().int().describe('Seconds charged to the wallet in the month'),
    session_amount: Money,
    premium_voice_seconds: z.number().int(),
    premium_voice_amount: Money,
    total_charged: Money,
    topups: Money,
    adjustments: Money.describe('Operator credits (negative when an operator lowered the balance)'),
    balance: Money,
  })
  .meta({ id: 'BillingSummaryResponse' });

export const ByAgentResponse = z
  .object({
    month: z.string(),
    currency: z.literal('USD'),
    agents: z.array(
      z.object({
        agent_id: z.number().int().nullable(),
        agent_name: z.string().nullable().describe('null once the agent is deleted'),
        sessions: z.number().int(),
        session_seconds: z.number().int(),
        session_amount: Money,
        premium_voice_seconds: z.number().int(),
        premium_voice_amount: Money,
        total: Money,
      }),
    ),
  })
  .meta({ id: 'BillingByAgentResponse' });

export const VoiceResponse = z
  .object({
    month: z.string(),
    currency: z.literal('USD'),
    premium_voice_price_per_minute: Money,
    providers: z.array(z.object({ provider: z.string(), sessions: z.number().int(), seconds: z.number().int(), minutes: z.number(), amount: Money })),
    total: Money,
  })
  .meta({ id: 'BillingVoiceResponse' });

export const MonthlyResponse = z
  .object({
    currency: z.literal('USD'),
    months: z
      .array(
        z.object({
          month: z.string(),
          sessions: z.number().int(),
          session_seconds: z.number().int(),
          charged_session_seconds: z.number().int(),
          session_amount: Money,
          premium_voice_seconds: z.number().int(),
          premium_voice_amount: Money,
          total_charged: Money,
          topups: Money,
        }),
      )
      .describe('Newest first, months without use included'),
  })
  .meta({ id: 'BillingMonthlyResponse' });

export const LineItem = z
  .object({
    id: z.number().int(),
    session_id: z.string(),
    agent_id: z.number().int().nullable(),
    kind: z.enum(['session', 'premium_voice']),
    seconds: z.number().int(),
    amount: Money,
    created_at: z.string(),
  })
  .meta({ id: 'BillingLineItem' });

export const LineItemsResponse = z
  .object({
    items: z.array(LineItem).describe("One per session and kind of charge in the month (a running session's charging steps summed), newest first"),
    total: z.number().int(),
    limit: z.number().int(),
    offset: z.number().int(),
    month: z.string(),
    currency: z.literal('USD'),
  })
  .meta({ id: 'BillingLineItemsResponse' });

export const PlanResponse = z
  .object({
    plan: z.enum(['free', 'paid']),
    ...Prices,
    limits: z.object({
      agents: z.number().int().nullable().describe('null: no limit'),
      premium_voices: z.boolean(),
      monthly_session_seconds: z.number().int().nullable(),
      running_sessions: z.number().int().nullable(),
      max_session_seconds: z.number().int().nullable(),
    }),
    usage: z.object({
      month: z.string(),
      session_seconds: z.number().int(),
      session_minutes: z.number(),
      free_seconds_remaining: z.number().int().nullable(),
      agents: z.number().int(),
      running_sessions: z.number().int(),
    }),
    balance: Money,
  })
  .meta({ id: 'PlanResponse' });

export const UsageSummaryResponse = z
  .object({
    month: z.string(),
    plan: z.enum(['free', 'paid']),
    sessions: z.number().int(),
    session_seconds: z.number().int().describe('This month, running sessions included'),
    session_minutes: z.number(),
    free_seconds_included: z.number().int().nullable(),
    free_seconds_remaining: z.number().int().nullable(),
    premium_voice_seconds: z.number().int(),
    charged: Money,
    balance: Money,
    currency: z.literal('USD'),
  })
  .meta({ id: 'UsageSummaryResponse' });

export const TopupResponse = z
  .object({
    checkout_session_id: z.string(),
    url: z.string().nullable().describe('Stripe Checkout page to send the payer to'),
    amount: Money,
    currency: z.literal('USD'),
  })
  .meta({ id: 'TopupResponse' });

export const ConfirmResponse = z
  .object({
    checkout_session_id: z.string(),
    status: z.enum(['open', 'credited', 'expired']),
    paid: z.boolean(),
    credited_now: z.boolean().describe('This call credited the wallet (false when already credited or not paid yet)'),
    amount: Money,
    balance: Money,
    currency: z.literal('USD'),
  })
  .meta({ id: 'TopupConfirmResponse' });

export const PortalResponse = z.object({ url: z.string() }).meta({ id: 'PortalResponse' });
