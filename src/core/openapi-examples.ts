/**
 * Realistic examples for the OpenAPI document. The document is generated from the zod schemas, so
 * its examples are too: each request body and answer gets an `example` built by walking its schema,
 * taking a field's value from its own `examples`/`default`/`enum` where it has one, else from the
 * product's vocabulary below (by field name), else from its format or type. Every value is checked
 * against the field's pattern and length, so an example is always one the API would accept
 * (a test validates each against its schema).
 */
import type { CatalogueEntry } from './errors.js';
import { coreErrors } from './error-codes.js';

type Schema = Record<string, any>;

/** Candidate values by field name, first match of the field's constraints wins. */
const BY_NAME: Record<string, unknown[]> = {
  name: ['Ada', 'email', 'Ada Lovelace'],
  agent_name: ['Ada'],
  description: ['Friendly front-desk agent for the bakery'],
  avatar_id: ['face01'],
  default_voice_id: ['af_bella'],
  voice_id: ['af_bella'],
  backdrop_id: ['studio_grey'],
  backdrop: ['studio_grey'],
  top: ['#8d9196'],
  bottom: ['#4b4f55'],
  accent: ['#b9bec4'],
  primary_color: ['#2563eb'],
  website_url: ['https://bakery.example.com'],
  homepage_url: ['https://bakery.example.com'],
  final_url: ['https://bakery.example.com/opening-hours'],
  url: ['https://bakery.example.com/opening-hours'],
  success_url: ['https://bakery.example.com/billing/done'],
  cancel_url: ['https://bakery.example.com/billing'],
  model_url: ['/assets/faces/face01.glb'],
  player_url: ['https://presence.example.com/p/pk_3f9a2c7e1b/player'],
  preview_url: ['https://presence.example.com/preview/eyJhZ2VudCI6NDJ9'],
  ws_url: ['wss://presence.example.com/v1/sessions/2f1c6a8e-4b7d-4c1e-9a3f-5d8e7b6c4a21/render'],
  path: ['/opening-hours'],
  anchor: ['#hours'],
  system_prompt: ['You are Ada, the assistant of a small bakery. Answer briefly and warmly.'],
  instructions: ['Mention the weekend opening hours when asked about visits.'],
  welcome_message: ['Hi! I am Ada. How can I help you today?'],
  button_text: ['Talk to us'],
  position: ['bottom-right'],
  script_snippet: ['<script src="https://presence.example.com/embed.js" data-key="pk_3f9a2c7e1b"></script>'],
  iframe_snippet: ['<iframe src="https://presence.example.com/p/pk_3f9a2c7e1b" allow="microphone"></iframe>'],
  embed_key: ['pk_3f9a2c7e1b4d'],
  secret: ['vsec_9b2e41c07d5a4f3e8c1b6a2d'],
  secret_hint: ['vsec_…6a2d'],
  algorithm: ['HMAC-SHA256'],
  signature: ['5d41402abc4b2a76b9719d911017c592ae1f6c2b7e0e8a9d3f4c5b6a7e8d9c0f'],
  canonical_form: ['email=ada@example.com&name=Ada'],
  canonical_text: ['email=ada@example.com&name=Ada'],
  example: ['email=ada@example.com'],
  code: ['agent_not_found'],
  message: ['No agent with id 42'],
  text: ['Hello! We open at eight tomorrow.'],
  content: ['We bake sourdough every morning and open at 8:00 on weekdays.'],
  title: ['Opening hours'],
  topic: ['opening-hours'],
  question: ['Do you bake gluten-free bread?'],
  answer: ['Yes, every Friday.'],
  note: ['Monthly top-up'],
  camera: ['mid'],
  cameras: ['mid'],
  main: ['en'],
  morph: ['viseme_aa'],
  also: ['de'],
  gender: ['f'],
  mode: ['render'],
  session_id: ['2f1c6a8e-4b7d-4c1e-9a3f-5d8e7b6c4a21'],
  conversation_id: ['7c9e6679-7425-40de-944b-e07fc1f90ae7'],
  checkout_session_id: ['cs_test_a1B2c3D4e5F6'],
  delivery_id: ['dlv_01J8Z6Q4W1'],
  visitor_id: ['visitor-8d21'],
  event_id: ['evt_5b1f0c'],
  voice_provider: ['kokoro'],
  tts_primary: ['kokoro'],
  provider: ['kokoro'],
  engine: ['offline'],
  end_reason: ['stopped'],
  language: ['en'],
  locale: ['en-US'],
  timezone: ['Europe/Berlin'],
  phase: ['reading'],
  error: ['The website answered 503'],
  category: ['pricing'],
  default_category: ['general'],
  detail_collected: ['email'],
  start: ['09:00'],
  end: ['18:00'],
  month: ['2026-11'],
  currency: ['USD'],
  amount: ['25.00'],
  balance: ['74.50'],
  price_per_minute: ['0.10'],
  premium_voice_price_per_minute: ['0.05'],
  session_amount: ['12.40'],
  premium_voice_amount: ['1.10'],
  total_charged: ['13.50'],
  total: ['13.50'],
  charged: ['13.50'],
  topups: ['25.00'],
  adjustments: ['0.00'],
  template: ['New lead from {{agent_name}}: {{email}}'],
  response_excerpt: ['{"ok":true}'],
};

const BY_FORMAT: Record<string, string> = {
  'date-time': '2026-11-23T09:30:00.000Z',
  date: '2026-11-23',
  uri: 'https://bakery.example.com',
  url: 'https://bakery.example.com',
  email: 'ada@example.com',
  uuid: '2f1c6a8e-4b7d-4c1e-9a3f-5d8e7b6c4a21',
};

function fits(schema: Schema, value: unknown): boolean {
  if (typeof value === 'string') {
    if (schema.type !== undefined && schema.type !== 'string' && !(Array.isArray(schema.type) && schema.type.includes('string'))) return false;
    if (schema.pattern && !new RegExp(schema.pattern, 'u').test(value)) return false;
    if (schema.minLength !== undefined && [...value].length < schema.minLength) return false;
    if (schema.maxLength !== undefined && [...value].length > schema.maxLength) return false;
    return true;
  }
  if (typeof value === 'number') {
    if (schema.type === 'integer' && !Number.isInteger(value)) return false;
    if (schema.minimum !== undefined && value < schema.minimum) return false;
    if (schema.maximum !== undefined && value > schema.maximum) return false;
    if (schema.exclusiveMinimum !== undefined && value <= schema.exclusiveMinimum) return false;
    if (schema.exclusiveMaximum !== undefined && value >= schema.exclusiveMaximum) return false;
    return true;
  }
  return true;
}

const STRICT_FORMATS = new Set(['date-time', 'date', 'uuid', 'email']);

function stringFor(schema: Schema, name: string | undefined): string {
  if (STRICT_FORMATS.has(schema.format) && fits(schema, BY_FORMAT[schema.format])) return BY_FORMAT[schema.format];
  for (const candidate of (name && BY_NAME[name]) || []) if (typeof candidate === 'string' && fits(schema, candidate)) return candidate;
  const formatted = schema.format ? BY_FORMAT[schema.format] : undefined;
  if (formatted && fits(schema, formatted)) return formatted;
  const guesses: string[] = [];
  if (name?.endsWith('_at')) guesses.push(BY_FORMAT['date-time']);
  if (name?.endsWith('_url') || name === 'url') guesses.push('https://bakery.example.com');
  if (name?.endsWith('_id')) guesses.push(`${name.slice(0, -3)}_01`);
  if (name)
    guesses.push(
      name.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase()),
      name,
    );
  guesses.push('example');
  for (const guess of guesses) if (fits(schema, guess)) return guess;
  return 'a'.repeat(Math.max(1, schema.minLength ?? 1));
}

function numberFor(schema: Schema, name: string | undefined): number {
  const integer = schema.type === 'integer';
  const wanted =
    name === 'id' || name?.endsWith('_id')
      ? 42
      : name?.startsWith('max_')
        ? 600
        : name?.endsWith('_seconds') || name === 'seconds'
          ? integer
            ? 30
            : 12.5
          : name?.endsWith('_ms')
            ? 250
            : name === 'p50'
              ? 740
              : name === 'p95'
                ? 1400
                : name === 'answer_rate'
                  ? 0.87
                  : name?.endsWith('_bytes')
                    ? 524288
                    : name === 'limit'
                      ? 20
                      : name === 'offset'
                        ? 0
                        : integer
                          ? 3
                          : 0.8;
  if (fits(schema, wanted)) return wanted;
  const low = schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + (integer ? 1 : 0.5) : undefined);
  const high = schema.maximum ?? (schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum - (integer ? 1 : 0.5) : undefined);
  if (low !== undefined) return low;
  if (high !== undefined) return high;
  return 1;
}

/**
 * An example value for `schema` (resolving `#/components/schemas/…` in `components`). `name` is the
 * property the schema belongs to, used to pick a realistic value.
 */
export function exampleFor(schema: Schema | undefined, components: Record<string, Schema>, name?: string, seen: string[] = []): unknown {
  if (!schema || typeof schema !== 'object') return null;
  if (Array.isArray(schema.examples) && schema.examples.length) return schema.examples[0];
  if (schema.example !== undefined) return schema.example;
  if (schema.default !== undefined) return schema.default;
  if (typeof schema.$ref === 'string') {
    const id = schema.$ref.replace('#/components/schemas/', '');
    if (seen.includes(id) || !components[id]) return null;
    return exampleFor(components[id], components, name, [...seen, id]);
  }
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length) {
    const named = (name ? BY_NAME[name] : undefined)?.find((v) => schema.enum.includes(v));
    return named ?? schema.enum.find((v: unknown) => v !== null) ?? schema.enum[0];
  }
  for (const key of ['anyOf', 'oneOf']) {
    if (Array.isArray(schema[key])) {
      const branch = schema[key].find((b: Schema) => b.type !== 'null') ?? schema[key][0];
      return exampleFor(branch, components, name, seen);
    }
  }
  if (Array.isArray(schema.allOf)) {
    return Object.assign({}, ...schema.allOf.map((b: Schema) => exampleFor(b, components, name, seen) ?? {}));
  }
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;
  switch (type) {
    case 'object':
    case undefined: {
      if (type === undefined && !schema.properties) return null;
      const out: Record<string, unknown> = {};
      for (const [key, property] of Object.entries<Schema>(schema.properties ?? {})) out[key] = exampleFor(property, components, key, seen);
      if (
        !schema.properties &&
        schema.additionalProperties &&
        typeof schema.additionalProperties === 'object' &&
        Object.keys(schema.additionalProperties).length
      ) {
        out.key = exampleFor(schema.additionalProperties, components, 'key', seen);
      }
      return out;
    }
    case 'array': {
      const item = exampleFor(
        Array.isArray(schema.prefixItems) ? schema.prefixItems[0] : schema.items,
        components,
        name === 'cameras' ? 'camera' : name === 'also' ? 'also' : name?.replace(/s$/, ''),
        seen,
      );
      if (Array.isArray(schema.prefixItems)) return schema.prefixItems.map((p: Schema) => exampleFor(p, components, undefined, seen));
      return Array.from({ length: Math.max(1, schema.minItems ?? 1) }, () => item);
    }
    case 'string':
      return stringFor(schema, name);
    case 'integer':
    case 'number':
      return numberFor(schema, name);
    case 'boolean':
      return true;
    default:
      return null;
  }
}

/**
 * Tidies the generated document for readers and tools: components lose the `$id`/`$schema` the
 * zod converter leaves on them (Swagger UI resolved every `$ref` inside a component against that
 * `$id` and showed bodies as `any $ref=…`), and every JSON request body and answer gets an example.
 */
export function tidyOpenApi(document: Schema, errorsOf: (method: string, path: string) => CatalogueEntry[] = () => []): Schema {
  document.components ??= {};
  document.components.schemas ??= {};
  const components: Record<string, Schema> = document.components.schemas;
  Object.assign(components, ERROR_SCHEMAS);
  for (const schema of Object.values(components)) {
    delete schema.$id;
    delete schema.$schema;
  }
  for (const [path, operations] of Object.entries<Schema>(document.paths ?? {})) {
    for (const [method, operation] of Object.entries<Schema>(operations)) {
      if (!operation || typeof operation !== 'object') continue;
      const medias = [operation.requestBody?.content, ...Object.values<Schema>(operation.responses ?? {}).map((r) => r?.content)];
      for (const content of medias) {
        const media = content?.['application/json'];
        if (!media?.schema || media.example !== undefined || media.examples !== undefined) continue;
        if (media.schema.type === 'null') continue;
        media.example = exampleFor(media.schema, components);
      }
      addErrorAnswers(method, path, operation, errorsOf(method, path));
      for (const parameter of operation.parameters ?? []) {
        if (parameter.example === undefined && parameter.schema) parameter.example = exampleFor(parameter.schema, components, parameter.name);
      }
    }
  }
  return document;
}

/** The interface's error shapes, shared by every operation's error answers. */
const ERROR_SCHEMAS: Record<string, Schema> = {
  Error: {
    type: 'object',
    description: 'An error: `detail` is a `{code, message}` object, or a sentence for routing errors (404 Not Found, 413, bad URL).',
    properties: {
      detail: {
        anyOf: [{ type: 'object', properties: { code: { type: 'string' }, message: { type: 'string' } }, required: ['code', 'message'] }, { type: 'string' }],
      },
    },
    required: ['detail'],
  },
  ValidationError: {
    type: 'object',
    description: "Request validation failed (FastAPI's shape): one item per problem, `loc` naming where.",
    properties: {
      detail: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            type: { type: 'string' },
            loc: { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'integer' }] } },
            msg: { type: 'string' },
            input: {},
            ctx: { type: 'object' },
          },
          required: ['type', 'loc', 'msg'],
        },
      },
    },
    required: ['detail'],
  },
};

const errorAnswer = (description: string, example: unknown, schema = 'Error') => ({
  description,
  content: { 'application/json': { schema: { $ref: `#/components/schemas/${schema}` }, example } },
});

const VALIDATION_EXAMPLE = { detail: [{ type: 'missing', loc: ['body', 'name'], msg: 'Field required', input: {} }] };

/** One answer per status for catalogued errors, each code named with what it says (twice when it says two things here, like the key check's and POST /v1/keys' own `missing_permission`). */
function catalogueAnswers(entries: CatalogueEntry[]): Map<string, unknown> {
  const byStatus = new Map<number, CatalogueEntry[]>();
  for (const entry of entries) {
    const list = byStatus.get(entry.status) ?? [];
    if (!list.some((e) => e.code === entry.code && e.summary === entry.summary)) list.push(entry);
    byStatus.set(entry.status, list);
  }
  const out = new Map<string, unknown>();
  for (const [status, list] of byStatus) {
    const description = list.map((e) => `\`${e.code}\`: ${e.summary}`).join('\n\n');
    out.set(String(status), errorAnswer(description, { detail: { code: list[0]!.code, message: list[0]!.summary } }));
  }
  return out;
}

/** An answer the route declares itself (its own schema, e.g. a 503 with a reason) keeps it; the codes are added to its description. */
function mergeCodes(existing: Schema, answer: Schema): void {
  const own = String(existing.description ?? '');
  const added = String(answer.description ?? '')
    .split('\n\n')
    .filter((line) => line.startsWith('`') && !own.includes(line.split(':')[0]!));
  if (added.length) existing.description = [own, ...added].filter(Boolean).join('\n\n');
}

/**
 * Documents the error answers an operation can give, in the interface's shapes: its own catalogued
 * errors (a route's `config.errors`); the key check's (401/403/429, `core/error-codes.ts`) for routes
 * behind an API key (not the public ones, marked `security: []`) and 400 `confirmation_required` on
 * their DELETEs; the framework's: 422 for every /v1 route (each refuses unknown query parameters),
 * 413 and 415 for routes taking a JSON body, 414 for routes with path parameters (over 100
 * characters); and a generic 404 for routes naming a record.
 */
function addErrorAnswers(method: string, path: string, operation: Schema, own: CatalogueEntry[]): void {
  operation.responses ??= {};
  const answers = operation.responses as Record<string, Schema>;
  const add = (status: string, answer: Schema) => {
    if (answers[status] === undefined) answers[status] = answer;
    else if (Number(status) >= 400) mergeCodes(answers[status], answer);
  };
  const secured = path.startsWith('/v1/') && !(Array.isArray(operation.security) && operation.security.length === 0);
  const entries = [...own];
  if (secured) {
    entries.push(coreErrors.invalid_api_key, coreErrors.missing_permission, coreErrors.rate_limited);
    if (method === 'delete') entries.push(coreErrors.confirmation_required);
  }
  const validated = path.startsWith('/v1/') || !!operation.requestBody || (operation.parameters ?? []).length > 0;
  for (const [status, answer] of catalogueAnswers(entries)) {
    if (status === '422' && validated) {
      // Both shapes: the request's validation items, or a catalogued `{code, message}`.
      const { description } = answer as { description: string };
      add('422', {
        description: `The request is not valid (validation items), or:\n\n${description}`,
        content: {
          'application/json': {
            schema: { anyOf: [{ $ref: '#/components/schemas/ValidationError' }, { $ref: '#/components/schemas/Error' }] },
            example: VALIDATION_EXAMPLE,
          },
        },
      });
    } else add(status, answer as Schema);
  }
  if (path.includes('{')) {
    add('404', errorAnswer('No such record (of this account)', { detail: { code: 'agent_not_found', message: 'No agent with id 42' } }));
    add('414', errorAnswer('A path parameter is longer than 100 characters', { detail: "'aaaa…' is exceeding the max param length" }));
  }
  if (operation.requestBody) {
    add('413', errorAnswer('The request body is over 2 MB', { detail: 'Request body is too large' }));
    add('415', errorAnswer('The body is not JSON (Content-Type must be application/json)', { detail: 'Content-Type must be application/json' }));
  }
  if (validated) add('422', errorAnswer('The request is not valid', VALIDATION_EXAMPLE, 'ValidationError'));
}
