/**
 * contract.md "Console" and "API keys", through HTTP on both engines: one-time links and pasted
 * keys exchanged for an HttpOnly SameSite=Strict cookie; the cookie on /v1 with the same
 * permission map and an Origin check on changes; signing out; the key routes.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { forEachEngine, startTestApp, type TestApp } from '../support/app.js';

forEachEngine('console sign-in and API keys', (engine) => {
  let t: TestApp;
  let origin: string;

  before(async () => {
    t = await startTestApp(engine);
    origin = new URL(t.url).origin;
  });
  after(() => t.close());

  /** Signs in through /console/session (link token or key); the cookie's name=value. */
  async function signIn(body: Record<string, string>, headers: Record<string, string> = { origin }) {
    const response = await t.request('POST', '/console/session', { key: null, body, headers });
    const setCookie = response.headers.get('set-cookie') ?? '';
    return { ...response, setCookie, cookie: setCookie.split(';')[0] };
  }
  const withCookie = (cookie: string, method: string, path: string, options: { body?: unknown; origin?: string | null } = {}) =>
    t.request(method, path, { key: null, body: options.body, headers: { cookie, ...(options.origin === null ? {} : { origin: options.origin ?? origin }) } });

  describe('links', () => {
    it('a link signs in once, for a cookie that carries all four permissions; a second use fails', async () => {
      const link = await t.context.consoleSignIns.createLink(t.accountId, 600);
      assert.match(link.url, new RegExp(`^${t.url}/console/login\\?token=[A-Za-z0-9_-]+$`));
      assert.equal(link.account_id, t.accountId);
      assert.ok(Date.parse(link.expires_at) > Date.now() + 590_000);
      const token = new URL(link.url).searchParams.get('token')!;

      const first = await signIn({ token });
      assert.equal(first.status, 200, JSON.stringify(first.body));
      assert.match(first.setCookie, /^presence_console=[A-Za-z0-9_-]+;/);
      assert.match(first.setCookie, /HttpOnly/);
      assert.match(first.setCookie, /SameSite=Strict/);
      assert.match(first.setCookie, /Path=\//);
      assert.deepEqual(first.body.permissions, ['read', 'setup', 'sessions', 'delete']);
      assert.equal(first.body.via, 'link');
      assert.equal(first.body.account_id, t.accountId);
      assert.equal(typeof first.body.session_capacity, 'number');
      assert.ok(!first.setCookie.includes(token), 'the cookie is a new token, not the link');

      const again = await signIn({ token });
      assert.equal(again.status, 401);
      assert.equal(again.body.detail.code, 'invalid_link');
      assert.equal(again.setCookie, '');

      const who = await withCookie(first.cookie, 'GET', '/console/session');
      assert.equal(who.status, 200);
      assert.equal(who.body.account_name, 'test');
    });

    it('an expired link does not sign in', async () => {
      const link = await t.context.consoleSignIns.createLink(t.accountId, 1);
      await new Promise((r) => setTimeout(r, 1100));
      const tried = await signIn({ token: new URL(link.url).searchParams.get('token')! });
      assert.equal(tried.status, 401);
      assert.equal(tried.body.detail.code, 'invalid_link');
    });

    it("signing in needs the console's own Origin", async () => {
      const link = await t.context.consoleSignIns.createLink(t.accountId, 600);
      const token = new URL(link.url).searchParams.get('token')!;
      const elsewhere = await signIn({ token }, { origin: 'https://evil.example' });
      assert.equal(elsewhere.status, 403);
      const none = await signIn({ token }, {});
      assert.equal(none.status, 403);
      // Refused attempts did not use the link up.
      assert.equal((await signIn({ token })).status, 200);
    });
  });

  describe('the cookie on /v1', () => {
    let cookie: string;
    before(async () => {
      const link = await t.context.consoleSignIns.createLink(t.accountId, 600);
      cookie = (await signIn({ token: new URL(link.url).searchParams.get('token')! })).cookie;
    });

    it("reads without an Origin, and changes only with the console's Origin", async () => {
      const list = await withCookie(cookie, 'GET', '/v1/agent/list', { origin: null });
      assert.equal(list.status, 200);
      const noOrigin = await withCookie(cookie, 'POST', '/v1/agent/create', { body: { name: 'No origin' }, origin: null });
      assert.equal(noOrigin.status, 403);
      const wrong = await withCookie(cookie, 'POST', '/v1/agent/create', { body: { name: 'Wrong origin' }, origin: 'http://127.0.0.1:1' });
      assert.equal(wrong.status, 403);
      const created = await withCookie(cookie, 'POST', '/v1/agent/create', { body: { name: 'From the console' } });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      const names = (await t.request('GET', '/v1/agent/list')).body.map((a: any) => a.name);
      assert.ok(names.includes('From the console'));
      assert.ok(!names.includes('No origin') && !names.includes('Wrong origin'));
      const del = await withCookie(cookie, 'DELETE', `/v1/agent/${created.body.id}?confirm=true`, { origin: null });
      assert.equal(del.status, 403, 'a DELETE is a change too');
    });

    it('a cookie that is not a sign-in answers 401; a Bearer key still wins over a cookie', async () => {
      const bad = await withCookie('presence_console=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', 'GET', '/v1/agent/list');
      assert.equal(bad.status, 401);
      assert.equal(bad.body.detail.code, 'invalid_api_key');
      const both = await t.request('GET', '/v1/agent/list', { headers: { cookie: 'presence_console=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' } });
      assert.equal(both.status, 200);
    });

    it('signing out ends the session on the server', async () => {
      const link = await t.context.consoleSignIns.createLink(t.accountId, 600);
      const mine = (await signIn({ token: new URL(link.url).searchParams.get('token')! })).cookie;
      assert.equal((await withCookie(mine, 'GET', '/v1/agent/list')).status, 200);
      const out = await withCookie(mine, 'DELETE', '/console/session');
      assert.equal(out.status, 204);
      assert.match(out.headers.get('set-cookie') ?? '', /Max-Age=0/);
      assert.equal((await withCookie(mine, 'GET', '/v1/agent/list')).status, 401);
      assert.equal((await withCookie(mine, 'GET', '/console/session')).status, 401);
    });
  });

  describe('signing in with a key', () => {
    it("takes the key's permissions; the key is checked like the API checks it", async () => {
      const readOnly = await t.keyFor(t.accountId, ['read']);
      const signed = await signIn({ key: readOnly });
      assert.equal(signed.status, 200, JSON.stringify(signed.body));
      assert.deepEqual(signed.body.permissions, ['read']);
      assert.equal(signed.body.via, 'key');
      assert.ok(!signed.setCookie.includes(readOnly));
      assert.equal((await withCookie(signed.cookie, 'GET', '/v1/agent/list')).status, 200);
      const denied = await withCookie(signed.cookie, 'POST', '/v1/agent/create', { body: { name: 'Nope' } });
      assert.equal(denied.status, 403);
      assert.equal(denied.body.detail.code, 'missing_permission');
      assert.match(denied.body.detail.message, /"setup"/);
      const sessions = await withCookie(signed.cookie, 'GET', '/v1/sessions');
      assert.equal(sessions.status, 403);

      const wrong = await signIn({ key: 'sk_live_' + 'x'.repeat(40) });
      assert.equal(wrong.status, 401);
      assert.equal(wrong.body.detail.code, 'invalid_api_key');
    });

    it('a revoked key ends the sign-ins made with it', async () => {
      const key = await t.keyFor(t.accountId, ['read', 'setup']);
      const signed = await signIn({ key });
      assert.equal((await withCookie(signed.cookie, 'GET', '/v1/agent/list')).status, 200);
      const id = (await t.request('GET', '/v1/keys')).body.keys.find((k: any) => key.startsWith(k.prefix) && k.permissions.join() === 'read,setup').id;
      assert.equal((await t.request('DELETE', `/v1/keys/${id}?confirm=true`)).status, 204);
      assert.equal((await withCookie(signed.cookie, 'GET', '/v1/agent/list')).status, 401);
    });
  });

  describe('/v1/keys', () => {
    it('creates a key shown once, lists keys without secrets, revokes at once', async () => {
      const created = await t.request('POST', '/v1/keys', { body: { name: 'CI deploys', permissions: ['read', 'sessions'] } });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      assert.match(created.body.key, /^sk_live_[A-Za-z0-9_-]{16,}$/);
      assert.equal(created.body.name, 'CI deploys');
      assert.deepEqual(created.body.permissions, ['read', 'sessions']);
      assert.ok(created.body.key.startsWith(created.body.prefix));
      assert.ok(created.body.prefix.length > 'sk_live_'.length && created.body.prefix.length < 24);

      const listed = await t.request('GET', '/v1/keys');
      assert.equal(listed.status, 200);
      assert.ok(!JSON.stringify(listed.body).includes(created.body.key), 'never the secret');
      const entry = listed.body.keys.find((k: any) => k.id === created.body.id);
      assert.deepEqual(Object.keys(entry).sort(), ['created_at', 'id', 'last_used_at', 'name', 'permissions', 'prefix']);
      assert.equal(entry.last_used_at, null);

      assert.equal((await t.request('GET', '/v1/agent/list', { key: created.body.key })).status, 200);
      const used = (await t.request('GET', '/v1/keys')).body.keys.find((k: any) => k.id === created.body.id);
      assert.ok(used.last_used_at && Date.parse(used.last_used_at) > Date.now() - 60_000, 'last_used_at is set by a use');

      const revoked = await t.request('DELETE', `/v1/keys/${created.body.id}?confirm=true`);
      assert.equal(revoked.status, 204);
      const after = await t.request('GET', '/v1/agent/list', { key: created.body.key });
      assert.equal(after.status, 401);
      assert.equal(after.body.detail.code, 'invalid_api_key');
      assert.ok(!(await t.request('GET', '/v1/keys')).body.keys.some((k: any) => k.id === created.body.id));
      assert.equal((await t.request('DELETE', `/v1/keys/${created.body.id}?confirm=true`)).status, 404);
    });

    it('a key cannot make a key with a permission it lacks; the general map applies', async () => {
      const limited = await t.keyFor(t.accountId, ['read', 'setup']);
      const beyond = await t.request('POST', '/v1/keys', { key: limited, body: { permissions: ['read', 'delete'] } });
      assert.equal(beyond.status, 403);
      assert.equal(beyond.body.detail.code, 'missing_permission');
      const within = await t.request('POST', '/v1/keys', { key: limited, body: { permissions: ['read'] } });
      assert.equal(within.status, 201);
      const readOnly = await t.keyFor(t.accountId, ['read']);
      assert.equal((await t.request('POST', '/v1/keys', { key: readOnly, body: { permissions: ['read'] } })).status, 403);
      assert.equal((await t.request('GET', '/v1/keys', { key: readOnly })).status, 200);
      assert.equal((await t.request('DELETE', `/v1/keys/${within.body.id}?confirm=true`, { key: limited })).status, 403);
      assert.equal((await t.request('DELETE', `/v1/keys/${within.body.id}`)).status, 400);
    });

    it("bad bodies answer 422 naming the field; another account's key is 404", async () => {
      const empty = await t.request('POST', '/v1/keys', { body: { permissions: [] } });
      assert.equal(empty.status, 422);
      assert.deepEqual(empty.body.detail[0].loc, ['body', 'permissions']);
      const unknown = await t.request('POST', '/v1/keys', { body: { permissions: ['admin'] } });
      assert.equal(unknown.status, 422);
      const other = await t.account('paid');
      const theirs = await t.request('GET', '/v1/keys', { key: other.key });
      const theirId = theirs.body.keys[0].id;
      assert.equal((await t.request('DELETE', `/v1/keys/${theirId}?confirm=true`)).status, 404);
      assert.equal((await t.request('GET', '/v1/agent/list', { key: other.key })).status, 200, 'their key still works');
      assert.ok(!(await t.request('GET', '/v1/keys')).body.keys.some((k: any) => k.id === theirId));
    });
  });
});
