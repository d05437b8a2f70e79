/**
 * Request validation with zod, reported in FastAPI's 422 shape. The same zod schemas feed the
 * OpenAPI document (fastify-type-provider-zod's transform), so docs and checks cannot drift apart.
 */
import type { FastifyInstance, FastifyRequest, FastifySchemaCompiler } from 'fastify';
import { z } from 'zod';
import { RequestValidationError, zodIssuesToItems, type Location, type ValidationItem } from './errors.js';

const partToLocation: Record<string, Location> = { body: 'body', querystring: 'query', params: 'path', headers: 'header' };

const validatorCompiler: FastifySchemaCompiler<z.ZodType> = ({ schema, httpPart }) => {
  const where = partToLocation[httpPart ?? 'body'] ?? 'body';
  const numbers = where === 'path' || where === 'query' ? numericFields(schema) : new Map<string, boolean>();
  return (data) => {
    const loose = numbers.size ? looseNumbers(where, numbers, data) : [];
    if (loose.length) return { error: new RequestValidationError(loose) };
    const result = schema.safeParse(data);
    if (!result.success) return { error: new RequestValidationError(zodIssuesToItems(where, result.error.issues, data)) };
    const unstorable = storableProblems(where, result.data);
    if (unstorable.length) return { error: new RequestValidationError(unstorable) };
    return { value: result.data };
  };
};

const PLAIN_INTEGER = /^(0|-?[1-9][0-9]*)$/;
const PLAIN_DECIMAL = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?$/;

/** The path or query fields a schema reads as numbers (coerced from text), each with whether it is an integer. */
function numericFields(schema: z.ZodType): Map<string, boolean> {
  const fields = new Map<string, boolean>();
  const shape = (schema as any)?._zod?.def?.shape as Record<string, z.ZodType> | undefined;
  if (!shape) return fields;
  for (const [name, field] of Object.entries(shape)) {
    let inner: any = field;
    for (let i = 0; i < 8 && inner?._zod?.def && (inner._zod.def.innerType || inner._zod.def.in); i++) inner = inner._zod.def.innerType ?? inner._zod.def.in;
    if (inner?._zod?.def?.type === 'number') fields.set(name, Boolean(inner.isInt));
  }
  return fields;
}

/**
 * Numbers in a path or query are written in plain decimal: `Number()` (zod's coercion) also reads
 * `0xba`, `+186`, ` 186`, `0186`, `186e0` and `186.0` as 186, so one id had many spellings and
 * `DELETE /v1/agent/0xba` deleted agent 186. Checked here, once, for every route's schema.
 */
function looseNumbers(where: Location, fields: Map<string, boolean>, data: unknown): ValidationItem[] {
  const items: ValidationItem[] = [];
  if (!data || typeof data !== 'object') return items;
  for (const [name, isInt] of fields) {
    const value = (data as Record<string, unknown>)[name];
    if (value === undefined) continue;
    if (typeof value === 'string' && (isInt ? PLAIN_INTEGER : PLAIN_DECIMAL).test(value)) continue;
    items.push(
      isInt
        ? { type: 'int_parsing', loc: [where, name], msg: 'Input should be a valid integer, unable to parse string as an integer', input: value }
        : { type: 'float_parsing', loc: [where, name], msg: 'Input should be a valid number, unable to parse string as a number', input: value },
    );
  }
  return items;
}

const INT32_MAX = 2_147_483_647;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Checks at the edge what the database could not store, for every route: text with NUL characters
 * or unpaired UTF-16 surrogates (PostgreSQL refuses both), and ids (`id`, `…_id`, each of `…_ids`) beyond the
 * database's integer range. Without it such input reached SQL and came back as a 500.
 */
export function storableProblems(where: Location, value: unknown): ValidationItem[] {
  const items: ValidationItem[] = [];
  const walk = (v: unknown, loc: Array<string | number>, key: string | number | undefined, depth: number) => {
    if (items.length >= 20 || depth > 64) return;
    if (typeof v === 'string') {
      if (v.includes('\u0000'))
        items.push({ type: 'string_invalid', loc, msg: 'Text must not contain NUL characters', input: v.replace(/\u0000/g, '\\u0000') });
      else if (LONE_SURROGATE.test(v))
        items.push({
          type: 'string_unicode',
          loc,
          msg: 'Text must be valid Unicode (no unpaired surrogates)',
          input: v.replace(new RegExp(LONE_SURROGATE, 'g'), '\uFFFD'),
        });
      return;
    }
    if (typeof v === 'number') {
      const isId = typeof key === 'string' && (key === 'id' || key.endsWith('_id') || key === 'ids' || key.endsWith('_ids'));
      if (isId && Number.isInteger(v) && (v > INT32_MAX || v < -INT32_MAX - 1)) {
        items.push({ type: 'less_than_equal', loc, msg: `Input should be less than or equal to ${INT32_MAX}`, input: v, ctx: { le: INT32_MAX } });
      }
      return;
    }
    if (Array.isArray(v)) {
      v.forEach((item, i) => walk(item, [...loc, i], key, depth + 1));
      return;
    }
    if (v && typeof v === 'object' && !Buffer.isBuffer(v)) {
      for (const [k, item] of Object.entries(v)) {
        if (k.includes('\u0000') || LONE_SURROGATE.test(k))
          items.push({ type: 'string_invalid', loc: [...loc, k], msg: 'Field names must be valid text without NUL characters', input: null });
        else walk(item, [...loc, k], k, depth + 1);
      }
    }
  };
  walk(value, [where], undefined, 0);
  return items;
}

export function registerValidation(app: FastifyInstance): void {
  registerEmptyBodies(app);
  registerUnknownQueryRefusal(app);
  app.setValidatorCompiler(validatorCompiler);
  // Responses are plain JSON; their schemas exist for the OpenAPI document only.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  // Schema errors reach the error handler unwrapped.
  app.setSchemaErrorFormatter((errors) => errors[0] as unknown as Error);
}

/** The query of every DELETE: `confirm=true` (the contract's permission map). */
export const DeleteQuery = z.object({ confirm: z.literal('true') });

/**
 * An API route answers 422 `extra_forbidden` to a query parameter it does not read: a typo
 * (`?isPrimary=true` for `is_primary`) used to be ignored, so `DELETE …/pages?confirm=true&isPrimary=true`
 * deleted every page. The allowed names are the route's query schema (plus `confirm` on a DELETE,
 * which the API-key check reads); a route without one takes no query. Sockets keep their own rules.
 */
function registerUnknownQueryRefusal(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith('/v1/') || (route as { websocket?: boolean }).websocket) return;
    const schema = (route.schema as { querystring?: any } | undefined)?.querystring;
    const def = schema?._zod?.def;
    if (schema && (!def?.shape || def.catchall)) return; // not an object with named fields: the schema decides
    const allowed = new Set<string>(Object.keys(def?.shape ?? {}));
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (methods.includes('DELETE')) allowed.add('confirm');
    const refuseUnknown = async (request: FastifyRequest) => {
      const query = request.query as Record<string, unknown> | undefined;
      if (!query || typeof query !== 'object') return;
      const unknown = Object.keys(query).filter((name) => !allowed.has(name));
      if (unknown.length) {
        throw new RequestValidationError(
          unknown
            .slice(0, 20)
            .map((name) => ({ type: 'extra_forbidden', loc: ['query', name], msg: 'Extra inputs are not permitted', input: query[name] ?? null })),
        );
      }
    };
    const existing = route.preValidation;
    route.preValidation = existing === undefined ? [refuseUnknown] : [refuseUnknown, ...(Array.isArray(existing) ? existing : [existing])];
  });
}

/** A path id: plain decimal digits only (checked for every numeric path field by the compiler above), as an integer (FastAPI's int_parsing error otherwise). */
export const pathInt = z.coerce.number().int().min(1).max(2_147_483_647);

/**
 * An empty body is no body, whatever its Content-Type: many HTTP clients send
 * `Content-Type: application/json` on a POST without a body (e.g. `/stop`), and refusing it as
 * unparsable JSON left sessions running. Routes with a body schema then answer 422 `missing`.
 */
function registerEmptyBodies(app: FastifyInstance): void {
  // A declared empty body is not parsed at all (Fastify parses only when a Content-Type is present),
  // nor is a request with neither Content-Length nor Transfer-Encoding, which has no body in HTTP/1.1
  // (fetch sends a bodiless DELETE so).
  app.addHook('onRequest', async (request) => {
    const length = request.headers['content-length'];
    if ((length === '0' || length === undefined) && request.headers['transfer-encoding'] === undefined) delete request.headers['content-type'];
  });
  // A chunked body that turns out empty: JSON's parser answers "no body" instead of json_invalid.
  const json = app.getDefaultJsonParser('error', 'ignore');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    // Bytes that are not UTF-8 are refused, not stored as U+FFFD (the visitor's text would be lost unseen).
    let text: string;
    try {
      text = typeof body === 'string' ? body : strictUtf8.decode(body);
    } catch {
      done(new RequestValidationError([{ type: 'json_invalid', loc: ['body', 0], msg: 'JSON body is not valid UTF-8', input: {} }]), undefined);
      return;
    }
    if (text.trim() === '') {
      done(null, undefined);
      return;
    }
    if (nestingDepth(text) > MAX_JSON_DEPTH) {
      done(
        new RequestValidationError([{ type: 'json_invalid', loc: ['body', 0], msg: `JSON nested deeper than ${MAX_JSON_DEPTH} levels`, input: {} }]),
        undefined,
      );
      return;
    }
    json(request, text, done);
  });
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** No request needs deeper JSON; deeper input overflowed the validator's stack (a 500 outside the error shape). */
export const MAX_JSON_DEPTH = 64;

/** How deep the JSON text's brackets nest (strings skipped); stops counting past the limit. */
function nestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) {
      if (++depth > deepest) deepest = depth;
      if (deepest > MAX_JSON_DEPTH) return deepest;
    } else if (c === 125 || c === 93) depth--;
  }
  return deepest;
}
