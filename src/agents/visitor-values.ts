/**
 * Visitor values: `visitor.<name>` values a site may pass when a conversation starts, optionally
 * signed with the agent's secret so a visitor cannot forge them.
 *
 * Canonical form (what is signed):  `<timestamp>.<name1>=<value1>&<name2>=<value2>…`
 *   - timestamp: Unix seconds, digits only
 *   - names sorted by code point; each name and value percent-encoded with encodeURIComponent
 *   - signature: hex HMAC-SHA256 with the whole secret (`vsec_…`) as key; may be sent as `sha256=<hex>`
 */
import { hmacSha256Hex, randomToken, safeEqual } from '../core/secrets.js';

export interface VisitorFieldConfig {
  name: string;
  description: string;
  required: boolean;
  max_length: number;
}

export interface VisitorValuesConfig {
  fields: VisitorFieldConfig[];
  require_signature: boolean;
  max_age_seconds: number;
  updated_at: string;
}

export const CANONICAL_FORM = '<timestamp>.<encodeURIComponent(name)>=<encodeURIComponent(value)>&… (names sorted by code point; timestamp in Unix seconds)';

export const newVisitorSecret = () => randomToken('vsec_', 32);

export function defaultVisitorValues(): VisitorValuesConfig {
  return { fields: [], require_signature: false, max_age_seconds: 300, updated_at: new Date().toISOString() };
}

export function canonicalText(timestamp: number, values: Record<string, string>): string {
  const pairs = Object.keys(values)
    .sort()
    .map((name) => `${encodeURIComponent(name)}=${encodeURIComponent(values[name])}`);
  return `${timestamp}.${pairs.join('&')}`;
}

export function signVisitorValues(secret: string, timestamp: number, values: Record<string, string>): string {
  return hmacSha256Hex(secret, canonicalText(timestamp, values));
}

export interface VisitorCheck {
  valid: boolean;
  signature_checked: boolean;
  signature_valid: boolean | null;
  canonical_text: string;
  accepted: Record<string, string>;
  ignored: string[];
  problems: Array<{ name: string | null; code: string; message: string }>;
  variables: Record<string, string>;
}

/** Checks passed values against the agent's declaration (and signature); used by preview and session start. */
export function checkVisitorValues(
  config: VisitorValuesConfig,
  secret: string,
  input: { values: Record<string, string>; timestamp?: number; signature?: string },
  nowSeconds = Math.floor(Date.now() / 1000),
): VisitorCheck {
  const problems: VisitorCheck['problems'] = [];
  const declared = new Map(config.fields.map((f) => [f.name, f]));
  const accepted: Record<string, string> = {};
  const ignored: string[] = [];
  for (const [name, value] of Object.entries(input.values)) {
    const field = declared.get(name);
    if (!field) {
      ignored.push(name);
      continue;
    }
    if (value.length > field.max_length) {
      problems.push({ name, code: 'too_long', message: `${name} is ${value.length} characters; at most ${field.max_length} allowed` });
      continue;
    }
    accepted[name] = value;
  }
  for (const field of config.fields) {
    if (field.required && !(field.name in input.values)) {
      problems.push({ name: field.name, code: 'missing', message: `${field.name} is required` });
    }
  }

  const timestamp = input.timestamp ?? nowSeconds;
  const text = canonicalText(timestamp, input.values);
  let signatureValid: boolean | null = null;
  const checked = input.signature !== undefined;
  if (checked) {
    const given = input.signature!.replace(/^sha256=/, '').toLowerCase();
    signatureValid = input.timestamp !== undefined && safeEqual(given, hmacSha256Hex(secret, text));
    if (input.timestamp === undefined) problems.push({ name: null, code: 'timestamp_missing', message: 'a signature needs the timestamp it was made with' });
    else if (!signatureValid)
      problems.push({ name: null, code: 'bad_signature', message: 'signature does not match the canonical text with the current secret' });
    if (input.timestamp !== undefined && Math.abs(nowSeconds - input.timestamp) > config.max_age_seconds) {
      signatureValid = false;
      problems.push({ name: null, code: 'expired', message: `timestamp is more than ${config.max_age_seconds} s from the server clock` });
    }
  } else if (config.require_signature) {
    problems.push({ name: null, code: 'signature_required', message: 'this agent accepts visitor values only when signed' });
  }

  const usable = problems.length === 0;
  const variables: Record<string, string> = {};
  for (const field of config.fields) variables[`visitor.${field.name}`] = usable ? (accepted[field.name] ?? '') : '';
  return {
    valid: usable,
    signature_checked: checked,
    signature_valid: signatureValid,
    canonical_text: text,
    accepted: usable ? accepted : {},
    ignored,
    problems,
    variables,
  };
}
