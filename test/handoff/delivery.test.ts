/**
 * Handoffs end to end: a conversation ends (the real durable ended job), its details are found in
 * what the visitor said, and the rule's template reaches a real receiver on 127.0.0.1 in each of the
 * five formats, with hostile values escaped and the signature a receiver computes; required details
 * missing → nothing sent; the pause after 10 failed deliveries and the resume by a test send; the
 * delivery log and replay; the inbox destination. The schedule is shortened through the knobs.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, test } from 'node:test';
import { XMLParser } from 'fast-xml-parser';
import { forEachEngine, startTestApp, type TestApp } from '../support/app.js';
import { startReceiver, type Receiver } from '../delivery/support/receiver.js';
import { conversation, makeAgent, sleep, until } from './support.js';

// Quotes, &, <, a newline, non-ASCII, a would-be variable and an XML end-of-CDATA.
const HOSTILE = 'Tom "T" O\'Neil & <Sons>\nline2 é 日本 ]]> {{email}}';
const TURNS: Array<['visitor' | 'agent', string]> = [
  ['agent', 'Hello! How can I help you today?'],
  ['visitor', 'Hi, I would like a quote for a kitchen.'],
  ['agent', 'Happy to help. What is your email address?'],
  ['visitor', 'It is jane.doe@example.com'],
  ['agent', 'Thanks. Anything else we should know about the project?'],
  ['visitor', HOSTILE],
];
const DETAILS = [
  { name: 'email', description: "the visitor's email address", required: true },
  { name: 'notes', description: 'anything else about the project', required: false },
];

function receivedSignatureOk(secret: string, request: { method: string; url: string; body: string; headers: Record<string, unknown> }, ownQuery = ''): boolean {
  const timestamp = String(request.headers['x-service-timestamp']);
  let payload = request.body;
  if (request.method === 'GET') {
    const query = request.url.slice(request.url.indexOf('?') + 1);
    payload = ownQuery ? query.slice(ownQuery.length + 1) : query;
  }
  const expected = 'sha256=' + crypto.createHmac('sha256', secret).update(`${timestamp}.${payload}`).digest('hex');
  const got = String(request.headers['x-service-signature']);
  return (
    got.length === expected.length && crypto.timingSafeEqual(Buffer.from(got), Buffer.from(expected)) && Math.abs(Date.now() / 1000 - Number(timestamp)) < 300
  );
}

forEachEngine('handoff deliveries', (engine) => {
  let t: TestApp;
  let receiver: Receiver;
  let agentId: number;
  before(async () => {
    t = await startTestApp(engine, { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_DELAYS: '1,1,1,1', WEBHOOK_TIMEOUT_SECONDS: '15' });
    receiver = await startReceiver([{ status: 200 }]);
    agentId = await makeAgent(t, 'Ava "the agent" & co');
  });
  after(async () => {
    await t.close();
    await receiver.close();
  });

  const createRule = async (body: Record<string, unknown>, agent = agentId) => {
    const res = await t.request('POST', `/v1/agent/${agent}/v2/rules`, { body });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.rule;
  };
  const requestsTo = (path: string) => receiver.received.filter((r) => r.url.startsWith(path));
  const visitor = { page: 'pricing & "plans" <b>', ref: 'ü€' };

  const formats: Array<{
    format: string;
    method: string;
    template: string;
    parse: (req: { body: string; url: string }) => Record<string, string>;
    contentType: string | undefined;
  }> = [
    {
      format: 'json',
      method: 'POST',
      contentType: 'application/json; charset=utf-8',
      template:
        '{"email": "{{email}}", "notes": "{{notes}}", "page": "{{visitor.page}}", "agent": "{{agent_name}}", "rule": "{{rule_name}}", "turns": {{visitor_turns}}, "at": "{{conversation_time}}"}',
      parse: (r) => JSON.parse(r.body),
    },
    {
      format: 'xml',
      method: 'POST',
      contentType: 'application/xml; charset=utf-8',
      template:
        '<?xml version="1.0"?>\n<lead kind="{{rule_name}}"><email>{{email}}</email><notes>{{notes}}</notes><page>{{visitor.page}}</page><agent>{{agent_name}}</agent><rule>{{rule_name}}</rule><turns>{{visitor_turns}}</turns><at>{{conversation_time}}</at></lead>',
      parse: (r) => {
        const lead = new XMLParser({ parseTagValue: false, ignoreAttributes: false, processEntities: true }).parse(r.body).lead;
        return { ...lead, turns: Number(lead.turns) };
      },
    },
    {
      format: 'text',
      method: 'POST',
      contentType: 'text/plain; charset=utf-8',
      template: 'email={{email}}\nnotes={{notes}}',
      parse: (r) => ({ email: r.body.split('\n')[0]!.slice(6), notes: r.body.slice(r.body.indexOf('notes=') + 6) }),
    },
    {
      format: 'form',
      method: 'POST',
      contentType: 'application/x-www-form-urlencoded; charset=utf-8',
      template:
        'email={{email}}\nnotes={{notes}}\npage={{visitor.page}}\nagent={{agent_name}}\nrule={{rule_name}}\nturns={{visitor_turns}}\nat={{conversation_time}}',
      parse: (r) => ({ ...Object.fromEntries(new URLSearchParams(r.body)), turns: Number(new URLSearchParams(r.body).get('turns')) }) as any,
    },
    {
      format: 'query',
      method: 'GET',
      contentType: undefined,
      template:
        'email={{email}}\nnotes={{notes}}\npage={{visitor.page}}\nagent={{agent_name}}\nrule={{rule_name}}\nturns={{visitor_turns}}\nat={{conversation_time}}',
      parse: (r) => {
        const params = new URL(r.url, 'http://x').searchParams;
        return { ...Object.fromEntries(params), turns: Number(params.get('turns')) } as any;
      },
    },
  ];

  for (const f of formats) {
    test(`${f.format}: the template reaches the receiver with hostile values escaped, signed as a receiver checks`, async () => {
      const path = `/${f.format}`;
      const ruleName = `Lead <${f.format}> & "co"`;
      const url = f.format === 'query' ? `${receiver.url}${path}?source=site&x=1` : `${receiver.url}${path}`;
      const rule = await createRule({
        name: ruleName,
        details: DETAILS,
        destination: { type: 'webhook', url, method: f.method, format: f.format, template: f.template, headers: { 'X-Api-Key': 'k-1' } },
      });
      const id = await conversation(t, agentId, TURNS, visitor);
      const [request] = await until(() => (requestsTo(path).length ? requestsTo(path) : undefined), 60_000, `a ${f.format} delivery`);
      assert.equal(request!.method, f.method);
      assert.equal(request!.headers['content-type'], f.contentType);
      assert.equal(request!.headers['user-agent'], 'Presence-DataHandoff/1.0');
      assert.equal(request!.headers['x-api-key'], 'k-1');
      assert.ok(receivedSignatureOk(rule.secret, request as any, f.format === 'query' ? 'source=site&x=1' : ''), 'signature');
      if (f.format === 'query') assert.ok(request!.url.startsWith(`${path}?source=site&x=1&email=`), request!.url);
      const values = f.parse(request!);
      assert.equal(values.email, 'jane.doe@example.com');
      assert.equal(values.notes, HOSTILE);
      if (f.format !== 'text') {
        assert.equal(values.page, visitor.page);
        assert.equal(values.agent, 'Ava "the agent" & co');
        assert.equal(values.rule, ruleName);
        assert.equal(values.turns as unknown as number, 3);
        assert.match(values.at!, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
      }
      // The log shows it delivered, with the conversation.
      const log = await until(async () => {
        const res = await t.request('GET', `/v1/agent/${agentId}/v2/rules/${rule.id}/deliveries`);
        return res.body.deliveries?.[0]?.status === 'delivered' ? res.body.deliveries : undefined;
      });
      assert.equal(log[0].conversation_id, id);
      assert.equal(log[0].delivery_id, request!.headers['x-service-delivery']);
      assert.equal(log[0].attempts[0].status_code, 200);
      await t.request('DELETE', `/v1/agent/${agentId}/v2/rules/${rule.id}?confirm=true`);
    });
  }

  test('a required detail the visitor never gave: nothing is sent for that rule; optional ones are sent empty', async () => {
    const agent = await makeAgent(t, 'Bo');
    const needsPhone = await createRule(
      {
        name: 'Needs phone',
        details: [{ name: 'phone', description: 'phone number', required: true }],
        destination: { type: 'webhook', url: `${receiver.url}/needs-phone`, format: 'json', template: '{"phone": "{{phone}}"}' },
      },
      agent,
    );
    const optional = await createRule(
      {
        name: 'Optional',
        details: [
          { name: 'phone', description: 'phone number', required: false },
          { name: 'email', description: 'email', required: true },
        ],
        destination: { type: 'webhook', url: `${receiver.url}/optional`, format: 'json', template: '{"phone": "{{phone}}", "email": "{{email}}"}' },
      },
      agent,
    );
    await conversation(t, agent, TURNS);
    const [request] = await until(() => (requestsTo('/optional').length ? requestsTo('/optional') : undefined), 60_000, 'the optional rule');
    assert.deepEqual(JSON.parse(request!.body), { phone: '', email: 'jane.doe@example.com' });
    await sleep(2000);
    assert.equal(requestsTo('/needs-phone').length, 0);
    assert.deepEqual((await t.request('GET', `/v1/agent/${agent}/v2/rules/${needsPhone.id}/deliveries`)).body.deliveries, []);
    // Said later in another conversation: sent then, in E.164.
    await conversation(t, agent, [
      ['agent', 'What number can we call you on?'],
      ['visitor', 'Sure, (415) 555-2671'],
    ]);
    const [phoned] = await until(() => (requestsTo('/needs-phone').length ? requestsTo('/needs-phone') : undefined), 60_000, 'the phone rule');
    assert.deepEqual(JSON.parse(phoned!.body), { phone: '+14155552671' });
    void optional;
  });

  test('a phone number said that is not a possible one is delivered as said and marked unverified, in the default template too', async () => {
    const agent = await makeAgent(t, 'Cy');
    await createRule(
      {
        name: 'Call back',
        details: [{ name: 'phone', description: 'phone number', required: true }],
        destination: { type: 'webhook', url: `${receiver.url}/unverified`, format: 'json' },
      },
      agent,
    );
    await conversation(t, agent, [
      ['agent', 'What number can we call you on?'],
      ['visitor', 'my phone is +1 555 0100'],
    ]);
    const [request] = await until(() => (requestsTo('/unverified').length ? requestsTo('/unverified') : undefined), 60_000, 'the call-back rule');
    const body = JSON.parse(request!.body);
    assert.equal(body.phone, '+1 555 0100');
    assert.equal(body.unverified, 'phone');
    // A possible number is verified: written in E.164 and not listed.
    await conversation(t, agent, [
      ['agent', 'What number can we call you on?'],
      ['visitor', 'Sure, (415) 555-2671'],
    ]);
    const second = await until(() => (requestsTo('/unverified').length > 1 ? requestsTo('/unverified')[1] : undefined), 60_000, 'the second delivery');
    assert.deepEqual({ phone: JSON.parse(second.body).phone, unverified: JSON.parse(second.body).unverified }, { phone: '+14155552671', unverified: '' });
  });

  test('a 4xx marks the rule needs_attention; 10 failed deliveries in a row pause it; a successful test send resumes it', async () => {
    const failing = await startReceiver([{ status: 410 }]);
    try {
      const agent = await makeAgent(t, 'Cy');
      const rule = await createRule(
        { name: 'Flaky', details: DETAILS, destination: { type: 'webhook', url: `${failing.url}/gone`, format: 'json', template: '{"email": "{{email}}"}' } },
        agent,
      );
      const stateOf = async () => (await t.request('GET', `/v1/agent/${agent}/v2/rules`)).body.rules.find((r: any) => r.id === rule.id);
      await conversation(t, agent, TURNS);
      await until(async () => ((await stateOf()).state === 'needs_attention' ? true : undefined), 60_000, 'needs_attention');
      for (let i = 1; i < 10; i++) await conversation(t, agent, TURNS);
      await failing.waitFor(10, 120_000);
      const paused = await until(
        async () => {
          const r = await stateOf();
          return r.state === 'paused' ? r : undefined;
        },
        60_000,
        'paused',
      );
      assert.equal(paused.consecutive_failures, 10);
      // Paused: a further conversation sends nothing.
      await conversation(t, agent, TURNS);
      await sleep(3000);
      assert.equal(failing.received.length, 10);
      // A failed test does not resume it; a delivered one does.
      const stillFailing = await t.request('POST', `/v1/agent/${agent}/v2/rules/${rule.id}/test`);
      assert.equal(stillFailing.status, 200);
      assert.deepEqual(
        { delivered: stillFailing.body.delivered, status_code: stillFailing.body.status_code, error: stillFailing.body.error },
        { delivered: false, status_code: 410, error: 'HTTP 410' },
      );
      assert.equal((await stateOf()).state, 'paused');
      failing.script.splice(0, failing.script.length, { status: 200 });
      const ok = await t.request('POST', `/v1/agent/${agent}/v2/rules/${rule.id}/test`);
      assert.equal(ok.body.delivered, true);
      assert.equal(ok.body.status_code, 200);
      const test = failing.received.at(-1)!;
      assert.deepEqual(JSON.parse(test.body), { email: 'jane.doe@example.com' });
      assert.ok(receivedSignatureOk(rule.secret, test as any));
      const resumed = await stateOf();
      assert.equal(resumed.state, 'active');
      assert.equal(resumed.consecutive_failures, 0);
      // Active again: the next conversation is delivered.
      const before = failing.received.length;
      await conversation(t, agent, TURNS);
      await failing.waitFor(before + 1);
      // The log lists them newest first; a failed one can be replayed by hand with the same id.
      const log = (await t.request('GET', `/v1/agent/${agent}/v2/rules/${rule.id}/deliveries?limit=200`)).body.deliveries;
      const failed = log.find((d: any) => d.status === 'failed' && d.kind === 'event');
      assert.equal(failed.attempts[0].status_code, 410);
      const replay = await t.request('POST', `/v1/agent/${agent}/v2/rules/${rule.id}/deliveries/${failed.delivery_id}/replay`);
      assert.equal(replay.status, 200, JSON.stringify(replay.body));
      const replayed = await until(
        () => failing.received.find((r, i) => i >= before + 1 && r.headers['x-service-delivery'] === failed.delivery_id),
        60_000,
        'the replay',
      );
      assert.ok(replayed);
      const again = await t.request('POST', `/v1/agent/${agent}/v2/rules/${rule.id}/deliveries/${failed.delivery_id}/replay`);
      assert.ok(again.status === 409 || again.status === 200, `a delivered one is not replayed again: ${again.status}`);
      assert.equal((await t.request('POST', `/v1/agent/${agent}/v2/rules/${rule.id}/deliveries/${crypto.randomUUID()}/replay`)).status, 404);
    } finally {
      await failing.close();
    }
  });

  test('a rotated secret signs the next attempt; the inbox destination gets the message with visitor values', async () => {
    const agent = await makeAgent(t, 'Di');
    const rule = await createRule(
      {
        name: 'Rotating',
        details: DETAILS,
        destination: { type: 'webhook', url: `${receiver.url}/rotating`, format: 'json', template: '{"email": "{{email}}"}' },
      },
      agent,
    );
    const patched = await t.request('PATCH', `/v1/agent/${agent}/v2/rules/${rule.id}`, { body: { rotate_secret: true } });
    const secret = patched.body.rules.find((r: any) => r.id === rule.id).secret;
    await conversation(t, agent, TURNS);
    const [request] = await until(() => (requestsTo('/rotating').length ? requestsTo('/rotating') : undefined));
    assert.ok(receivedSignatureOk(secret, request as any));
    assert.ok(!receivedSignatureOk(rule.secret, request as any));

    await createRule({ name: 'To the inbox', details: DETAILS, destination: { type: 'inbox', template: 'Lead {{email}} from {{visitor.page}}' } }, agent);
    const id = await conversation(t, agent, TURNS, { page: '/pricing' });
    const item = await until(
      async () => (await t.request('GET', '/v1/notifications?limit=200')).body.items?.find((i: any) => i.conversation_id === id && i.title === 'To the inbox'),
      60_000,
      'the inbox item',
    );
    assert.equal(item.body, 'Lead jane.doe@example.com from /pricing');
    assert.equal(item.category, 'handoff');
  });
});
