/**
 * Issue 30, item 5: every error code the API raises is in a capability's catalogue (`errors.ts`),
 * raised from it, and /openapi.json lists a route's catalogued errors (with the API-key check's).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { catalogueEntries } from '../../src/core/errors.js';
import { forEachEngine, startTestApp, type TestApp } from '../support/app.js';

const src = fileURLToPath(new URL('../../src/', import.meta.url));

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'client' ? [] : sources(full);
    return e.name.endsWith('.ts') ? [full] : [];
  });
}

const CATALOGUES = [
  'core/error-codes.ts',
  ...fs
    .readdirSync(src)
    .filter((d) => fs.existsSync(path.join(src, d, 'errors.ts')) && d !== 'core')
    .map((d) => `${d}/errors.ts`),
];

describe('the error catalogues', () => {
  before(async () => {
    for (const file of CATALOGUES) await import(path.join(src, file));
  });

  it('no error is raised with an inline code: every ApiError is made by a catalogue', () => {
    const inline: string[] = [];
    for (const file of sources(src)) {
      if (file.endsWith(path.join('core', 'errors.ts'))) continue;
      const text = fs.readFileSync(file, 'utf8');
      for (const m of text.matchAll(/new ApiError\(/g)) inline.push(`${path.relative(src, file)}@${m.index}`);
    }
    assert.deepEqual(inline, []);
  });

  it('every catalogue error a source file raises or names exists in that catalogue', () => {
    const byVariable = new Map<string, Set<string>>();
    for (const file of CATALOGUES) {
      const text = fs.readFileSync(path.join(src, file), 'utf8');
      const name = /export const (\w+Errors) = errorCatalogue\('([\w-]+)'/.exec(text);
      assert.ok(name, `${file} exports a catalogue`);
      const codes = new Set(
        catalogueEntries()
          .filter((e) => e.capability === name[2])
          .map((e) => e.code),
      );
      assert.ok(codes.size > 0, `${file} lists codes`);
      byVariable.set(name[1]!, codes);
    }
    let uses = 0;
    const unknown: string[] = [];
    for (const file of sources(src)) {
      const text = fs.readFileSync(file, 'utf8');
      for (const m of text.matchAll(/\b(\w+Errors)\.(\w+)\b/g)) {
        const codes = byVariable.get(m[1]!);
        if (!codes) continue;
        uses++;
        if (!codes.has(m[2]!)) unknown.push(`${path.relative(src, file)}: ${m[0]}`);
      }
    }
    assert.deepEqual(unknown, []);
    assert.ok(uses > 130, `the catalogues are used (${uses} uses)`);
  });

  it('each code has one status within its capability, a 4xx/5xx, and something to say', () => {
    for (const entry of catalogueEntries()) {
      assert.ok(entry.status >= 400 && entry.status < 600, `${entry.capability}.${entry.code}`);
      assert.match(entry.code, /^[a-z][a-z0-9_]*$/);
      assert.ok(entry.summary.length > 5, `${entry.capability}.${entry.code} has a message`);
    }
  });
});

forEachEngine('errors on the wire and in /openapi.json', (engine) => {
  let t: TestApp;
  let document: any;
  before(async () => {
    t = await startTestApp(engine);
    document = await (await fetch(`${t.url}/openapi.json`)).json();
  });
  after(() => t?.close());

  const codesOf = (answer: any): string => answer?.description ?? '';

  it('a catalogued error keeps its wire shape (code, status, message)', async () => {
    const missing = await t.request('GET', '/v1/agent/987654');
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.body, { detail: { code: 'agent_not_found', message: 'No agent with id 987654 in this account' } });
    const noKey = await t.request('GET', '/v1/agent/list', { key: null });
    assert.equal(noKey.status, 401);
    assert.deepEqual(noKey.body, { detail: { code: 'invalid_api_key', message: 'Missing or invalid API key. Send "Authorization: Bearer sk_live_...".' } });
    assert.equal(noKey.headers.get('www-authenticate'), 'Bearer');
  });

  it("routes list their catalogued errors: 404 agent_not_found, create's 402s and 422s, the key check's", () => {
    const get = document.paths['/v1/agent/{agent_id}'].get.responses;
    assert.match(codesOf(get['404']), /`agent_not_found`: No agent with id … in this account/);
    assert.equal(get['404'].content['application/json'].example.detail.code, 'agent_not_found');
    assert.equal(get['404'].content['application/json'].schema.$ref, '#/components/schemas/Error');
    assert.match(codesOf(get['401']), /`invalid_api_key`/);
    assert.match(codesOf(get['403']), /`missing_permission`/);
    assert.match(codesOf(get['429']), /`rate_limited`/);

    const create = document.paths['/v1/agent/create'].post.responses;
    assert.match(codesOf(create['402']), /`agent_limit`/);
    assert.match(codesOf(create['402']), /`paid_feature`/);
    for (const code of ['unknown_avatar', 'unknown_voice', 'voice_face_mismatch', 'invalid_look'])
      assert.match(codesOf(create['422']), new RegExp(`\`${code}\``));
    assert.equal(create['404'], undefined, 'create names no record');

    const patch = document.paths['/v1/agent/{agent_id}'].patch.responses;
    assert.match(codesOf(patch['409']), /`liveavatar_avatar_id_taken`/);

    const remove = document.paths['/v1/agent/{agent_id}'].delete.responses;
    assert.match(codesOf(remove['400']), /`confirmation_required`/);

    const replay = document.paths['/v1/notifications/destinations/{destination_id}/deliveries/{delivery_id}/replay'].post.responses;
    assert.match(codesOf(replay['404']), /`destination_not_found`/);
    assert.match(codesOf(replay['404']), /`delivery_not_found`/);
    assert.match(codesOf(replay['409']), /`delivery_not_failed`: Only a failed delivery can be replayed/);
    assert.match(codesOf(document.paths['/v1/notifications/rules/{agent_id}'].post.responses['409']), /`rule_limit`/);

    // A session start lists every check it makes, by status.
    const start = document.paths['/v1/sessions'].post.responses;
    for (const [status, codes] of Object.entries({
      '402': ['paid_feature', 'insufficient_balance', 'free_minutes_exhausted', 'free_concurrency'],
      '404': ['agent_not_found'],
      '409': ['agent_inactive', 'agent_building', 'concurrency_limit'],
      '422': ['unknown_avatar', 'unknown_voice', 'voice_face_mismatch', 'invalid_look'],
      '503': ['no_capacity'],
    }))
      for (const code of codes) assert.match(codesOf(start[status]), new RegExp(`\`${code}\``), `POST /v1/sessions ${status} ${code}`);
    assert.match(codesOf(document.paths['/v1/sessions/{session_id}/stop'].post.responses['404']), /`session_not_found`/);

    const embedStart = document.paths['/v1/embed/sessions'].post.responses;
    assert.equal(embedStart['401'], undefined, 'a public route lists no key errors');
    // The embed's and LiveAvatar's starts are session starts: they list its checks too.
    for (const responses of [embedStart, document.paths['/v1/sessions/start'].post.responses]) {
      assert.match(codesOf(responses['402']), /`insufficient_balance`/);
      assert.match(codesOf(responses['503']), /`no_capacity`/);
    }
  });

  it('every operation lists the errors every route of its kind can answer', () => {
    const missing: string[] = [];
    for (const [path, operations] of Object.entries<any>(document.paths)) {
      for (const [method, operation] of Object.entries<any>(operations)) {
        const label = `${method.toUpperCase()} ${path}`;
        const answers = operation.responses ?? {};
        const expect = (status: string, code?: string) => {
          if (!answers[status]) missing.push(`${label}: ${status}`);
          else if (code && !codesOf(answers[status]).includes(`\`${code}\``)) missing.push(`${label}: ${status} ${code}`);
        };
        // Every /v1 route refuses an unknown query parameter (and a bad body or parameter) with 422.
        if (path.startsWith('/v1/')) expect('422');
        const keyed = path.startsWith('/v1/') && !(Array.isArray(operation.security) && operation.security.length === 0);
        if (keyed) {
          expect('401', 'invalid_api_key');
          expect('403', 'missing_permission');
          expect('429', 'rate_limited');
          if (method === 'delete') expect('400', 'confirmation_required');
        }
        if (path.includes('{')) expect('404'), expect('414');
        if (operation.requestBody?.content?.['application/json']) expect('413'), expect('415');
      }
    }
    assert.deepEqual(missing, []);
  });

  it('every operation names its own errors, or is one that has none but the shared ones', () => {
    // Reads and writes of the whole account: no record named, no limit, nothing but the shared
    // answers (the key check, 422, 413/415). POST /v1/keys refuses with the key check's own code.
    const SHARED_ONLY = new Set([
      'GET /v1/keys',
      'POST /v1/keys',
      'GET /v1/avatars',
      'GET /v1/backdrops',
      'GET /v1/agent/list',
      'GET /v1/agent/has-agents',
      'GET /v1/usage/summary',
      'GET /v1/billing/summary',
      'GET /v1/billing/by-agent',
      'GET /v1/billing/voice',
      'GET /v1/billing/monthly',
      'GET /v1/billing/line-items',
      'GET /v1/billing/export/line-items',
      'GET /v1/billing/wallet',
      'GET /v1/billing/plan',
      'GET /v1/reports/me',
      'GET /v1/reports/agents',
      'GET /v1/reports/conversations',
      'GET /v1/reports/stats',
      'GET /v1/reports/export/conversations',
      'GET /v1/notifications',
      'GET /v1/notifications/unread-count',
      'POST /v1/notifications/read',
      'GET /v1/notifications/destinations',
      'GET /v1/sessions',
    ]);
    const shared = new Set(['invalid_api_key', 'missing_permission', 'rate_limited', 'confirmation_required']);
    const unnamed: string[] = [];
    const namedButShared: string[] = [];
    for (const [path, operations] of Object.entries<any>(document.paths)) {
      for (const [method, operation] of Object.entries<any>(operations)) {
        const label = `${method.toUpperCase()} ${path}`;
        const codes = Object.values<any>(operation.responses ?? {}).flatMap((a) => [...codesOf(a).matchAll(/`(\w+)`/g)].map((m) => m[1]!));
        const own = codes.filter((c) => !shared.has(c));
        if (!own.length && !SHARED_ONLY.has(label)) unnamed.push(label);
        if (own.length && SHARED_ONLY.has(label)) namedButShared.push(label);
      }
    }
    assert.deepEqual(unnamed, [], 'a route that can answer a catalogued error names it (routeErrors), or joins SHARED_ONLY');
    assert.deepEqual(namedButShared, [], 'SHARED_ONLY holds only routes that name nothing of their own');
  });

  it('every catalogued error an API route can raise is listed by some operation', async () => {
    for (const file of CATALOGUES) await import(path.join(src, file));
    const listed = new Set<string>();
    for (const operations of Object.values<any>(document.paths))
      for (const operation of Object.values<any>(operations))
        for (const answer of Object.values<any>(operation.responses ?? {})) for (const line of codesOf(answer).split('\n\n')) listed.add(line);
    // Raised only off the documented API: the operator's CLI and /internal/admin (accounts, and
    // catalog's face upload for an account), and the console's sign-in and cookie check (its routes
    // are hidden).
    const OFF_API = new Set([
      'accounts.account_not_found',
      'accounts.invalid_arguments',
      'accounts.invalid_balance',
      'accounts.invalid_permissions',
      'accounts.unavailable',
      'accounts.unknown_command',
      'catalog.account_not_found',
      'console.invalid_api_key',
      'console.invalid_link',
      'console.not_signed_in',
      'console.origin_not_allowed',
    ]);
    const unlisted = catalogueEntries()
      .filter((e) => ![...listed].some((line) => line.endsWith(`\`${e.code}\`: ${e.summary}`)))
      .map((e) => `${e.capability}.${e.code}`);
    assert.deepEqual(
      unlisted.filter((c) => !OFF_API.has(c)),
      [],
    );
    assert.deepEqual(
      [...OFF_API].filter((c) => !unlisted.includes(c)),
      [],
      'OFF_API holds only codes no operation lists',
    );
  });
});
