/**
 * Structured JSON logs (pino) with the request id on every line. Secrets never reach the log:
 * Authorization headers are redacted, tokens in URLs (player, preview and render-socket links)
 * masked, a failing query is logged without its parameter values (the SQL keeps its $1
 * placeholders), and anything shaped like one of our secrets is masked wherever it appears.
 */
import type { FastifyRequest } from 'fastify';
import pino from 'pino';

/** Our secrets and keys by their prefixes: API keys, visitor signing and webhook secrets, session tokens, embed keys. */
const PREFIXED_SECRET = /\b(sk_live_|vsec_|whsec_|st_|pk_)[A-Za-z0-9_-]{8,}/g;
/** PostgreSQL's "Key (column)=(value) already exists" and similar details carry row values. */
const ROW_VALUES = /(\)=\()[^)]*(\))/g;

export function maskUrl(url: string): string {
  const queryAt = url.indexOf('?');
  const path = (queryAt < 0 ? url : url.slice(0, queryAt)).replace(/\/p\/[A-Za-z0-9_-]{8,}/, '/p/***').replace(/\/preview\/[^/?#]+/, '/preview/***');
  if (queryAt < 0) return path;
  const hashAt = url.indexOf('#', queryAt);
  const query = url.slice(queryAt + 1, hashAt < 0 ? undefined : hashAt);
  return `${path}?${query.split('&').map(maskQueryPair).join('&')}${hashAt < 0 ? '' : '#***'}`;
}

/** Parameter names that say their value is a credential, whatever it looks like. */
const SECRET_NAME = /token|key|secret|pass(word|wd)?$|auth|signature|sig$|credential/i;
/** A value shaped like a credential: one of our prefixed secrets, a JWT, or a long random-looking string. */
const SECRET_VALUE = /\b(sk_live_|vsec_|whsec_|st_|pk_)[A-Za-z0-9_-]{8,}|^ey[A-Za-z0-9_-]{10,}\.|^(?=.*\d)(?=.*[A-Za-z])[A-Za-z0-9_\-.~+/=]{24,}$/;

/**
 * One `name=value` of a query, its value masked when the name or the value looks like a secret,
 * judged after percent-decoding: `?%74oken=st_…` is `token=st_…` to the server, so it is to the log.
 */
function maskQueryPair(pair: string): string {
  const equals = pair.indexOf('=');
  if (equals < 0) return SECRET_VALUE.test(decodedLoosely(pair)) ? '***' : pair;
  const name = decodedLoosely(pair.slice(0, equals));
  const value = decodedLoosely(pair.slice(equals + 1));
  return SECRET_NAME.test(name) || SECRET_VALUE.test(value) ? `${pair.slice(0, equals)}=***` : pair;
}

/** Percent-decoding (and + as space) that never throws: a bad escape is read as written. */
function decodedLoosely(text: string): string {
  const plus = text.replace(/\+/g, ' ');
  try {
    return decodeURIComponent(plus);
  } catch {
    return plus.replace(/%([0-9A-Fa-f]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  }
}

export function maskSecrets(text: string): string {
  return text.replace(PREFIXED_SECRET, '$1***').replace(ROW_VALUES, '$1***$2');
}

function maskDeep(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return maskSecrets(value);
  if (depth > 6 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => maskDeep(v, depth + 1));
  // Errors, requests and replies are left to their serializers; only plain data is walked here.
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) out[key] = maskDeep(v, depth + 1);
  return out;
}

/** An error as pino would log it, minus the values a failing query was run with (PGlite's `params`, pg's `parameters`). */
export function serializeError(error: unknown): unknown {
  if (!(error instanceof Error)) return maskDeep(error);
  const plain = pino.stdSerializers.err(error) as unknown as Record<string, unknown>;
  for (const key of ['params', 'parameters', 'values', 'bindings']) delete plain[key];
  if (plain.cause instanceof Error) plain.cause = serializeError(plain.cause);
  return maskDeep(plain);
}

export function loggerOptions(level: string) {
  return {
    level,
    redact: { paths: ['req.headers.authorization', 'req.headers["x-admin-token"]', 'headers.authorization'], censor: '***' },
    serializers: {
      req(request: FastifyRequest) {
        return { method: request.method, url: maskUrl(request.url), remoteAddress: request.ip };
      },
      err: serializeError,
    },
    formatters: {
      log: (object: Record<string, unknown>) => maskDeep(object) as Record<string, unknown>,
    },
    hooks: {
      logMethod(this: unknown, args: unknown[], method: (...a: unknown[]) => void) {
        method.apply(
          this,
          args.map((a) => (typeof a === 'string' ? maskSecrets(a) : a)),
        );
      },
    },
  };
}
