/**
 * Hostile input on every operation the server documents (issue 27, item 6), generated from the
 * served /openapi.json at test time, so a route is covered the day it lands. For each operation:
 * malformed path ids, an unknown query parameter, wrong-typed, oversized and non-UTF-8 JSON bodies.
 * Every answer is a 4xx in the interface's error shape (`{"detail": …}`), never a 5xx, and the
 * database is the same after the whole sweep as before it (a refused request changes nothing).
 * Also: a render socket URL with `token` given twice closes 4003, not 1011. Both engines.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { forEachEngine, startTestApp, type TestApp } from '../support/app.js';
import { Client, makeAgent, started } from '../sessions/helpers.js';
import { unlistedAnswer } from '../support/openapi-errors.js';

type Schema = {
  type?: string | string[];
  properties?: Record<string, Schema>;
  anyOf?: Schema[];
  allOf?: Schema[];
  oneOf?: Schema[];
  items?: Schema;
  $ref?: string;
};
interface Operation {
  method: string;
  path: string;
  params: Array<{ name: string; in: string; required?: boolean; schema?: Schema }>;
  jsonBody?: Schema;
  /** Whether the body may be left out (then `null` is a valid body). */
  bodyOptional: boolean;
}

/** Tables that record who asked, not what they changed (key use times, rate limits): left out of the comparison. */
const BOOKKEEPING = new Set(['schema_migrations', 'schema_migrations_lock']);

/** The schema with `$ref`s to components and single-member allOf/anyOf/oneOf unwrapped (one level). */
function resolve(doc: any, schema: Schema | undefined): Schema | undefined {
  let s = schema;
  for (let i = 0; i < 5 && s; i++) {
    if (s.$ref)
      s = s.$ref
        .replace(/^#\//, '')
        .split('/')
        .reduce((node: any, key) => node?.[key], doc);
    else if (!s.type && !s.properties && (s.allOf ?? s.oneOf ?? s.anyOf)?.length) {
      // A nullable body is anyOf [the body, null]: the body's own schema is what to get wrong.
      const members = (s.allOf ?? s.oneOf ?? s.anyOf)!.filter((m) => m.type !== 'null');
      s = members[0] ?? s.anyOf?.[0];
    } else break;
  }
  return s;
}

function operationsOf(doc: any): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const params = [...(item.parameters ?? []), ...(op.parameters ?? [])];
      const raw = op.requestBody?.content?.['application/json']?.schema;
      const jsonBody = raw && resolve(doc, raw);
      if (jsonBody?.properties) jsonBody.properties = Object.fromEntries(Object.entries(jsonBody.properties).map(([k, v]) => [k, resolve(doc, v as Schema)!]));
      const nullable = JSON.stringify(raw ?? {}).includes('"type":"null"') || raw?.nullable === true;
      out.push({ method: method.toUpperCase(), path, params, jsonBody, bodyOptional: !op.requestBody?.required || nullable });
    }
  }
  return out;
}

/** A value of the wrong type for a schema: a number where text is wanted, text where a number is. */
function wrongTyped(schema: Schema | undefined): unknown {
  const type = Array.isArray(schema?.type) ? schema!.type[0] : (schema?.type ?? schema?.anyOf?.[0]?.type);
  switch (type) {
    case 'string':
      return 12345;
    case 'integer':
    case 'number':
      return 'not a number';
    case 'boolean':
      return 'maybe';
    case 'array':
      return { not: 'an array' };
    case 'object':
      return 'not an object';
    default:
      return [[[]]];
  }
}

/** A JSON object whose every property has the wrong type. */
function wrongTypedBody(schema: Schema): Record<string, unknown> {
  const props = schema.properties ?? {};
  const body: Record<string, unknown> = Object.fromEntries(Object.entries(props).map(([k, s]) => [k, wrongTyped(s)]));
  return Object.keys(body).length ? body : { unexpected: [[[]]] };
}

const MALFORMED_IDS = ['0xba', '-1', '1.5', '%20', '99999999999999999999', 'x'.repeat(300), '%00', '..%2F..%2Fetc'];

async function fingerprint(t: TestApp): Promise<Record<string, string>> {
  const { rows } = await sql<{
    table_name: string;
  }>`select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE' order by table_name`.execute(t.database.db);
  const out: Record<string, string> = {};
  for (const { table_name } of rows) {
    if (BOOKKEEPING.has(table_name)) continue;
    const q = sql.raw(`select count(*)::text || ':' || coalesce(md5(string_agg(r::text, '|' order by r::text)), '') as f from "${table_name}" r`);
    out[table_name] = ((await q.execute(t.database.db)).rows[0] as { f: string }).f;
  }
  return out;
}

forEachEngine('hostile input on every documented operation', (engine) => {
  let t: TestApp;
  let operations: Operation[];
  let agentId: number;
  let doc: any;
  before(async () => {
    t = await startTestApp(engine);
    agentId = await makeAgent(t, {});
    doc = await (await fetch(`${t.url}/openapi.json`)).json();
    operations = operationsOf(structuredClone(doc));
  });
  after(() => t?.close());

  /** A path with its parameters filled: `bad` for the one named, plausible values for the rest. */
  const fill = (op: Operation, bad?: { name: string; value: string }) =>
    op.path.replace(/\{(\w+)\}/g, (_, name: string) => {
      if (bad?.name === name) return bad.value;
      const schema = op.params.find((p) => p.in === 'path' && p.name === name)?.schema;
      return schema?.type === 'integer' ? String(agentId) : 'placeholder-id';
    });

  async function send(method: string, path: string, body?: Buffer | string, type = 'application/json') {
    const res = await fetch(t.url + path, {
      method,
      headers: { authorization: `Bearer ${t.key}`, ...(body !== undefined ? { 'content-type': type } : {}) },
      body: body as BodyInit | undefined,
    });
    const text = await res.text();
    let json: any;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, json, text };
  }

  test('every operation refuses malformed ids, unknown parameters and bad bodies with a 4xx in the error shape, and changes nothing', async (ctx) => {
    assert.ok(operations.length > 50, `the document lists the operations (${operations.length})`);
    const before = await fingerprint(t);
    const failures: string[] = [];
    const unlisted = new Set<string>();
    let requests = 0;
    let op!: Operation;
    const expectRefused = async (label: string, method: string, path: string, body?: Buffer | string, type?: string) => {
      requests++;
      const res = await send(method, path, body, type);
      const shaped = res.json && typeof res.json === 'object' && 'detail' in res.json;
      if (res.status < 400 || res.status >= 500 || !shaped)
        failures.push(`${label} ${method} ${path.slice(0, 120)} -> ${res.status} ${res.text.slice(0, 160)}`);
      // The answer is one the operation's OpenAPI lists (its status, and its code if catalogued).
      const why = unlistedAnswer(doc, op.method, op.path, res.status, res.json);
      if (why) unlisted.add(`${op.method} ${op.path}: ${why}`);
    };
    for (op of operations) {
      const label = `${op.method} ${op.path}`;
      // Malformed path ids.
      for (const p of op.params.filter((p) => p.in === 'path')) {
        for (const value of MALFORMED_IDS)
          await expectRefused(`[path ${p.name}=${value.slice(0, 20)}]`, op.method, fill(op, { name: p.name, value }), op.jsonBody ? '{}' : undefined);
      }
      // An unknown query parameter (beside confirm=true, so a delete would otherwise go ahead).
      await expectRefused('[unknown query]', op.method, `${fill(op)}?confirm=true&zz_unknown=1`, op.jsonBody ? '{}' : undefined);
      if (!op.jsonBody) continue;
      const path = fill(op);
      await expectRefused('[wrong-typed body]', op.method, path, JSON.stringify(wrongTypedBody(op.jsonBody)));
      for (const body of ['[]', '"text"', '42', ...(op.bodyOptional ? [] : ['null']), '{"a":', '{"a":1}{"b":2}'])
        await expectRefused(`[body ${body}]`, op.method, path, body);
      await expectRefused('[oversized body]', op.method, path, JSON.stringify({ name: 'x'.repeat(3 * 1024 * 1024) }));
      await expectRefused('[invalid UTF-8]', op.method, path, Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('"}')]));
    }
    ctx.diagnostic(`${operations.length} operations, ${requests} hostile requests`);
    const afterSweep = await fingerprint(t);
    const changed = Object.keys(before).filter((k) => before[k] !== afterSweep[k]);
    assert.deepEqual(failures, [], `${failures.length} of ${requests} hostile requests were not refused properly`);
    assert.deepEqual([...unlisted], [], 'every error answered is one /openapi.json lists for its operation');
    assert.deepEqual(changed, [], 'no table changed by refused requests');
    // The fingerprint does see a change: an accepted request moves it.
    assert.equal((await t.request('PATCH', `/v1/agent/${agentId}`, { body: { name: 'Renamed' } })).status, 200);
    assert.notEqual((await fingerprint(t)).agents, afterSweep.agents);
  });

  test("a render socket URL with 'token' given twice closes 4003, not 1011", async () => {
    const s = await started(t, { agent_id: agentId, mode: 'render' });
    const url = new URL(s.ws_url);
    const token = url.searchParams.get('token')!;
    url.searchParams.append('token', token);
    const socket = new Client(url.toString());
    assert.equal(await socket.closeCodeWithin(), 4003);
    assert.ok(!socket.messages.some((m) => m.type === 'session.state_updated'), 'nothing is sent before the refusal');
    await t.request('POST', `/v1/sessions/${s.session_id}/stop`);
  });
});
