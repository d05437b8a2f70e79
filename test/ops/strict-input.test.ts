/**
 * Issue 27, item 6: path ids are plain decimal integers, unknown query parameters are refused
 * (a typo no longer empties a list), `*_ids` arrays are range-checked, bodies that are not UTF-8
 * are refused, far dates do not 500, and a webhook's custom headers are masked to keys without setup.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { forEachEngine, startTestApp, type TestApp } from '../support/app.js';

forEachEngine('strict input', (engine) => {
  let t: TestApp;
  let agentId: number;
  before(async () => {
    t = await startTestApp(engine);
    agentId = (await t.request('POST', '/v1/agent/create', { body: { name: 'Strict target' } })).body.id;
  });
  after(() => t?.close());

  test('path ids in any spelling but plain decimal: 422 int_parsing, and nothing deleted', async () => {
    for (const spelling of ['0xba', '+1', '%201', '01', '1e0', '1.0'].map((s) => s.replace('1', String(agentId)))) {
      const res = await t.request('DELETE', `/v1/agent/${spelling}?confirm=true`);
      assert.equal(res.status, 422, `${spelling}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.detail[0].type, 'int_parsing');
    }
    assert.equal((await t.request('GET', `/v1/agent/${agentId}`)).status, 200, 'the agent is still there');
  });

  test('unknown query parameters: 422 extra_forbidden, on a DELETE before anything is deleted', async () => {
    const res = await t.request('DELETE', `/v1/agent/${agentId}/pages?confirm=true&isPrimary=true`);
    assert.equal(res.status, 422, JSON.stringify(res.body));
    assert.deepEqual(res.body.detail[0].loc, ['query', 'isPrimary']);
    const listed = await t.request('GET', '/v1/sessions?agnet_id=1');
    assert.equal(listed.status, 422);
    assert.equal((await t.request('GET', '/v1/sessions?limit=5')).status, 200, 'known parameters still work');
  });

  test('ids in *_ids arrays beyond the integer range: 422, not 500', async () => {
    const res = await t.request('POST', `/v1/notifications/rules/${agentId}`, { body: { name: 'x', destination_ids: [99999999999] } });
    assert.ok(res.status === 422, `${res.status} ${JSON.stringify(res.body)}`);
  });

  test('a JSON body that is not UTF-8: 422 json_invalid, nothing stored', async () => {
    const res = await fetch(`${t.url}/v1/agent/${agentId}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
      body: Buffer.concat([Buffer.from('{"name":"bad '), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]),
    });
    assert.equal(res.status, 422);
    assert.equal((await res.json()).detail[0].type, 'json_invalid');
    assert.equal((await t.request('GET', `/v1/agent/${agentId}`)).body.name, 'Strict target');
  });

  test('reports up to the last representable day answer 200', async () => {
    assert.equal((await t.request('GET', '/v1/reports/stats?date_to=9999-12-31')).status, 200);
    assert.equal((await t.request('GET', '/v1/reports/conversations?date_to=9999-12-31')).status, 200);
  });

  test("a destination's custom headers are masked to a key without setup; hop-by-hop headers are refused", async () => {
    const created = await t.request('POST', '/v1/notifications/destinations/webhook', {
      body: { url: 'https://example.com/hook', headers: { Authorization: 'Bearer receiver-secret' } },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const readKey = await t.keyFor(t.accountId, ['read']);
    const seen = JSON.stringify((await t.request('GET', '/v1/notifications/destinations', { key: readKey })).body);
    assert.doesNotMatch(seen, /receiver-secret/);
    assert.match(seen, /Authorization/);
    const refused = await t.request('POST', '/v1/notifications/destinations/webhook', {
      body: { url: 'https://example.com/hook', headers: { 'Transfer-Encoding': 'chunked' } },
    });
    assert.equal(refused.status, 422);
  });

  test('a render socket URL with its token given twice closes 4003 (bad token), not 1011', async () => {
    const agent = (await t.request('POST', '/v1/agent/create', { body: { name: 'Doubled token' } })).body;
    const session = (await t.request('POST', '/v1/sessions', { body: { agent_id: agent.id, mode: 'render' } })).body;
    const token = new URL(session.ws_url).searchParams.get('token')!;
    const code = await new Promise<number>((resolve, reject) => {
      const socket = new WebSocket(`${session.ws_url}&token=${token}`);
      socket.on('close', (closeCode) => resolve(closeCode));
      socket.on('error', reject);
    });
    assert.equal(code, 4003);
    await t.request('POST', `/v1/sessions/${session.session_id}/stop`);
  });
});
