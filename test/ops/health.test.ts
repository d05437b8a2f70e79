/** /healthz (the process answers) and /readyz (the database answers and speech can voice text; names the engine), on both engines. */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { forEachEngine, startTestApp, type TestApp } from '../support/app.js';

forEachEngine('health and readiness', (engine) => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(engine);
  });
  after(async () => {
    await t?.close();
  });

  test('GET /healthz answers 200 without a key', async () => {
    const response = await t.request('GET', '/healthz', { key: null });
    assert.equal(response.status, 200);
    assert.deepEqual(response.body, { status: 'ok' });
  });

  test('GET /readyz answers 503 speech_starting until the speech layer can voice text, then 200 naming the database engine', async () => {
    let response = await t.request('GET', '/readyz', { key: null });
    // Tests fetch no models (MODELS_DOWNLOAD=0): /readyz says so.
    const models = { stt: { state: 'off', reason: 'MODELS_DOWNLOAD=0' }, kokoro: { state: 'off', reason: 'MODELS_DOWNLOAD=0' } };
    if (response.status === 503) assert.deepEqual(response.body, { status: 'speech_starting', database: engine, models });
    const deadline = Date.now() + 60_000;
    while (response.status !== 200 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      response = await t.request('GET', '/readyz', { key: null });
    }
    assert.equal(response.status, 200);
    assert.deepEqual(response.body, { status: 'ready', database: engine, speech: 'ready', models });
    assert.equal(t.context.speech.isReady(), true);
  });

  test('health routes are not in the public API description', async () => {
    const response = await t.request('GET', '/openapi.json', { key: null });
    if (response.status !== 200) return; // the spec lives elsewhere; nothing to check here
    assert.equal(response.body.paths?.['/healthz'], undefined);
    assert.equal(response.body.paths?.['/readyz'], undefined);
    assert.equal(response.body.paths?.['/internal/admin'], undefined);
  });

  test('every answer carries x-request-id; an incoming X-Request-Id is echoed, a malformed one replaced', async () => {
    const fresh = await t.request('GET', '/healthz', { key: null });
    assert.match(fresh.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
    const echoed = await t.request('GET', '/v1/agent/list', { headers: { 'X-Request-Id': 'trace-42.a_b' } });
    assert.equal(echoed.status, 200);
    assert.equal(echoed.headers.get('x-request-id'), 'trace-42.a_b');
    const unauthorized = await t.request('GET', '/v1/agent/list', { key: null, headers: { 'X-Request-Id': 'denied-1' } });
    assert.equal(unauthorized.status, 401);
    assert.equal(unauthorized.headers.get('x-request-id'), 'denied-1', 'errors carry it too');
    const notFound = await t.request('GET', '/no/such/route', { key: null, headers: { 'X-Request-Id': 'missing-1' } });
    assert.equal(notFound.status, 404);
    assert.equal(notFound.headers.get('x-request-id'), 'missing-1');
    const malformed = await t.request('GET', '/healthz', { key: null, headers: { 'X-Request-Id': 'has spaces and "quotes"' } });
    assert.match(malformed.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
    const tooLong = await t.request('GET', '/healthz', { key: null, headers: { 'X-Request-Id': 'x'.repeat(65) } });
    assert.match(tooLong.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
  });
});
