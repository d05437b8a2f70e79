/**
 * The public start (src/embed): /embed.js, the widget's public settings and conversation sessions
 * started with the public embed key: allowed origins, rate limits per visitor and per address,
 * visitor values (signed as docs/decisions.md describes) and the visitor id reaching the session
 * and its conversation record, the ordinary start rules, CORS, and 4xx for every bad input.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { forEachEngine, startTestApp, type TestApp } from '../support/app.js';
import { signVisitorValues } from '../../src/agents/visitor-values.js';
import { ADDRESS_BURST, VISITOR_BURST } from '../../src/embed/routes.js';

const SHOP = 'https://shop.example';

forEachEngine('public embed start', (engine) => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(engine);
  });
  after(async () => t?.close());

  async function agent(embed: Record<string, unknown> = {}, concurrency = 60) {
    const created = (await t.request('POST', '/v1/agent/create', { body: { name: 'Widget', concurrency_limit: concurrency } })).body;
    const patched = await t.request('PATCH', `/v1/agent/${created.id}/embed`, { body: embed });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    return { id: created.id as number, key: patched.body.embed_key as string, snippet: patched.body.script_snippet as string };
  }

  const start = (body: unknown, origin: string | null = SHOP) =>
    t.request('POST', '/v1/embed/sessions', { key: null, body, headers: origin ? { origin } : {} });

  async function conversation(id: string) {
    for (let i = 0; i < 100; i++) {
      const row = await t.database.db.selectFrom('conversations').selectAll().where('id', '=', id).executeTakeFirst();
      if (row) return row;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error('no conversation record');
  }

  test('/embed.js is the script the snippet loads', async () => {
    const a = await agent();
    assert.match(a.snippet, new RegExp(`src="${t.url}/embed.js" data-embed-key="${a.key}"`));
    const response = await fetch(`${t.url}/embed.js`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type')!, /^application\/javascript/);
    const text = await response.text();
    assert.match(text, /data-embed-key/);
    assert.match(text, /\/v1\/embed\/sessions/);
    new Function(text); // it parses
  });

  test('a session starts from an allowed origin, in conversation mode, with the visitor id recorded', async () => {
    const a = await agent({ allowed_origins: [SHOP, 'http://localhost:3000'] });
    const r = await start({ embed_key: a.key, visitor_id: 'v_0123456789abcdef0123456789abcdef' });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal(r.headers.get('access-control-allow-origin'), SHOP);
    assert.equal(r.body.mode, 'conversation');
    assert.equal(r.body.visitor_id, 'v_0123456789abcdef0123456789abcdef');
    assert.match(r.body.player_url, new RegExp(`^${t.url}/p/`));
    assert.equal('ws_url' in r.body, false);
    const session = await t.request('GET', `/v1/sessions/${r.body.session_id}`);
    assert.equal(session.body.mode, 'conversation');
    assert.equal(session.body.agent_id, a.id);
    const record = await conversation(r.body.session_id);
    assert.equal(record.visitor_id, 'v_0123456789abcdef0123456789abcdef');
    // The page opens.
    assert.equal((await fetch(r.body.player_url)).status, 200);

    // Without a visitor id the service makes one and says it.
    const anonymous = await start({ embed_key: a.key }, 'http://localhost:3000');
    assert.equal(anonymous.status, 201);
    assert.match(anonymous.body.visitor_id, /^v_/);
  });

  test('origins: refused from other sites and without an Origin when the list is set; any site when it is empty', async () => {
    const a = await agent({ allowed_origins: [SHOP] });
    const other = await start({ embed_key: a.key }, 'https://evil.example');
    assert.equal(other.status, 403);
    assert.equal(other.body.detail.code, 'origin_not_allowed');
    assert.equal((await start({ embed_key: a.key }, null)).body.detail.code, 'origin_not_allowed');
    assert.equal((await start({ embed_key: a.key }, `${SHOP}:8443`)).status, 403, 'another port is another origin');
    const config = await t.request('GET', `/v1/embed/config?embed_key=${a.key}`, { key: null, headers: { origin: 'https://evil.example' } });
    assert.equal(config.status, 403);

    const open = await agent({ allowed_origins: [] });
    assert.equal((await start({ embed_key: open.key }, 'https://anywhere.example')).status, 201);
    assert.equal((await start({ embed_key: open.key }, null)).status, 201);
  });

  test('the widget settings are public for an allowed origin; an unknown or regenerated key is 404', async () => {
    const a = await agent({ allowed_origins: [SHOP], button_text: 'Ask Ava', position: 'bottom-left', primary_color: '#aa3355', width: 360, height: 560 });
    const config = await t.request('GET', `/v1/embed/config?embed_key=${a.key}`, { key: null, headers: { origin: SHOP } });
    assert.equal(config.status, 200);
    assert.deepEqual(config.body, { position: 'bottom-left', button_text: 'Ask Ava', primary_color: '#aa3355', auto_open: false, width: 360, height: 560 });
    assert.equal(config.headers.get('access-control-allow-origin'), SHOP);
    await t.request('POST', `/v1/agent/${a.id}/embed/regenerate`);
    const old = await start({ embed_key: a.key });
    assert.equal(old.status, 404);
    assert.equal(old.body.detail.code, 'embed_key_not_found');
    assert.equal((await t.request('GET', `/v1/embed/config?embed_key=${a.key}`, { key: null, headers: { origin: SHOP } })).status, 404);
    assert.equal((await t.request('GET', '/v1/embed/config?embed_key=nope', { key: null })).status, 422);
  });

  test('CORS preflight for the JSON start', async () => {
    const r = await fetch(`${t.url}/v1/embed/sessions`, {
      method: 'OPTIONS',
      headers: { origin: SHOP, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    });
    assert.equal(r.status, 204);
    assert.equal(r.headers.get('access-control-allow-origin'), SHOP);
    assert.match(r.headers.get('access-control-allow-methods')!, /POST/);
    assert.match(r.headers.get('access-control-allow-headers')!, /content-type/);
  });

  test('rate limited per visitor', async () => {
    const a = await agent();
    for (let i = 0; i < VISITOR_BURST; i++) assert.equal((await start({ embed_key: a.key, visitor_id: 'same-visitor' })).status, 201);
    const limited = await start({ embed_key: a.key, visitor_id: 'same-visitor' });
    assert.equal(limited.status, 429);
    assert.equal(limited.body.detail.code, 'rate_limited');
    assert.ok(Number(limited.headers.get('retry-after')) >= 1);
    assert.equal((await start({ embed_key: a.key, visitor_id: 'another-visitor' })).status, 201, 'other visitors are not held up');
  });

  test('rate limited per address, so new visitor ids per request do not get through', async () => {
    const a = await agent({}, ADDRESS_BURST + 20);
    const began = performance.now();
    let started = 0;
    let limited: Awaited<ReturnType<typeof start>> | undefined;
    while (started < ADDRESS_BURST + 20) {
      const r = await start({ embed_key: a.key, visitor_id: `visitor-${started}` });
      if (r.status === 429) {
        limited = r;
        break;
      }
      assert.equal(r.status, 201, JSON.stringify(r.body));
      started++;
    }
    // The burst, plus what refilled (one every 2 s) while the starts ran.
    const refilled = Math.floor((performance.now() - began) / 2000);
    assert.ok(limited, 'limited');
    assert.equal(limited.body.detail.code, 'rate_limited');
    assert.ok(started >= ADDRESS_BURST && started <= ADDRESS_BURST + refilled + 1, `${started} starts before the limit (refill ${refilled})`);
  });

  test('signed visitor values reach the session and its conversation; forged, stale or missing ones are 422', async () => {
    const a = await agent();
    await t.request('PATCH', `/v1/agent/${a.id}/visitor-values`, {
      body: {
        fields: [
          { name: 'first_name', description: 'first name', required: true, max_length: 40 },
          { name: 'plan', description: 'plan', required: false, max_length: 20 },
        ],
        require_signature: true,
        max_age_seconds: 300,
      },
    });
    const secret = (await t.request('GET', `/v1/agent/${a.id}/visitor-values/secret`)).body.secret as string;
    const now = Math.floor(Date.now() / 1000);
    const values = { first_name: 'Zoë', plan: 'gold' };
    const signed = { values, timestamp: now, signature: `sha256=${signVisitorValues(secret, now, values)}` };
    const ok = await start({ embed_key: a.key, visitor_id: 'site-user-42', visitor: signed });
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
    const record = await conversation(ok.body.session_id);
    assert.deepEqual(record.visitor, values);
    assert.equal(record.visitor_id, 'site-user-42');
    const row = await t.database.db.selectFrom('sessions').select(['visitor_id', 'visitor']).where('id', '=', ok.body.session_id).executeTakeFirstOrThrow();
    assert.deepEqual(row.visitor, values);

    const forged = await start({ embed_key: a.key, visitor_id: 'x1', visitor: { ...signed, values: { ...values, plan: 'platinum' } } });
    assert.equal(forged.status, 422);
    assert.equal(forged.body.detail.code, 'invalid_visitor_values');
    const stale = now - 3600;
    const old = await start({ embed_key: a.key, visitor_id: 'x2', visitor: { values, timestamp: stale, signature: signVisitorValues(secret, stale, values) } });
    assert.equal(old.status, 422);
    assert.match(old.body.detail.message, /timestamp/);
    const unsigned = await start({ embed_key: a.key, visitor_id: 'x3', visitor: { values } });
    assert.equal(unsigned.status, 422);
    const none = await start({ embed_key: a.key, visitor_id: 'x4' });
    assert.equal(none.status, 422);
    assert.match(none.body.detail.message, /first_name/);
  });

  test('bad bodies are 422, and the ordinary start rules apply', async () => {
    const a = await agent({}, 1);
    for (const body of [
      {},
      { embed_key: a.key, extra: 1 },
      { embed_key: a.key, visitor_id: 'has spaces' },
      { embed_key: a.key, visitor_id: 'x'.repeat(129) },
      { embed_key: a.key, visitor: { values: { a: 1 } } },
      { embed_key: a.key, visitor: { values: {}, junk: true } },
      { embed_key: 42 },
    ]) {
      const r = await start(body);
      assert.equal(r.status, 422, JSON.stringify(body));
    }
    const garbled = await start('{not json');
    assert.ok(garbled.status >= 400 && garbled.status < 500, `garbled JSON: ${garbled.status}`);
    assert.equal((await start({ embed_key: a.key, visitor_id: 'one' })).status, 201);
    const busy = await start({ embed_key: a.key, visitor_id: 'two' });
    assert.equal(busy.status, 409);
    assert.equal(busy.body.detail.code, 'concurrency_limit');
    assert.equal(busy.headers.get('access-control-allow-origin'), SHOP, 'errors are readable by the widget');
    await t.request('PATCH', `/v1/agent/${a.id}`, { body: { status: 'inactive' } });
    assert.equal((await start({ embed_key: a.key, visitor_id: 'three' })).body.detail.code, 'agent_inactive');
  });
});
