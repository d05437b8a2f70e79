/** Random secrets and their hashes. Secrets are high-entropy, so a plain SHA-256 is the right hash. */
import crypto from 'node:crypto';

export function randomToken(prefix: string, bytes = 24): string {
  return prefix + crypto.randomBytes(bytes).toString('base64url');
}

export function sha256Hex(value: string): string {
  return crypto.createHash('sha256').update(value).digest('hex');
}

export function hmacSha256Hex(key: string, text: string): string {
  return crypto.createHmac('sha256', key).update(text).digest('hex');
}

/** Constant-time comparison of two strings (false when lengths differ). */
export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && crypto.timingSafeEqual(left, right);
}
