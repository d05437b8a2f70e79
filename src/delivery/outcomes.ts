/**
 * The interface's outcome table (Events › Outbound webhook, item 7):
 *
 * | receiver                                   | result                                             |
 * |--------------------------------------------|----------------------------------------------------|
 * | 2xx in time                                | delivered                                          |
 * | timeout, unreachable, 408, 425, 429, 5xx   | retried on the schedule (WEBHOOK_RETRY_DELAYS)     |
 * | any other 4xx, a redirect (3xx)            | not retried; the owner marked as needing attention |
 *
 * An address that turns out private at connect time is a setting to fix, not a passing fault: it
 * is treated as a rejection (not retried, needs attention).
 */
import type { AttemptResult } from './http.js';

export type AttemptVerdict = 'delivered' | 'retry' | 'rejected';

const RETRIED_STATUSES = new Set([408, 425, 429]);

export function verdict(result: Pick<AttemptResult, 'statusCode' | 'error'>): AttemptVerdict {
  const status = result.statusCode;
  if (status === null) return result.error?.startsWith('private_address') || result.error?.startsWith('bad_url') ? 'rejected' : 'retry';
  if (status >= 200 && status < 300) return 'delivered';
  if (status >= 500 || RETRIED_STATUSES.has(status)) return 'retry';
  return 'rejected';
}

/** The error an attempt is logged with when the status itself is the problem. */
export function statusError(status: number | null): string | null {
  if (status === null || (status >= 200 && status < 300)) return null;
  if (status >= 300 && status < 400) return `redirect ${status} (redirects are not followed)`;
  return `HTTP ${status}`;
}
