/**
 * What kind of value a detail is, from its `type` or else its name and description, and how a
 * found value of each kind is written (the same whether the offline extractors or the language
 * model found it): e-mail lower-cased, phone numbers in E.164, dates as `YYYY-MM-DD` (with ` HH:MM`
 * when a time was said), numbers as plain digits, yes/no as `yes` or `no`, names capitalised.
 */
import * as chrono from 'chrono-node';
import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js';
import { kindOf, type DetailKind, type DetailSpec } from './spec.js';
import { findNumbers, parseNumber } from '../../core/numbers.js';

const EMAIL = /^[\w.!#$%&'*+/=?^`{|}~-]+@[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*\.[a-z]{2,}$/i;

/** A value in the kind's written form, or '' when it is not a value of that kind. */
export function normaliseValue(kind: DetailKind, raw: unknown, context: { reference: Date; country?: CountryCode }): string {
  if (raw === null || raw === undefined) return '';
  const value = String(raw).trim().slice(0, 1000);
  if (!value) return '';
  switch (kind) {
    case 'email': {
      const email = value
        .replace(/^mailto:/i, '')
        .replace(/[.,;]+$/, '')
        .toLowerCase();
      return EMAIL.test(email) ? email : '';
    }
    case 'phone': {
      const phone = parsePhoneNumberFromString(value, context.country ?? 'US');
      if (phone && phone.isPossible()) return phone.number;
      return phoneAsSaid(value);
    }
    case 'date': {
      if (/^\d{4}-\d{2}-\d{2}( \d{2}:\d{2})?$/.test(value)) return value;
      const [parsed] = chrono.parse(value, context.reference, { forwardDate: true });
      return parsed ? formatWhen(parsed) : '';
    }
    case 'number': {
      const n = parseNumber(value);
      return n === undefined ? '' : String(n);
    }
    case 'yes_no': {
      const answer = yesOrNo(value);
      return answer ?? '';
    }
    case 'name':
      return capitalise(
        value
          .replace(/[^\p{L}\p{M}' .-]/gu, ' ')
          .replace(/\s+/g, ' ')
          .trim(),
      ).slice(0, 200);
    default:
      return value;
  }
}

/** Phone-like: digits with the separators people write (+, spaces, dots, dashes, brackets), 6 to 17 digits. */
const PHONE_AS_SAID = /\+?\(?\d[\d\s()./-]{4,24}\d/g;

/**
 * A number the visitor said that looks like a phone number but is not one libphonenumber accepts
 * (too short, an unknown range: "+1 555 0100"), as they wrote it: a person taking the message
 * would write it down. The last such number in the text, or ''. It is delivered marked unverified.
 */
export function phoneAsSaid(text: string): string {
  const candidates = [...text.matchAll(PHONE_AS_SAID)]
    .map((m) => m[0].replace(/\s+/g, ' ').trim())
    .filter((c) => {
      const digits = c.replace(/\D/g, '').length;
      return digits >= 6 && digits <= 17;
    });
  return candidates.at(-1) ?? '';
}

/**
 * The details whose value was kept as the visitor said it rather than checked (a phone number that
 * is not a possible number): delivered with `{{unverified}}` naming them.
 */
export function unverifiedDetails(
  details: Array<Pick<DetailSpec, 'name' | 'description' | 'type'>>,
  values: Record<string, string>,
  country?: CountryCode,
): string[] {
  return details
    .filter((d) => {
      const value = values[d.name];
      if (!value || kindOf(d) !== 'phone') return false;
      const phone = parsePhoneNumberFromString(value, country ?? 'US');
      return !(phone && phone.isPossible() && phone.number === value);
    })
    .map((d) => d.name);
}

export function formatWhen(parsed: chrono.ParsedResult): string {
  const c = parsed.start;
  const pad = (n: number | null | undefined) => String(n ?? 0).padStart(2, '0');
  const date = `${c.get('year')}-${pad(c.get('month'))}-${pad(c.get('day'))}`;
  return c.isCertain('hour') ? `${date} ${pad(c.get('hour'))}:${pad(c.get('minute'))}` : date;
}

export function capitalise(name: string): string {
  return name
    .split(' ')
    .filter(Boolean)
    .map((w) => (w === w.toLowerCase() || w === w.toUpperCase() ? w.charAt(0).toUpperCase() + w.slice(1).toLowerCase() : w))
    .join(' ');
}

const YES =
  /^(yes|yeah|yep|yup|sure|of course|definitely|absolutely|certainly|please do|please|ok|okay|correct|that's right|i do|i would|i'd love|sounds good|go ahead)\b/i;
const NO = /^(no|nope|nah|not really|no thanks|no thank you|i don't|i do not|i'd rather not|never|don't|negative)\b/i;

export function yesOrNo(text: string): 'yes' | 'no' | undefined {
  const t = text.trim().replace(/^(um+|uh+|well|oh|hmm+)[, ]+/i, '');
  if (NO.test(t)) return 'no';
  if (YES.test(t)) return 'yes';
  if (/^(true|y)$/i.test(t)) return 'yes';
  if (/^(false|n)$/i.test(t)) return 'no';
  return undefined;
}
