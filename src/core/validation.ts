/**
 * Request validation with zod, reported in FastAPI's 422 shape. The same zod schemas feed the
 * OpenAPI document (fastify-type-provider-zod's transform), so docs and checks cannot drift apart.
 */
import type { FastifyInstance, FastifySchemaCompiler } from 'fastify';
import { z } from 'zod';
import { RequestValidationError, zodIssuesToItems, type Location, type ValidationItem } from './errors.js';

const partToLocation: Record<string, Location> = { body: 'body', querystring: 'query', params: 'path', headers: 'header' };

const validatorCompiler: FastifySchemaCompiler<z.ZodType> = ({ schema, httpPart }) => (data) => {
  const where = partToLocation[httpPart ?? 'body'] ?? 'body';
  const result = schema.safeParse(data);
  if (!result.success) return { error: new RequestValidationError(zodIssuesToItems(where, result.error.issues, data)) };
  const unstorable = storableProblems(where, result.data);
  if (unstorable.length) return { error: new RequestValidationError(unstorable) };
  return { value: result.data };
};

const INT32_MAX = 2_147_483_647;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Checks at the edge what the database could not store, for every route: text with NUL characters
 * or unpaired UTF-16 surrogates (PostgreSQL refuses both), and ids (`id`, `…_id`) beyond the
 * database's integer range. Without it such input reached SQL and came back as a 500.
 */
export function storableProblems(where: Location, value: unknown): ValidationItem[] {
  const items: ValidationItem[] = [];
  const walk = (v: unknown, loc: Array<string | number>, key: string | number | undefined, depth: number) => {
    if (items.length >= 20 || depth > 64) return;
    if (typeof v === 'string') {
      if (v.includes('\u0000')) items.push({ type: 'string_invalid', loc, msg: 'Text must not contain NUL characters', input: v.replace(/\u0000/g, '\\u0000') });
      else if (LONE_SURROGATE.test(v)) items.push({ type: 'string_unicode', loc, msg: 'Text must be valid Unicode (no unpaired surrogates)', input: v.replace(new RegExp(LONE_SURROGATE, 'g'), '\uFFFD') });
      return;
    }
    if (typeof v === 'number') {
      const isId = typeof key === 'string' && (key === 'id' || key.endsWith('_id'));
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
        if (k.includes('\u0000') || LONE_SURROGATE.test(k)) items.push({ type: 'string_invalid', loc: [...loc, k], msg: 'Field names must be valid text without NUL characters', input: null });
        else walk(item, [...loc, k], k, depth + 1);
      }
    }
  };
  walk(value, [where], undefined, 0);
  return items;
}

export function registerValidation(app: FastifyInstance): void {
  registerEmptyBodies(app);
  app.setValidatorCompiler(validatorCompiler);
  // Responses are plain JSON; their schemas exist for the OpenAPI document only.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  // Schema errors reach the error handler unwrapped.
  app.setSchemaErrorFormatter((errors) => errors[0] as unknown as Error);
}

/** A path id: digits only, as an integer (FastAPI's int_parsing error otherwise). */
/** The query of every DELETE: `confirm=true` (the contract's permission map). */
export const DeleteQuery = z.object({ confirm: z.literal('true') });

export const pathInt = z.coerce.number().int().min(1).max(2_147_483_647);

/**
 * An empty body is no body, whatever its Content-Type: many HTTP clients send
 * `Content-Type: application/json` on a POST without a body (e.g. `/stop`), and refusing it as
 * unparsable JSON left sessions running. Routes with a body schema then answer 422 `missing`.
 */
function registerEmptyBodies(app: FastifyInstance): void {
  // A declared empty body is not parsed at all (Fastify parses only when a Content-Type is present).
  app.addHook('onRequest', async (request) => {
    if (request.headers['content-length'] === '0' && request.headers['transfer-encoding'] === undefined) delete request.headers['content-type'];
  });
  // A chunked body that turns out empty: JSON's parser answers "no body" instead of json_invalid.
  const json = app.getDefaultJsonParser('error', 'ignore');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') {
      done(null, undefined);
      return;
    }
    if (nestingDepth(text) > MAX_JSON_DEPTH) {
      done(new RequestValidationError([{ type: 'json_invalid', loc: ['body', 0], msg: `JSON nested deeper than ${MAX_JSON_DEPTH} levels`, input: {} }]), undefined);
      return;
    }
    json(request, text, done);
  });
}

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
      if (c === 92) i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) {
      if (++depth > deepest) deepest = depth;
      if (deepest > MAX_JSON_DEPTH) return deepest;
    } else if (c === 125 || c === 93) depth--;
  }
  return deepest;
}
