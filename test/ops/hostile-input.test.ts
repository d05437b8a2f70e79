/**
 * Issue 15, item 8: the probe's hostile inputs that were answered 500 (or outside the
 * `{"detail": …}` shape) are answered 4xx in the interface's shapes, validated at the edge.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { forEachEngine, startTestApp, type TestApp } from '../support/app.js';

/** A raw request line, so the URL reaches the server exactly as written (fetch would re-encode it). */
function rawGet(port: number, target: string, key: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port }, () =>
      socket.write(`GET ${target} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n\r\n`),
    );
    let text = '';
    socket
      .setEncoding('utf8')
      .on('data', (d) => (text += d))
      .on('end', () => {
        const status = Number(text.split(' ')[1]);
        const body = text.slice(text.indexOf('\r\n\r\n') + 4);
        resolve({ status, body: JSON.parse(body.slice(body.indexOf('{'), body.lastIndexOf('}') + 1)) });
      })
      .on('error', reject);
  });
}

forEachEngine('hostile input', (engine) => {
  let t: TestApp;
  let agentId: number;
  before(async () => {
    t = await startTestApp(engine);
    agentId = (await t.request('POST', '/v1/agent/create', { body: { name: 'Target' } })).body.id;
  });
  after(async () => {
    await t?.close();
  });

  const assertDetail422 = (res: { status: number; body: any }, loc: Array<string | number>, what: string) => {
    assert.equal(res.status, 422, `${what}: ${res.status} ${JSON.stringify(res.body)}`);
    assert.ok(Array.isArray(res.body.detail), what);
    assert.deepEqual(res.body.detail[0].loc, loc, `${what}: ${JSON.stringify(res.body)}`);
  };

  test('NUL bytes in agent and embed and visitor-values text: 422 at the field', async () => {
    for (const field of ['name', 'system_prompt', 'website_url']) {
      const value = field === 'website_url' ? 'https://example.com/\u0000' : 'a\u0000b';
      assertDetail422(await t.request('POST', '/v1/agent/create', { body: { name: 'x', [field]: value } }), ['body', field], `create ${field}`);
    }
    assertDetail422(
      await t.request('PATCH', `/v1/agent/${agentId}`, { body: { welcome_message: 'Hi\u0000' } }),
      ['body', 'welcome_message'],
      'welcome_message',
    );
    assertDetail422(await t.request('PATCH', `/v1/agent/${agentId}/embed`, { body: { button_text: 'Talk\u0000' } }), ['body', 'button_text'], 'button_text');
    assertDetail422(
      await t.request('PATCH', `/v1/agent/${agentId}/visitor-values`, { body: { fields: [{ name: 'email', description: 'e\u0000' }] } }),
      ['body', 'fields', 0, 'description'],
      'fields description',
    );
  });

  test('lone surrogates in embed and visitor-values text: 422 at the field', async () => {
    assertDetail422(await t.request('PATCH', `/v1/agent/${agentId}/embed`, { body: '{"button_text":"Talk \\ud800"}' }), ['body', 'button_text'], 'button_text');
    assertDetail422(
      await t.request('PATCH', `/v1/agent/${agentId}/visitor-values`, { body: '{"fields":[{"name":"email","description":"\\udc00 e"}]}' }),
      ['body', 'fields', 0, 'description'],
      'description',
    );
  });

  test('ids beyond the database integer range: 422, in the body and in the query', async () => {
    assertDetail422(await t.request('POST', '/v1/sessions', { body: { agent_id: 2147483648 } }), ['body', 'agent_id'], 'session agent_id');
    assertDetail422(await t.request('GET', '/v1/sessions?agent_id=2147483648'), ['query', 'agent_id'], 'list agent_id');
    const ok = await t.request('GET', '/v1/sessions?agent_id=2147483647');
    assert.equal(ok.status, 200);
  });

  test('deeply nested JSON: 422 json_invalid in the detail shape', async () => {
    for (const body of ['['.repeat(100_000) + ']'.repeat(100_000), `{"name":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`]) {
      const res = await t.request('POST', '/v1/agent/create', { body });
      assertDetail422(res, ['body', 0], 'deep JSON');
      assert.equal(res.body.detail[0].type, 'json_invalid');
    }
    const shallow = await t.request('POST', '/v1/agent/create', { body: { name: 'Fine', studio: { cameras: ['far'] } } });
    assert.equal(shallow.status, 200, 'ordinary nesting is fine');
  });

  test('bad percent-encoding in the URL: 400 in the detail shape', async () => {
    const res = await rawGet(Number(new URL(t.url).port), '/v1/%zz', t.key);
    assert.equal(res.status, 400);
    assert.deepEqual(Object.keys(res.body), ['detail']);
    assert.equal(typeof res.body.detail, 'string');
  });
});
