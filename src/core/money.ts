/**
 * Money arithmetic in integers. Amounts are cents; prices per minute are kept in ten-thousandths of
 * the currency unit so a price like 0.0125 is exact. A session is billed by the second: the charge
 * for its first N seconds is round_half_up(N × price / 60) cents, computed on the running total, so
 * charging a running session in steps adds up to exactly the charge for its whole length.
 */
export const CURRENCY = 'USD' as const;

/** "0.10" → 1000 (ten-thousandths). Up to four decimal places; throws on anything else. */
export function parsePrice(name: string, raw: string): number {
  if (!/^\d{1,7}(\.\d{1,4})?$/.test(raw.trim())) throw new Error(`${name} must be a non-negative decimal amount like 0.10, got "${raw}"`);
  const [whole, frac = ''] = raw.trim().split('.');
  return Number(whole) * 10_000 + Number(frac.padEnd(4, '0'));
}

/** Cents owed for `seconds` at `pricePerMinute` (ten-thousandths), rounded half up. */
export function centsFor(seconds: number, pricePerMinute: number): number {
  if (seconds <= 0 || pricePerMinute <= 0) return 0;
  // seconds × price / 60 is in ten-thousandths; / 100 makes cents: round(s·p / 6000).
  return Math.floor((seconds * pricePerMinute * 2 + 6000) / 12_000);
}

/** 2550 → "25.50"; −5 → "-0.05". */
export function formatCents(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

/** 1000 (ten-thousandths) → "0.10" (two places at least, more when the price has them). */
export function formatPrice(price: number): string {
  const whole = Math.floor(price / 10_000);
  const frac = String(price % 10_000)
    .padStart(4, '0')
    .replace(/0{1,2}$/, '')
    .replace(/0$/, '');
  return `${whole}.${frac.padEnd(2, '0')}`;
}

/** The UTC month `YYYY-MM` of a time. */
export function monthOf(at: Date): string {
  return at.toISOString().slice(0, 7);
}
