/**
 * Patterns of the facts visitors ask about (hours, prices, phone numbers, e-mail and street
 * addresses), shared by extraction, the offline builder and the offline answering engine.
 */

export const DAY =
  /\b(mon(day)?s?|tue(s(day)?)?s?|wed(nesday)?s?|thu(r(s(day)?)?)?s?|fri(day)?s?|sat(urday)?s?|sun(day)?s?|weekdays?|weekends?|daily|every ?day|public holidays?|bank holidays?)\b/i;
export const TIME =
  /\b([01]?\d|2[0-3])([:.][0-5]\d)?\s*(a\.?m\.?|p\.?m\.?)(?![a-z])|\b([01]?\d|2[0-3])[:.][0-5]\d\b|\b(noon|midday|midnight)\b|\b24\s*(\/|hours? a day)\s*7?\b/i;
export const CLOSED = /\b(closed|open 24)\b/i;
export const PRICE =
  /([$€£¥₹]|\b(usd|eur|gbp|chf|cad|aud)\b)\s?\d[\d,]*(\.\d{1,2})?|\d[\d,]*(\.\d{1,2})?\s?([€£$]|\b(usd|eur|gbp|chf|dollars?|euros?|pounds?|kr|sek|nok|dkk)\b)|\bfree of charge\b|\bno extra charge\b|\bfor free\b/i;
export const PHONE = /(\+?\d[\d\s().-]{6,}\d)/;
export const EMAIL = /\b[\w.+-]+@[\w-]+(\.[\w-]+)+\b/;
export const STREET =
  /\b\d+[a-z]?,?\s+([A-Z][\w'’-]*\s){0,3}(street|st|road|rd|lane|ln|avenue|ave|boulevard|blvd|way|drive|dr|square|sq|place|pl|court|ct|terrace|parade|highway|hwy|close|crescent|row|strasse|straße|rue|via|calle)\b/i;
export const POSTCODE = /\b([A-Z]{1,2}\d[A-Z\d]?\s?\d[A-Z]{2}|\d{5}(-\d{4})?)\b/;

/** A phone number needs at least 7 digits, and is not a date, a price or a time range. */
export function hasPhone(text: string): boolean {
  const match = PHONE.exec(text);
  if (!match) return false;
  const digits = match[1]!.replace(/\D/g, '');
  return digits.length >= 7 && digits.length <= 15 && !/^\d{1,2}[:.]\d{2}/.test(match[1]!);
}

export function hasHours(text: string): boolean {
  return DAY.test(text) && (TIME.test(text) || CLOSED.test(text));
}

export function hasAddress(text: string): boolean {
  return STREET.test(text);
}

export function hasFactPattern(text: string): boolean {
  return hasPhone(text) || EMAIL.test(text) || hasHours(text) || hasAddress(text) || PRICE.test(text);
}
