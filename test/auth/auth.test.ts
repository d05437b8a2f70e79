/**
 * Authentication and the contract's permission map, through the real server on both engines.
 * contract.md "Permissions"; interface.md "Authentication".
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { forEachEngine, startTestApp, type TestApp } from '../support/app.js';
import type { Permission } from '../../src/core/auth.js';
import { assertCoded } from '../agents/helpers.js';

const assertCodedError = assertCoded;

forEachEngine('authentication and permissions', (engine) => {
  let t: TestApp;
  let agentId: number;

  before(async () => {
    t = await startTestApp(engine);
    const created = await t.request('POST', '/v1/agent/create', { body: { name: 'Auth target' } });
    assert.equal(created.status, 200);
    agentId = created.body.id;
  });
  after(() => t.close());

  describe('401 invalid_api_key', () => {
    const cases: Array<[string, Record<string, string>]> = [
      ['no Authorization header', {}],
      ['empty bearer', { authorization: 'Bearer ' }],
      ['wrong scheme', { authorization: 'Basic c2tfbGl2ZV9hYmM6' }],
      ['no sk_live_ prefix', { authorization: 'Bearer pk_live_abcdefghijklmnopqrstuvwxyz' }],
      ['too short after the prefix', { authorization: 'Bearer sk_live_abc' }],
      ['illegal characters', { authorization: 'Bearer sk_live_abcdefghijklmnop$%^&' }],
      ['well-formed but unknown', { authorization: 'Bearer sk_live_' + 'A'.repeat(43) }],
    ];
    for (const [label, headers] of cases) {
      it(label, async () => {
        const res = await t.request('GET', '/v1/agent/list', { key: null, headers });
        assertCodedError(res, 401, 'invalid_api_key');
      });
    }

    it('a real key with one character changed is unknown', async () => {
      const last = t.key.at(-1) === 'A' ? 'B' : 'A';
      const res = await t.request('GET', '/v1/agent/list', { key: t.key.slice(0, -1) + last });
      assertCodedError(res, 401, 'invalid_api_key');
    });

    it('is checked before validation and before the route exists', async () => {
      for (const [method, path, body] of [
        ['POST', '/v1/agent/create', {}],
        ['GET', '/v1/agent/abc', undefined],
        ['DELETE', `/v1/agent/${agentId}`, undefined],
        ['GET', '/v1/no-such-route', undefined],
        ['GET', '/v1/sessions', undefined],
      ] as const) {
        const res = await t.request(method, path, { key: null, body });
        assertCodedError(res, 401, 'invalid_api_key');
      }
      // The agent survived the unauthenticated DELETE.
      assert.equal((await t.request('GET', `/v1/agent/${agentId}`)).status, 200);
    });

    it('the bearer scheme is case-insensitive and the key is accepted', async () => {
      const res = await t.request('GET', '/v1/agent/list', { key: null, headers: { authorization: `bearer ${t.key}` } });
      assert.equal(res.status, 200);
    });
  });

  describe('403 missing_permission, row by row of the permission map', () => {
    const keys = new Map<string, string>();
    const keyWith = async (permissions: Permission[]) => {
      const name = permissions.join(',');
      if (!keys.has(name)) keys.set(name, await t.keyFor(t.accountId, permissions));
      return keys.get(name)!;
    };
    const others = (p: Permission): Permission[] => (['read', 'setup', 'sessions', 'delete'] as Permission[]).filter((x) => x !== p);

    const rows: Array<{ method: string; path: () => string; needs: Permission; body?: unknown; okStatus?: number }> = [
      { method: 'GET', path: () => '/v1/agent/list', needs: 'read', okStatus: 200 },
      { method: 'GET', path: () => '/v1/agent/has-agents', needs: 'read', okStatus: 200 },
      { method: 'GET', path: () => `/v1/agent/${agentId}`, needs: 'read', okStatus: 200 },
      { method: 'GET', path: () => `/v1/agent/${agentId}/embed`, needs: 'read', okStatus: 200 },
      { method: 'GET', path: () => '/v1/avatars', needs: 'read', okStatus: 200 },
      { method: 'GET', path: () => '/v1/backdrops', needs: 'read', okStatus: 200 },
      { method: 'POST', path: () => '/v1/agent/create', needs: 'setup', body: { name: 'x' } },
      { method: 'POST', path: () => `/v1/agent/${agentId}/set-default`, needs: 'setup', okStatus: 200 },
      { method: 'POST', path: () => `/v1/agent/${agentId}/visitor-values/secret`, needs: 'setup' },
      { method: 'PATCH', path: () => `/v1/agent/${agentId}`, needs: 'setup', body: { name: 'Renamed' }, okStatus: 200 },
      { method: 'PATCH', path: () => `/v1/agent/${agentId}/embed`, needs: 'setup', body: {}, okStatus: 200 },
      { method: 'PUT', path: () => `/v1/notifications/prefs/${agentId}`, needs: 'setup', body: {} },
      { method: 'DELETE', path: () => `/v1/agent/${agentId}?confirm=true`, needs: 'delete' },
      { method: 'GET', path: () => '/v1/sessions', needs: 'sessions' },
      { method: 'GET', path: () => '/v1/sessions?status=active', needs: 'sessions' },
      { method: 'POST', path: () => '/v1/sessions', needs: 'sessions', body: { agent_id: 0 } },
      { method: 'GET', path: () => '/v1/sessions/00000000-0000-0000-0000-000000000000', needs: 'sessions' },
      { method: 'POST', path: () => '/v1/sessions/00000000-0000-0000-0000-000000000000/stop', needs: 'sessions' },
    ];

    for (const row of rows) {
      it(`${row.method} ${row.path().replace(/\d+/, '{id}')} needs ${row.needs}`, async () => {
        // Every key holding all the other three permissions is refused.
        const res = await t.request(row.method, row.path(), { key: await keyWith(others(row.needs)), body: row.body });
        assertCodedError(res, 403, 'missing_permission');
        assert.match(res.body.detail.message, new RegExp(row.needs));
        // A key with only that permission passes the gate (whatever the route then answers).
        if (row.method !== 'DELETE') {
          const ok = await t.request(row.method, row.path(), { key: await keyWith([row.needs]), body: row.body });
          assert.notEqual(ok.status, 401);
          assert.notEqual(ok.status, 403, `${row.method} ${row.path()} refused a key with ${row.needs}: ${JSON.stringify(ok.body)}`);
          if (row.okStatus) assert.equal(ok.status, row.okStatus, JSON.stringify(ok.body));
        }
      });
    }

    it("the visitor signing secret is setup's to see: it needs read and setup (contract.md, Permissions)", async () => {
      const path = `/v1/agent/${agentId}/visitor-values/secret`;
      const readOnly = await t.request('GET', path, { key: await keyWith(['read']) });
      assertCodedError(readOnly, 403, 'missing_permission');
      assert.match(readOnly.body.detail.message, /setup/);
      assert.doesNotMatch(JSON.stringify(readOnly.body), /vsec_/);
      assertCodedError(await t.request('GET', path, { key: await keyWith(['setup']) }), 403, 'missing_permission');
      assertCodedError(await t.request('GET', path, { key: await keyWith(['read', 'sessions', 'delete']) }), 403, 'missing_permission');
      const both = await t.request('GET', path, { key: await keyWith(['read', 'setup']) });
      assert.equal(both.status, 200, JSON.stringify(both.body));
      assert.match(both.body.secret, /^vsec_/);
    });

    it('the read permission does not cover writes, and setup does not cover reads', async () => {
      const readOnly = await keyWith(['read']);
      assertCodedError(await t.request('POST', '/v1/agent/create', { key: readOnly, body: { name: 'x' } }), 403, 'missing_permission');
      assertCodedError(await t.request('PATCH', `/v1/agent/${agentId}`, { key: readOnly, body: { name: 'x' } }), 403, 'missing_permission');
      const setupOnly = await keyWith(['setup']);
      assertCodedError(await t.request('GET', `/v1/agent/${agentId}`, { key: setupOnly }), 403, 'missing_permission');
      // sessions is not read: a read key cannot list sessions, a sessions key cannot list agents.
      assertCodedError(await t.request('GET', '/v1/sessions', { key: readOnly }), 403, 'missing_permission');
      assertCodedError(await t.request('GET', '/v1/agent/list', { key: await keyWith(['sessions']) }), 403, 'missing_permission');
    });

    it('percent-encoded spellings of a path need the same permission as the plain path', async () => {
      const readOnly = await keyWith(['read']);
      const sessionsOnly = await keyWith(['sessions']);
      // The router decodes %73 to "s": /v1/%73essions is /v1/sessions and needs sessions, not read.
      assertCodedError(await t.request('GET', '/v1/%73essions', { key: readOnly }), 403, 'missing_permission');
      assert.notEqual((await t.request('GET', '/v1/%73essions', { key: sessionsOnly })).status, 403);
      assertCodedError(await t.request('GET', '/v1/%61gent/list', { key: sessionsOnly }), 403, 'missing_permission');
      assert.equal((await t.request('GET', '/v1/%61gent/list', { key: readOnly })).status, 200);
    });

    it('a percent-encoded /v1 prefix still needs a key', async () => {
      for (const path of ['/%761/agent/list', '/%76%31/agent/list', '/%761/sessions']) {
        assertCodedError(await t.request('GET', path, { key: null }), 401, 'invalid_api_key');
      }
      assertCodedError(await t.request('GET', '/%761/sessions', { key: await keyWith(['read']) }), 403, 'missing_permission');
      assert.equal((await t.request('GET', '/%761/agent/list', { key: await keyWith(['read']) })).status, 200);
    });

    it('the permission is checked before validation (a refused caller learns nothing about the body)', async () => {
      const readOnly = await keyWith(['read']);
      assertCodedError(await t.request('POST', '/v1/agent/create', { key: readOnly, body: {} }), 403, 'missing_permission');
      assertCodedError(await t.request('PATCH', '/v1/agent/abc', { key: readOnly, body: { face_light: 'x' } }), 403, 'missing_permission');
    });

    it('a DELETE with only the delete permission and confirm=true succeeds (204)', async () => {
      const victim = await t.request('POST', '/v1/agent/create', { body: { name: 'Victim' } });
      assert.equal(victim.status, 200);
      const res = await t.request('DELETE', `/v1/agent/${victim.body.id}?confirm=true`, { key: await keyWith(['delete']) });
      assert.equal(res.status, 204);
      assert.equal((await t.request('GET', `/v1/agent/${victim.body.id}`)).status, 404);
    });

    it('a key without the delete permission cannot delete even with confirm=true', async () => {
      const res = await t.request('DELETE', `/v1/agent/${agentId}?confirm=true`, { key: await keyWith(['read', 'setup', 'sessions']) });
      assertCodedError(res, 403, 'missing_permission');
      assert.equal((await t.request('GET', `/v1/agent/${agentId}`)).status, 200);
    });
  });

  describe('400 confirmation_required', () => {
    for (const query of ['', '?confirm=false', '?confirm=TRUE', '?confirm=1', '?confirm=', '?confirmed=true']) {
      it(`DELETE /v1/agent/{id}${query} is refused and deletes nothing`, async () => {
        const res = await t.request('DELETE', `/v1/agent/${agentId}${query}`);
        assertCodedError(res, 400, 'confirmation_required');
        assert.equal((await t.request('GET', `/v1/agent/${agentId}`)).status, 200);
      });
    }
  });

  describe("another account's agent is answered exactly as a missing one", () => {
    let other: { id: number; key: string };
    let missingId: number;
    before(async () => {
      other = await t.account('paid');
      const probe = await t.request('POST', '/v1/agent/create', { body: { name: 'Probe' } });
      missingId = probe.body.id + 1000;
    });

    const routes: Array<[string, string, unknown?]> = [
      ['GET', ''],
      ['PATCH', '', { name: 'Stolen' }],
      ['DELETE', '?confirm=true'],
      ['POST', '/duplicate'],
      ['POST', '/set-default'],
      ['GET', '/embed'],
      ['PATCH', '/embed', { button_text: 'Stolen' }],
      ['POST', '/embed/regenerate'],
      ['POST', '/embed/apply-to-all'],
      ['POST', '/preview'],
      ['GET', '/visitor-values'],
      ['PATCH', '/visitor-values', { require_signature: true }],
      ['GET', '/visitor-values/secret'],
      ['POST', '/visitor-values/secret'],
      ['POST', '/visitor-values/preview', { values: {} }],
    ];
    for (const [method, suffix, body] of routes) {
      it(`${method} /v1/agent/{id}${suffix}`, async () => {
        const foreign = await t.request(method, `/v1/agent/${agentId}${suffix}`, { key: other.key, body });
        const missing = await t.request(method, `/v1/agent/${missingId}${suffix}`, { key: other.key, body });
        assertCodedError(foreign, 404, missing.body?.detail?.code);
        assert.equal(missing.status, 404);
        // Same shape; the message differs only by the id the caller sent.
        assert.deepEqual(Object.keys(foreign.body.detail).sort(), Object.keys(missing.body.detail).sort());
        assert.equal(foreign.body.detail.message.replace(String(agentId), '#'), missing.body.detail.message.replace(String(missingId), '#'));
      });
    }

    it('the owner still sees the agent unchanged, and the other account lists nothing of it', async () => {
      const own = await t.request('GET', `/v1/agent/${agentId}`);
      assert.equal(own.status, 200);
      assert.notEqual(own.body.name, 'Stolen');
      const list = await t.request('GET', '/v1/agent/list', { key: other.key });
      assert.deepEqual(list.body, []);
      const has = await t.request('GET', '/v1/agent/has-agents', { key: other.key });
      assert.equal(has.body.has_agents, false);
      const secret = await t.request('GET', `/v1/agent/${agentId}/visitor-values/secret`);
      assert.equal(secret.status, 200);
    });
  });
});

forEachEngine('rate limit', (engine) => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(engine, { RATE_LIMIT_PER_SECOND: '5' });
  });
  after(() => t.close());

  it('past the per-key rate, 429 rate_limited with Retry-After; other keys are unaffected', async () => {
    const began = performance.now();
    const results = await Promise.all(Array.from({ length: 40 }, () => t.request('GET', '/v1/avatars')));
    const elapsed = (performance.now() - began) / 1000;
    const limited = results.filter((r) => r.status === 429);
    const ok = results.filter((r) => r.status === 200);
    // A burst of 2×5 passes at once, then 5 a second: what may pass depends on how long the 40 took.
    const allowed = 10 + Math.ceil(5 * elapsed) + 1;
    assert.ok(ok.length >= 1, 'some requests pass');
    assert.ok(ok.length <= allowed, `at most ${allowed} may pass in ${elapsed.toFixed(2)} s, got ${ok.length}`);
    assert.equal(ok.length + limited.length, 40);
    assert.ok(limited.length >= 1, 'the rest are limited');
    for (const res of limited) {
      assertCodedError(res, 429, 'rate_limited');
      const retryAfter = res.headers.get('retry-after');
      assert.ok(retryAfter, 'Retry-After header present');
      assert.match(retryAfter!, /^\d+$/);
      assert.ok(Number(retryAfter) >= 1);
    }
    // The limit is per key: a fresh key of the same account is served.
    const fresh = await t.keyFor(t.accountId, ['read']);
    assert.equal((await t.request('GET', '/v1/avatars', { key: fresh })).status, 200);
  });

  it('recovers after waiting Retry-After', async () => {
    const key = await t.keyFor(t.accountId, ['read']);
    let res;
    for (let i = 0; i < 40; i++) {
      res = await t.request('GET', '/v1/backdrops', { key });
      if (res.status === 429) break;
    }
    assert.equal(res!.status, 429);
    await new Promise((r) => setTimeout(r, Number(res!.headers.get('retry-after')) * 1000));
    assert.equal((await t.request('GET', '/v1/backdrops', { key })).status, 200);
  });

  it('unauthenticated calls answer 401, not 429', async () => {
    const res = await t.request('GET', '/v1/avatars', { key: null });
    assert.equal(res.status, 401);
  });
});
