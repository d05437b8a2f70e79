/**
 * Issue 15, item 2: a route without a request body accepts an empty body whatever its Content-Type.
 * `POST /v1/sessions/{id}/stop` with `Content-Type: application/json` and no body (what many HTTP
 * clients send) answered 422 json_invalid and left the session running, so with concurrency_limit 1
 * the agent could take no other session.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { forEachEngine, startTestApp, type TestApp } from '../support/app.js';

/** A POST whose body is sent chunked and is empty (no Content-Length), as streaming clients do. */
function chunkedEmpty(url: string, path: string, key: string, contentType: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      url + path,
      { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': contentType, 'transfer-encoding': 'chunked' } },
      (response) => {
        let text = '';
        response
          .setEncoding('utf8')
          .on('data', (d) => (text += d))
          .on('end', () => resolve({ status: response.statusCode!, body: text ? JSON.parse(text) : null }));
      },
    );
    request.on('error', reject);
    request.end();
  });
}

forEachEngine('empty bodies', (engine) => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(engine);
  });
  after(async () => {
    await t?.close();
  });

  test('stop with Content-Type: application/json and no body ends the session; the agent can start another', async () => {
    const agent = await t.request('POST', '/v1/agent/create', { body: { name: 'Stop me' } });
    assert.equal(agent.body.concurrency_limit, 1);
    const first = await t.request('POST', '/v1/sessions', { body: { agent_id: agent.body.id, mode: 'render' } });
    assert.equal(first.status, 201);
    const stopped = await fetch(`${t.url}/v1/sessions/${first.body.session_id}/stop`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
    });
    assert.equal(stopped.status, 200, await stopped.clone().text());
    const record = await stopped.json();
    assert.equal(record.status, 'ended');
    assert.equal(record.end_reason, 'stopped');
    const second = await t.request('POST', '/v1/sessions', { body: { agent_id: agent.body.id, mode: 'render' } });
    assert.equal(second.status, 201, JSON.stringify(second.body));

    // The same with the empty body sent chunked.
    const chunked = await chunkedEmpty(t.url, `/v1/sessions/${second.body.session_id}/stop`, t.key, 'application/json; charset=utf-8');
    assert.equal(chunked.status, 200, JSON.stringify(chunked.body));
    assert.equal(chunked.body.status, 'ended');
  });

  test('every route without a request body answers an empty body the same whatever the Content-Type', async () => {
    const agent = await t.request('POST', '/v1/agent/create', { body: { name: 'Routes' } });
    const session = await t.request('POST', '/v1/sessions', { body: { agent_id: agent.body.id, mode: 'render' } });
    const document = (await t.request('GET', '/openapi.json', { key: null })).body;
    const values: Record<string, string> = { agent_id: String(agent.body.id), session_id: session.body.session_id };
    const checked: string[] = [];
    for (const [template, item] of Object.entries<any>(document.paths)) {
      for (const method of ['post', 'put', 'patch', 'delete']) {
        const operation = item[method];
        if (!operation || operation.requestBody) continue;
        // Deleting the agent would end the other checks early: keep the agent for the last route.
        const path = template.replace(/\{(\w+)\}/g, (_, name: string) => values[name] ?? '1');
        const baseline = await fetch(t.url + path, { method: method.toUpperCase(), headers: { authorization: `Bearer ${t.key}` } });
        for (const type of ['application/json', 'text/plain', 'application/x-www-form-urlencoded', 'application/octet-stream']) {
          const response = await fetch(t.url + path, { method: method.toUpperCase(), headers: { authorization: `Bearer ${t.key}`, 'content-type': type } });
          const body = await response.text();
          assert.notEqual(response.status, 500, `${method} ${template} with ${type}: ${body}`);
          assert.notEqual(response.status, 415, `${method} ${template} with ${type}: ${body}`);
          assert.doesNotMatch(body, /json_invalid/, `${method} ${template} with ${type}`);
          // A route that starts a build (v2 recompile) refuses a second one while the first runs.
          const buildRunning = baseline.status === 200 && response.status === 409 && /build_in_progress/.test(body);
          if (!buildRunning) assert.equal(response.status, baseline.status, `${method} ${template} with ${type}: ${body}`);
        }
        checked.push(`${method} ${template}`);
      }
    }
    assert.ok(checked.includes('post /v1/sessions/{session_id}/stop'), checked.join(', '));
    assert.ok(checked.length >= 8, `bodyless routes checked: ${checked.join(', ')}`);
  });

  test('a route with a body answers an empty JSON body 422 missing, not json_invalid', async () => {
    const response = await fetch(`${t.url}/v1/agent/create`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
    });
    assert.equal(response.status, 422);
    const body = await response.json();
    assert.equal(body.detail[0].type, 'missing');
    assert.deepEqual(body.detail[0].loc, ['body']);
  });
});
