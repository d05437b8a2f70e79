/**
 * Every error leaves the service as `{"detail": ...}`: a sentence, an object `{code, message}`,
 * or (422) a list of FastAPI-shaped validation items, so that existing clients parse them.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingMessage } from 'node:http';
import type { z } from 'zod';

export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: string | undefined,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  get detail(): unknown {
    return this.code ? { code: this.code, message: this.message } : this.message;
  }
}

/**
 * A capability's error catalogue: each code it raises, with its HTTP status and its message (a
 * fixed sentence, or a `summary` when the sentence names the thing at hand and is given on raising).
 * Raise with `errors.agent_not_found(…)`; name a route's possible errors in its `config.errors`
 * (see `routeErrors`), so /openapi.json lists them. Every catalogue registers itself here.
 */
type Headers = Record<string, string>;
export type ErrorSpec = { status: number; message: string } | { status: number; summary: string };

export interface CatalogueEntry {
  readonly capability: string;
  readonly code: string;
  readonly status: number;
  /** The message, or what it says when it is worded on raising. */
  readonly summary: string;
}

type Raiser<S extends ErrorSpec> = (S extends { message: string } ? (headers?: Headers) => ApiError : (message: string, headers?: Headers) => ApiError) &
  CatalogueEntry;

export type Catalogue<T extends Record<string, ErrorSpec>> = { readonly [K in keyof T]: Raiser<T[K]> };

const catalogues = new Map<string, CatalogueEntry[]>();

export function errorCatalogue<const T extends Record<string, ErrorSpec>>(capability: string, specs: T): Catalogue<T> {
  const out: Record<string, unknown> = {};
  const entries: CatalogueEntry[] = [];
  for (const [code, spec] of Object.entries(specs)) {
    const fixed = 'message' in spec ? spec.message : undefined;
    const entry: CatalogueEntry = { capability, code, status: spec.status, summary: fixed ?? (spec as { summary: string }).summary };
    const raise =
      fixed === undefined
        ? (message: string, headers?: Headers) => new ApiError(spec.status, code, message, headers)
        : (headers?: Headers) => new ApiError(spec.status, code, fixed, headers);
    out[code] = Object.assign(raise, entry);
    entries.push(entry);
  }
  catalogues.set(capability, entries);
  return out as Catalogue<T>;
}

/** Every registered catalogue's entries (those whose module was loaded). */
export function catalogueEntries(): CatalogueEntry[] {
  return [...catalogues.values()].flat();
}

/** A route's possible errors, for its `config`: `config: routeErrors(agentsErrors.agent_not_found)`. */
export function routeErrors(...entries: CatalogueEntry[]): { errors: CatalogueEntry[] } {
  return { errors: entries };
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The catalogued errors a route answers with, listed in /openapi.json (see `routeErrors`). */
    errors?: CatalogueEntry[];
  }
}

export type Location = 'body' | 'query' | 'path' | 'header';

export interface ValidationItem {
  type: string;
  loc: Array<string | number>;
  msg: string;
  input: unknown;
  ctx?: Record<string, unknown>;
}

/** A 422 raised by domain code (not by a schema), in the same shape. */
export class ValidationFailed extends Error {
  constructor(readonly items: ValidationItem[]) {
    super(items.map((i) => i.msg).join('; '));
  }
}

export function validationItem(loc: Array<string | number>, msg: string, input: unknown, type = 'value_error'): ValidationItem {
  return { type, loc, msg, input };
}

function valueAt(data: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let value: any = data;
  for (const key of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = value[key as any];
  }
  return value;
}

const typeNames: Record<string, [string, string]> = {
  string: ['string_type', 'Input should be a valid string'],
  number: ['float_type', 'Input should be a valid number'],
  int: ['int_type', 'Input should be a valid integer'],
  boolean: ['bool_type', 'Input should be a valid boolean'],
  object: ['dict_type', 'Input should be a valid dictionary or object'],
  array: ['list_type', 'Input should be a valid list'],
};

/** Map zod issues onto pydantic/FastAPI error items. */
export function zodIssuesToItems(where: Location, issues: z.core.$ZodIssue[], data: unknown): ValidationItem[] {
  const items: ValidationItem[] = [];
  for (const issue of issues) {
    const path = issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p)) as Array<string | number>;
    const loc = [where, ...path];
    const input = valueAt(data, issue.path);
    // An absent field (zod reports invalid_type, or invalid_value for enums and literals): FastAPI's
    // `missing`, whose input is the object that lacks the field (null outside the body).
    // No body at all (an empty one included) is FastAPI's `missing` at ["body"] too.
    const noBody = where === 'body' && path.length === 0 && (input === undefined || input === null) && issue.code === 'invalid_type';
    if (noBody || (input === undefined && (issue.code === 'invalid_type' || issue.code === 'invalid_value'))) {
      const parent = where === 'body' ? valueAt(data, issue.path.slice(0, -1)) : undefined;
      items.push({ type: 'missing', loc, msg: 'Field required', input: parent ?? null });
      continue;
    }
    switch (issue.code) {
      case 'invalid_type': {
        const isIntParse = issue.expected === 'int' || (issue.expected === 'number' && typeof input === 'string');
        if (isIntParse && where !== 'body') {
          items.push({ type: 'int_parsing', loc, msg: 'Input should be a valid integer, unable to parse string as an integer', input });
          break;
        }
        const [type, msg] = typeNames[issue.expected] ?? ['type_error', issue.message];
        items.push({ type, loc, msg, input });
        break;
      }
      case 'unrecognized_keys':
        for (const key of issue.keys) {
          items.push({ type: 'extra_forbidden', loc: [...loc, key], msg: 'Extra inputs are not permitted', input: valueAt(input, [key]) });
        }
        break;
      case 'too_small': {
        const min = Number(issue.minimum);
        if (issue.origin === 'string') {
          items.push({
            type: 'string_too_short',
            loc,
            msg: `String should have at least ${min} character${min === 1 ? '' : 's'}`,
            input,
            ctx: { min_length: min },
          });
        } else if (issue.origin === 'array') {
          items.push({ type: 'too_short', loc, msg: `List should have at least ${min} item${min === 1 ? '' : 's'}`, input, ctx: { min_length: min } });
        } else {
          const type = issue.inclusive ? 'greater_than_equal' : 'greater_than';
          items.push({
            type,
            loc,
            msg: `Input should be ${issue.inclusive ? 'greater than or equal to' : 'greater than'} ${min}`,
            input,
            ctx: { [issue.inclusive ? 'ge' : 'gt']: min },
          });
        }
        break;
      }
      case 'too_big': {
        const max = Number(issue.maximum);
        if (issue.origin === 'string') {
          items.push({
            type: 'string_too_long',
            loc,
            msg: `String should have at most ${max} character${max === 1 ? '' : 's'}`,
            input,
            ctx: { max_length: max },
          });
        } else if (issue.origin === 'array') {
          items.push({ type: 'too_long', loc, msg: `List should have at most ${max} item${max === 1 ? '' : 's'}`, input, ctx: { max_length: max } });
        } else {
          const type = issue.inclusive ? 'less_than_equal' : 'less_than';
          items.push({
            type,
            loc,
            msg: `Input should be ${issue.inclusive ? 'less than or equal to' : 'less than'} ${max}`,
            input,
            ctx: { [issue.inclusive ? 'le' : 'lt']: max },
          });
        }
        break;
      }
      case 'invalid_value':
        items.push({
          type: issue.values.length ? 'enum' : 'literal_error',
          loc,
          msg: `Input should be ${issue.values
            .map((v) => `'${String(v)}'`)
            .join(', ')
            .replace(/, ([^,]*)$/, ' or $1')}`,
          input,
          ctx: { expected: issue.values.map((v) => `'${String(v)}'`).join(', ') },
        });
        break;
      case 'invalid_format':
        items.push({ type: 'string_pattern_mismatch', loc, msg: issue.message, input, ctx: { pattern: (issue as any).pattern?.toString?.() } });
        break;
      case 'not_multiple_of':
        items.push({ type: 'multiple_of', loc, msg: issue.message, input });
        break;
      default:
        items.push({ type: 'value_error', loc, msg: issue.message, input });
    }
  }
  // Every item carries `input` (JSON would drop an undefined one).
  return items.map((item) => (item.input === undefined ? { ...item, input: null } : item));
}

export class RequestValidationError extends Error {
  constructor(readonly items: ValidationItem[]) {
    super('Request validation failed');
  }
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setNotFoundHandler((_request, reply) => {
    reply.code(404).send({ detail: 'Not Found' });
  });

  app.setErrorHandler((error: FastifyError | Error, request, reply) => {
    // A body refused before it was read (too large, unsupported type): Fastify answers with
    // `Connection: close`, and closing while the client is still sending made its kernel see a reset
    // instead of the answer. Read the rest first (bounded), then answer and close cleanly.
    if (reply.getHeader('connection') === 'close' && !request.raw.complete && !request.raw.destroyed) {
      drainRequest(request.raw, () => answerError(error, request, reply));
      return;
    }
    answerError(error, request, reply);
  });
}

/** How much of a refused body is read and dropped before answering; past it the socket is cut. */
export const DRAIN_MAX_BYTES = 64 * 1024 * 1024;
const DRAIN_MAX_MS = 30_000;

function drainRequest(raw: IncomingMessage, then: () => void): void {
  let drained = 0;
  let done = false;
  const finish = (cut: boolean) => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    raw.removeListener('data', onData);
    then();
    if (cut) raw.socket?.destroySoon();
  };
  const onData = (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > DRAIN_MAX_BYTES) finish(true);
  };
  const timer = setTimeout(() => finish(true), DRAIN_MAX_MS);
  timer.unref();
  raw.on('data', onData);
  raw.once('end', () => finish(false));
  raw.once('close', () => finish(false));
  raw.resume();
}

function answerError(error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply): void {
  if (error instanceof ApiError) {
    reply.headers(error.headers).code(error.statusCode).send({ detail: error.detail });
    return;
  }
  if (error instanceof RequestValidationError) {
    reply.code(422).send({ detail: error.items });
    return;
  }
  if (error instanceof ValidationFailed) {
    reply.code(422).send({ detail: error.items });
    return;
  }
  const fastifyError = error as FastifyError;
  if (fastifyError.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    reply.code(415).send({ detail: 'Content-Type must be application/json' });
    return;
  }
  if (
    fastifyError.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' ||
    fastifyError.code === 'FST_ERR_CTP_INVALID_JSON_BODY' ||
    (fastifyError.statusCode === 400 && error instanceof SyntaxError)
  ) {
    // FastAPI answers unparsable JSON with 422 json_invalid; so do we.
    reply.code(422).send({ detail: [{ type: 'json_invalid', loc: ['body', 0], msg: 'JSON decode error', input: {}, ctx: { error: error.message } }] });
    return;
  }
  if (fastifyError.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    reply.code(413).send({ detail: 'Request body is too large' });
    return;
  }
  const status = fastifyError.statusCode && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500 ? fastifyError.statusCode : 500;
  if (status === 500) {
    request.log.error({ err: error }, 'unhandled error');
    reply.code(500).send({ detail: 'Internal server error' });
  } else {
    reply.code(status).send({ detail: error.message });
  }
}

/**
 * Errors Fastify raises before routing (a URL with bad percent-encoding, an unparsable header), in
 * the `{"detail": …}` shape like every other answer. Passed as Fastify's `frameworkErrors`.
 */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  closeUnansweredUpgrade(request, reply);
  const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 400;
  const message = error.code === 'FST_ERR_BAD_URL' ? 'The URL is not valid (bad percent-encoding)' : error.message;
  reply.code(status).send({ detail: message });
}

/**
 * A WebSocket upgrade the router answers with an error itself (a bad or over-long URL): Node hands
 * an upgrade's socket to its listener, and on this path nothing closes it after the answer (routed
 * answers, a 404 included, are closed by Fastify), so it would stay open and the server could not
 * close while it did. It is closed once the answer is written.
 */
function closeUnansweredUpgrade(request: FastifyRequest, reply: FastifyReply): void {
  if (!request.headers.upgrade) return;
  const close = () => request.raw.socket?.destroy();
  if (reply.raw.writableFinished) close();
  else reply.raw.once('finish', close);
}
