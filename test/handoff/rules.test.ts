/**
 * The v2/rules routes as a user calls them: the contract's shapes, templates checked when saved
 * (422 naming the problem), custom headers that cannot replace the signature headers, secrets
 * shown, masked and rotated, private addresses refused, limits, and other accounts' rules unseen.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { forEachEngine, startTestApp, type TestApp } from '../support/app.js';
import { makeAgent } from './support.js';

const json = (name: string, url: string, extra: Record<string, unknown> = {}) => ({
  name,
  details: [{ name: 'email', description: "the visitor's email address", required: true }],
  destination: { type: 'webhook', url, method: 'POST', format: 'json', template: '{"email": "{{email}}", "agent": "{{agent_name}}"}', ...extra },
  enabled: true,
});

forEachEngine('handoff rules', (engine) => {
  let t: TestApp;
  let strict: TestApp;
  let agentId: number;
  before(async () => {
    t = await startTestApp(engine, { WEBHOOK_ALLOW_PRIVATE: '1' });
    agentId = await makeAgent(t);
    strict = await startTestApp(engine);
  });
  after(async () => {
    await t.close();
    await strict?.close();
  });
  const rulesPath = () => `/v1/agent/${agentId}/v2/rules`;

  test("a rule is created with the contract's shape, its own whsec_ secret, and listed", async () => {
    const res = await t.request('POST', rulesPath(), { body: json('New lead', 'https://example.com/hook', { headers: { 'X-Api-Key': 'abc' } }) });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const rule = res.body.rule;
    assert.equal(rule.name, 'New lead');
    assert.deepEqual(rule.details, [{ name: 'email', description: "the visitor's email address", required: true }]);
    assert.deepEqual(rule.destination, {
      type: 'webhook',
      url: 'https://example.com/hook',
      method: 'POST',
      format: 'json',
      headers: { 'X-Api-Key': 'abc' },
      template: '{"email": "{{email}}", "agent": "{{agent_name}}"}',
    });
    assert.equal(rule.enabled, true);
    assert.equal(rule.state, 'active');
    assert.match(rule.secret, /^whsec_[A-Za-z0-9_-]{20,}$/);
    const list = await t.request('GET', rulesPath());
    assert.equal(list.status, 200);
    assert.equal(list.body.rules.find((r: any) => r.id === rule.id).secret, rule.secret);
    // A key without setup sees the secret masked.
    const reader = await t.keyFor(t.accountId, ['read']);
    const masked = await t.request('GET', rulesPath(), { key: reader });
    const seen = masked.body.rules.find((r: any) => r.id === rule.id).secret;
    assert.notEqual(seen, rule.secret);
    assert.ok(seen.startsWith('whsec_') && seen.endsWith(rule.secret.slice(-4)));
  });

  test('PATCH rotate_secret replaces the secret; PATCH and DELETE answer the rules list', async () => {
    const created = (await t.request('POST', rulesPath(), { body: json('Rotate me', 'https://example.com/a') })).body.rule;
    const patched = await t.request('PATCH', `${rulesPath()}/${created.id}`, { body: { rotate_secret: true, name: 'Rotated' } });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    const after = patched.body.rules.find((r: any) => r.id === created.id);
    assert.equal(after.name, 'Rotated');
    assert.match(after.secret, /^whsec_/);
    assert.notEqual(after.secret, created.secret);
    const noConfirm = await t.request('DELETE', `${rulesPath()}/${created.id}`);
    assert.equal(noConfirm.status, 400);
    const deleted = await t.request('DELETE', `${rulesPath()}/${created.id}?confirm=true`);
    assert.equal(deleted.status, 200);
    assert.ok(Array.isArray(deleted.body.rules));
    assert.equal(
      deleted.body.rules.some((r: any) => r.id === created.id),
      false,
    );
    assert.equal((await t.request('PATCH', `${rulesPath()}/${created.id}`, { body: { name: 'x' } })).status, 404);
  });

  const refused = async (body: unknown, pattern: RegExp, loc?: string) => {
    const res = await t.request('POST', rulesPath(), { body });
    assert.equal(res.status, 422, JSON.stringify(res.body));
    const detail = res.body.detail;
    const text = Array.isArray(detail) ? detail.map((i: any) => `${i.type}: ${i.msg}`).join('\n') : `${detail.code}: ${detail.message}`;
    assert.match(text, pattern);
    if (loc)
      assert.ok(
        res.body.detail.some((i: any) => i.loc.join('.') === loc),
        `loc ${loc} in ${text}`,
      );
  };

  test('templates are checked when saved, and the 422 names the problem', async () => {
    await refused(
      json('x', 'https://example.com', { template: '{"email": "{{emial}}"}' }),
      /unknown template variable \{\{emial\}\}/,
      'body.destination.template',
    );
    await refused(json('x', 'https://example.com', { template: '{"email": {{email}}}' }), /JSON template does not render valid JSON.*inside quotes/);
    await refused(json('x', 'https://example.com', { template: '{"email": "{{email}}",}' }), /does not render valid JSON/);
    await refused(json('x', 'https://example.com', { format: 'xml', template: '<lead><email>{{email}}</lead>' }), /XML template does not render valid XML/);
    await refused(
      json('x', 'https://example.com', { format: 'form', template: 'email={{email}}\njust text' }),
      /line 2 of the form template is not name=value/,
    );
    await refused(json('x', 'https://example.com', { template: 'Hello {{email}' }), /does not form a \{\{variable\}\}/);
    // Variables that exist are fine in every format, visitor.<name> included.
    for (const [format, template, method] of [
      ['xml', '<lead><email>{{email}}</email><page>{{visitor.page}}</page><turns>{{visitor_turns}}</turns></lead>', 'POST'],
      ['text', 'Lead {{email}} from {{visitor.page}} at {{conversation_time}} ({{rule_name}})', 'POST'],
      ['form', 'email={{email}}\npage={{visitor.page}}', 'POST'],
      ['query', 'email={{email}}\nagent={{agent_name}}', 'GET'],
      ['json', '{"email": "{{email}}", "turns": {{visitor_turns}}}', 'POST'],
    ] as const) {
      const res = await t.request('POST', rulesPath(), { body: json(`ok ${format}`, 'https://example.com', { format, template, method }) });
      assert.equal(res.status, 200, `${format}: ${JSON.stringify(res.body)}`);
      await t.request('DELETE', `${rulesPath()}/${res.body.rule.id}?confirm=true`);
    }
  });

  test('method and format must agree; GET sends the query format', async () => {
    await refused(json('x', 'https://example.com', { method: 'GET', format: 'json' }), /GET webhook sends its details as query parameters/);
    await refused(json('x', 'https://example.com', { method: 'POST', format: 'query', template: 'a={{email}}' }), /format "query" is sent with method GET/);
    const res = await t.request('POST', rulesPath(), {
      body: {
        name: 'Default GET',
        details: [{ name: 'email', description: 'email' }],
        destination: { type: 'webhook', url: 'https://example.com/q', format: 'query' },
      },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.rule.destination.method, 'GET');
    assert.match(res.body.rule.destination.template, /^email=\{\{email\}\}/);
    await t.request('DELETE', `${rulesPath()}/${res.body.rule.id}?confirm=true`);
  });

  test('custom headers cannot replace the signature headers (or the framing ones)', async () => {
    for (const name of ['X-Service-Signature', 'x-service-timestamp', 'X-Service-Delivery', 'User-Agent', 'Content-Type', 'Host', 'Content-Length']) {
      await refused(json('x', 'https://example.com', { headers: { [name]: 'forged' } }), new RegExp(`${name} is set by the service`, 'i'));
    }
    await refused(json('x', 'https://example.com', { headers: { 'X-Evil': 'a\r\nX-Service-Signature: b' } }), /line breaks/);
    await refused(json('x', 'https://example.com', { headers: { 'Bad Name': 'a' } }), /Invalid key/, 'body.destination.headers.Bad Name');
  });

  test('details: names, duplicates and built-in names are checked; unknown fields refused', async () => {
    await refused({ ...json('x', 'https://example.com'), details: [{ name: 'email' }, { name: 'email' }] }, /two details are named "email"/);
    await refused({ ...json('x', 'https://example.com'), details: [{ name: 'agent_name' }] }, /built-in template variable/);
    await refused({ ...json('x', 'https://example.com'), details: [{ name: '1st' }] }, /detail name is letters/);
    await refused({ ...json('x', 'https://example.com'), colour: 'red' }, /extra_forbidden/);
    await refused({ name: 'x', destination: { type: 'webhook', format: 'json' } }, /missing/, 'body.destination.url');
    await refused({ name: 'x', destination: { type: 'inbox', url: 'https://example.com' } }, /url is for a webhook destination only/);
  });

  test('an inbox rule takes a message template (default: every detail) and has no secret', async () => {
    const res = await t.request('POST', rulesPath(), {
      body: { name: 'Inbox lead', details: [{ name: 'email', description: 'email', required: true }], destination: { type: 'inbox' } },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.rule.secret, undefined);
    assert.match(res.body.rule.destination.template, /email: \{\{email\}\}/);
    await t.request('DELETE', `${rulesPath()}/${res.body.rule.id}?confirm=true`);
  });

  test("another account's agent and rules answer 404", async () => {
    const other = await t.account('paid');
    const created = (await t.request('POST', rulesPath(), { body: json('Mine', 'https://example.com') })).body.rule;
    assert.equal((await t.request('GET', rulesPath(), { key: other.key })).status, 404);
    const otherAgent = await makeAgent(t, 'Other', other.key);
    assert.equal((await t.request('PATCH', `/v1/agent/${otherAgent}/v2/rules/${created.id}`, { key: other.key, body: { name: 'stolen' } })).status, 404);
    assert.equal((await t.request('GET', `/v1/agent/${otherAgent}/v2/rules/${created.id}/deliveries`, { key: other.key })).status, 404);
    assert.equal((await t.request('POST', `/v1/agent/${otherAgent}/v2/rules/${created.id}/test`, { key: other.key })).status, 404);
  });

  test('an agent has at most 20 rules', async () => {
    const agent = await makeAgent(t, 'Many');
    for (let i = 0; i < 20; i++)
      assert.equal((await t.request('POST', `/v1/agent/${agent}/v2/rules`, { body: json(`r${i}`, 'https://example.com') })).status, 200);
    const over = await t.request('POST', `/v1/agent/${agent}/v2/rules`, { body: json('r21', 'https://example.com') });
    assert.equal(over.status, 422);
    assert.equal(over.body.detail.code, 'rule_limit');
  });

  test('without WEBHOOK_ALLOW_PRIVATE, loopback and private URLs are refused with 422 private_address (by address and by name)', async () => {
    const agent = await makeAgent(strict);
    for (const url of ['http://127.0.0.1:9/hook', 'http://10.1.2.3/hook', 'http://[::1]/hook', 'http://169.254.169.254/latest', 'http://localhost:8080/hook']) {
      const res = await strict.request('POST', `/v1/agent/${agent}/v2/rules`, { body: json('p', url) });
      assert.equal(res.status, 422, `${url}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.detail.code, 'private_address', url);
    }
  });
});
