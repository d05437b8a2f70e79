/**
 * Issue 15, item 8, as the probe found it: every route of `/openapi.json` is sent hostile input
 * (a NUL or an unpaired surrogate in each text field of its body and query, ids beyond the
 * database's integer range, bad percent-encoding in its path and query), and each answer is a 4xx in the
 * `{"detail": …}` shape, never a 500. Routes and fields come from the document, so a new route is
 * probed without touching this file.
 */
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { forEachEngine, startTestApp, type TestApp } from '../support/app.js';
import { unlistedAnswer } from '../support/openapi-errors.js';

/** `op` is the operation probed, as /openapi.json names it (`GET /v1/agent/{agent_id}`). */
type Probe = { op: string; method: string; path: string; query?: string; body?: string | Buffer; what: string };

const LIVEAVATAR_ROUTES = new Set([
  'POST /v1/sessions/token',
  'POST /v1/sessions/start',
  'POST /v1/sessions/keep-alive',
  'POST /v1/sessions/stop',
  'DELETE /v1/sessions',
]);

/** Each leaf of an example object, with its path, so one field at a time can be spoiled. */
function leaves(value: unknown, at: Array<string | number> = []): Array<{ at: Array<string | number>; value: unknown }> {
  if (Array.isArray(value)) return value.flatMap((v, i) => leaves(v, [...at, i]));
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => leaves(v, [...at, k]));
  return [{ at, value }];
}

function setAt(value: any, at: Array<string | number>, leaf: unknown): any {
  const copy = structuredClone(value);
  let node = copy;
  for (const key of at.slice(0, -1)) node = node[key];
  node[at[at.length - 1]] = leaf;
  return copy;
}

/** A raw request, so bytes and escapes reach the server exactly as written. */
function raw(port: number, key: string, probe: Probe): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const target = probe.path + (probe.query ? `?${probe.query}` : '');
    const body = probe.body === undefined ? Buffer.alloc(0) : Buffer.from(probe.body);
    const head =
      `${probe.method} ${target} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n` +
      (probe.body === undefined ? '' : `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n`) +
      '\r\n';
    const socket = net.connect({ host: '127.0.0.1', port }, () => socket.end(Buffer.concat([Buffer.from(head), body])));
    let text = '';
    socket
      .setEncoding('utf8')
      .on('data', (d) => (text += d))
      .on('end', () => {
        resolve({ status: Number(text.split(' ')[1]), body: text.slice(text.indexOf('\r\n\r\n') + 4) });
      })
      .on('error', reject);
  });
}

forEachEngine('every route probed with hostile input', (engine) => {
  let t: TestApp;
  let document: any;
  let agentId: number;
  before(async () => {
    t = await startTestApp(engine);
    document = await (await fetch(`${t.url}/openapi.json`)).json();
    agentId = (await t.request('POST', '/v1/agent/create', { body: { name: 'Probe target', concurrency_limit: 50 } })).body.id;
  });
  after(() => t?.close());

  /** The answers /openapi.json does not list for their operation (status, or catalogued code). */
  const unlisted = new Set<string>();
  beforeEach(() => unlisted.clear());
  const listedOrNot = (probe: Probe, answer: { status: number; body: string }) => {
    let body: unknown;
    try {
      body = JSON.parse(answer.body);
    } catch {
      return; // not JSON: the shape check reports it
    }
    const [method, template] = [probe.op.slice(0, probe.op.indexOf(' ')), probe.op.slice(probe.op.indexOf(' ') + 1)];
    const why = unlistedAnswer(document, method, template, answer.status, body);
    if (why) unlisted.add(`${probe.op} (${probe.what}): ${why}`);
  };

  test('no answer is a 500 or outside the {"detail": …} shape', async () => {
    const probes: Probe[] = [];
    for (const [template, operations] of Object.entries<any>(document.paths)) {
      for (const [method, operation] of Object.entries<any>(operations)) {
        if (method === 'delete' || template.includes('webhook')) continue;
        const op = `${method.toUpperCase()} ${template}`;
        const params = (operation.parameters ?? []) as any[];
        const fill = (id: unknown) =>
          template.replace(/\{([^}]+)\}/g, (_m, name) =>
            name === 'agent_id' ? String(agentId) : String(id ?? params.find((p) => p.name === name)?.example ?? '1'),
          );
        const path = fill(undefined);
        const query = params.filter((p) => p.in === 'query');
        const baseQuery = new URLSearchParams(query.filter((p) => p.required).map((p) => [p.name, String(p.example)])).toString();
        // Path: an id beyond int32, and bad percent-encoding.
        if (template.includes('{')) {
          probes.push({ op, method: method.toUpperCase(), path: template.replace(/\{([^}]+)\}/g, '2147483648'), query: baseQuery, what: 'path id 2147483648' });
          probes.push({ op, method: method.toUpperCase(), path: template.replace(/\{([^}]+)\}/g, '%zz'), query: baseQuery, what: 'path %zz' });
        }
        // Query: each parameter spoiled.
        for (const parameter of query) {
          const spoiled = new URLSearchParams(baseQuery);
          const bad = parameter.schema?.type === 'integer' || parameter.schema?.type === 'number' ? '2147483648' : 'a\u0000b';
          spoiled.set(parameter.name, bad);
          probes.push({ op, method: method.toUpperCase(), path, query: spoiled.toString(), what: `query ${parameter.name}=${JSON.stringify(bad)}` });
          // Bad percent-encoding in the value (kept as written by the query parser, then validated).
          probes.push({
            op,
            method: method.toUpperCase(),
            path,
            query: `${baseQuery ? `${baseQuery}&` : ''}${parameter.name}=%zz%E0%A4`,
            what: `query ${parameter.name} with bad percent-encoding`,
          });
        }
        // Body: each leaf of the example spoiled in turn.
        const example = operation.requestBody?.content?.['application/json']?.example;
        if (example === undefined) continue;
        for (const leaf of leaves(example)) {
          const last = String(leaf.at[leaf.at.length - 1] ?? '');
          if (typeof leaf.value === 'string') {
            probes.push({
              op,
              method: method.toUpperCase(),
              path,
              query: baseQuery,
              body: JSON.stringify(setAt(example, leaf.at, 'x\u0000y')),
              what: `body ${leaf.at.join('.')} with NUL`,
            });
            probes.push({
              op,
              method: method.toUpperCase(),
              path,
              query: baseQuery,
              body: JSON.stringify(setAt(example, leaf.at, 'SURROGATE')).replace('"SURROGATE"', '"x\\ud800"'),
              what: `body ${leaf.at.join('.')} with a lone surrogate`,
            });
          } else if (typeof leaf.value === 'number' && (last === 'id' || last.endsWith('_id'))) {
            probes.push({
              op,
              method: method.toUpperCase(),
              path,
              query: baseQuery,
              body: JSON.stringify(setAt(example, leaf.at, 2147483648)),
              what: `body ${leaf.at.join('.')} = 2147483648`,
            });
          }
        }
        probes.push({
          op,
          method: method.toUpperCase(),
          path,
          query: baseQuery,
          body: '{"a":' + '['.repeat(200) + ']'.repeat(200) + '}',
          what: 'deeply nested body',
        });
      }
    }
    assert.ok(probes.length > 200, `${probes.length} probes`);
    const port = Number(new URL(t.url).port);
    const failures: string[] = [];
    for (const probe of probes) {
      const answer = await raw(port, t.key, probe);
      let shape = 'not JSON';
      try {
        const parsed = JSON.parse(answer.body);
        shape = Object.keys(parsed).join(',');
      } catch {
        /* reported below */
      }
      // The LiveAvatar-compatible routes answer in LiveAvatar's envelope, with `detail` inside (contract.md).
      const expected = LIVEAVATAR_ROUTES.has(`${probe.method} ${probe.path}`) ? 'code,message,data,detail' : 'detail';
      if (answer.status >= 500 || (answer.status >= 400 && shape !== expected))
        failures.push(`${probe.method} ${probe.path} (${probe.what}): ${answer.status} ${answer.body.slice(0, 160)}`);
      if (answer.status < 300 && /NUL|surrogate/.test(probe.what))
        failures.push(`${probe.method} ${probe.path} (${probe.what}): accepted with ${answer.status}`);
      listedOrNot(probe, answer);
    }
    assert.deepEqual(failures, []);
    assert.deepEqual([...unlisted], [], 'every error answered is one /openapi.json lists for its operation');
  });

  /**
   * Issue 27's probe, generated for every operation of the document: ids written loosely in the
   * path, a parameter the route does not know, a JSON body that is not UTF-8, and an out-of-range id
   * inside an `*_ids` list. Each must be refused with a 4xx before the route acts (DELETEs
   * included: a typo must not empty a list).
   */
  test('loose path ids, unknown query parameters, non-UTF-8 bodies and out-of-range *_ids are refused on every operation', async () => {
    const probes: Probe[] = [];
    let operations = 0;
    for (const [template, byMethod] of Object.entries<any>(document.paths)) {
      if (!template.startsWith('/v1/') || template.includes('webhook')) continue;
      for (const [method, operation] of Object.entries<any>(byMethod)) {
        operations++;
        const op = `${method.toUpperCase()} ${template}`;
        const params = (operation.parameters ?? []) as any[];
        const query = params.filter((p) => p.in === 'query');
        const baseQuery = new URLSearchParams(query.filter((p) => p.required).map((p) => [p.name, String(p.example)])).toString();
        // A fresh agent per DELETE, so a refusal that failed would delete that one, not the target.
        const target = method === 'delete' ? (await t.request('POST', '/v1/agent/create', { body: { name: 'Delete probe' } })).body.id : agentId;
        const fill = (value: (name: string) => string) => template.replace(/\{([^}]+)\}/g, (_m, name) => value(name));
        const path = fill((name) => (name === 'agent_id' ? String(target) : String(params.find((p) => p.name === name)?.example ?? '1')));
        const M = method.toUpperCase();
        for (const parameter of params.filter((p) => p.in === 'path' && p.schema?.type === 'integer')) {
          for (const loose of ['0xba', '+1', '%201', '01', '1e0', '1.0']) {
            const spoiled = fill((name) =>
              name === parameter.name ? loose : name === 'agent_id' ? String(target) : String(params.find((p) => p.name === name)?.example ?? '1'),
            );
            probes.push({ op, method: M, path: spoiled, query: baseQuery, what: `path ${parameter.name}=${loose}` });
          }
        }
        probes.push({ op, method: M, path, query: `${baseQuery ? `${baseQuery}&` : ''}isPrimary=true`, what: 'unknown query parameter isPrimary' });
        const example = operation.requestBody?.content?.['application/json']?.example;
        if (example !== undefined) {
          const text = JSON.stringify(example);
          const at = text.indexOf('"', 1) > 0 ? text.indexOf('":"') : -1;
          const bytes =
            at > 0
              ? Buffer.concat([Buffer.from(text.slice(0, at + 3)), Buffer.from([0xc3, 0x28]), Buffer.from(text.slice(at + 3))])
              : Buffer.concat([Buffer.from('{"x":"'), Buffer.from([0xff]), Buffer.from('"}')]);
          probes.push({ op, method: M, path, query: baseQuery, body: bytes, what: 'a body that is not UTF-8' });
          for (const leaf of leaves(example)) {
            const list = leaf.at[leaf.at.length - 2];
            if (typeof leaf.value === 'number' && typeof list === 'string' && list.endsWith('_ids')) {
              probes.push({
                op,
                method: M,
                path,
                query: baseQuery,
                body: JSON.stringify(setAt(example, leaf.at, 99_999_999_999)),
                what: `body ${leaf.at.join('.')} = 99999999999`,
              });
            }
          }
        }
      }
    }
    assert.ok(operations >= 90, `${operations} operations`);
    assert.ok(probes.length > 600, `${probes.length} probes`);
    const port = Number(new URL(t.url).port);
    const failures: string[] = [];
    for (const probe of probes) {
      const answer = await raw(port, t.key, probe);
      if (answer.status < 400 || answer.status >= 500)
        failures.push(`${probe.method} ${probe.path}${probe.query ? `?${probe.query}` : ''} (${probe.what}): ${answer.status} ${answer.body.slice(0, 160)}`);
      listedOrNot(probe, answer);
    }
    assert.deepEqual(failures, []);
    assert.deepEqual([...unlisted], [], 'every error answered is one /openapi.json lists for its operation');
    // Nothing the refused DELETEs named went: the target agent still has its record.
    assert.equal((await t.request('GET', `/v1/agent/${agentId}`)).status, 200);
  });
});
