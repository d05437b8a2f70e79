/**
 * The interface's webhook signature (Events › Outbound webhook, item 6): text = `<timestamp>.<payload>`,
 * key = the whole secret including `whsec_`, header = `sha256=` + hex HMAC-SHA256. The payload is
 * the raw body for POST, and for GET the query string the service appended (without the `?`, and
 * without the URL's own parameters).
 */
import { hmacSha256Hex, randomToken, safeEqual } from '../core/secrets.js';

export const SECRET_PREFIX = 'whsec_';
/** Receivers reject timestamps further than this from their clock (interface Limits). */
export const TIMESTAMP_TOLERANCE_SECONDS = 300;

export function newWebhookSecret(): string {
  return randomToken(SECRET_PREFIX, 24);
}

export function signature(secret: string, timestamp: number, payload: string): string {
  return `sha256=${hmacSha256Hex(secret, `${timestamp}.${payload}`)}`;
}

/** What a receiver does: the signature matches and the timestamp is within the tolerance. */
export function verifySignature(
  secret: string,
  header: string | undefined,
  timestamp: string | undefined,
  payload: string,
  nowSeconds = Math.floor(Date.now() / 1000),
): boolean {
  if (!header || !timestamp || !/^\d+$/.test(timestamp)) return false;
  if (Math.abs(nowSeconds - Number(timestamp)) > TIMESTAMP_TOLERANCE_SECONDS) return false;
  return safeEqual(header, signature(secret, Number(timestamp), payload));
}

/**
 * A webhook's custom headers shown to a key without `setup`: names kept, values masked, since they
 * carry the receiver's own secrets (`Authorization: Bearer …`) as `whsec_` carries ours.
 */
export function maskHeaders(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.keys(headers).map((name) => [name, '•'.repeat(8)]));
}

/** A secret shown to a key without `setup` (contract: masked). */
export function maskSecret(secret: string): string {
  return `${SECRET_PREFIX}${'•'.repeat(8)}${secret.slice(-4)}`;
}
