/**
 * Webhook destinations through the shared delivery engine, against a real receiver on 127.0.0.1:
 * the notification as JSON, signed exactly as a receiver checks it with the destination's own
 * secret, retried on a 5xx with the same delivery id, a 4xx marking the destination as needing
 * attention, the pause after 10 failures and its resume by a test send; private addresses refused
 * at save unless WEBHOOK_ALLOW_PRIVATE=1.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import http from 'node:http';
import { after, before, test } from 'node:test';
import { forEachEngine, startTestApp, type TestApp } from '../support/app.js';
import { assertCoded, converse, makeAgent, notificationOf, sleep, until } from './helpers.js';

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A receiver that answers the scripted statuses in turn (then 200) and records every request. */
async function receiver(script: number[] = []): Promise<{ url: string; received: Received[]; script: number[]; close(): Promise<void> }> {
  const received: Received[] = [];
  const state = { script: [...script] };
  const server = http.createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    received.push({ headers: req.headers, body });
    res.writeHead(state.script.shift() ?? 200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hooks/presence?source=notifications`,
    received,
    get script() {
      return state.script;
    },
    set script(value: number[]) {
      state.script = value;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** What a receiver does: HMAC-SHA256 over `<timestamp>.<body>` with the whole secret, in constant time. */
function verify(secret: string, request: Received): boolean {
  const timestamp = String(request.headers['x-service-timestamp']);
  if (!/^\d+$/.test(timestamp) || Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) return false;
  const expected = Buffer.from(`sha256=${crypto.createHmac('sha256', secret).update(`${timestamp}.${request.body}`).digest('hex')}`);
  const given = Buffer.from(String(request.headers['x-service-signature']));
  return expected.length === given.length && crypto.timingSafeEqual(expected, given);
}

forEachEngine('webhook destinations', (engine) => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(engine, { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_DELAYS: '1,1,1,1', WEBHOOK_TIMEOUT_SECONDS: '5' });
  });
  after(() => t.close());

  const destinationOf = async (key: string, id: number) =>
    (await t.request('GET', '/v1/notifications/destinations', { key })).body.destinations.find((d: any) => d.id === id);

  test('a notification is posted as signed JSON; a 5xx is retried with the same delivery id', async () => {
    const hook = await receiver([500]);
    const a = await t.account('paid');
    const destination = (
      await t.request('POST', '/v1/notifications/destinations/webhook', { key: a.key, body: { url: hook.url, headers: { 'X-Api-Key': 'crm-key' } } })
    ).body.destination;
    const agent = await makeAgent(t, { name: 'Webhook agent' }, a.key);
    const rule = (
      await t.request('POST', `/v1/notifications/rules/${agent}`, {
        key: a.key,
        body: { name: 'Complaint', category: 'complaint', when: { keywords: ['manager'] }, destination_ids: [destination.id] },
      })
    ).body.rule;
    const id = await converse(t, agent, ['I want to talk to your "manager" <now> & fast'], a.key);
    const item = await notificationOf(t, id, a.key);
    await until(() => hook.received.length >= 2, 20_000, 'the retry');
    const [first, second] = hook.received;
    for (const request of [first!, second!]) {
      assert.ok(verify(destination.secret, request), 'signed with the destination secret');
      assert.equal(request.headers['content-type'], 'application/json; charset=utf-8');
      assert.match(String(request.headers['user-agent']), /^Presence-/);
      assert.equal(request.headers['x-api-key'], 'crm-key');
    }
    assert.equal(first!.headers['x-service-delivery'], second!.headers['x-service-delivery'], 'the same delivery id on every attempt');
    const payload = JSON.parse(second!.body);
    assert.equal(payload.type, 'notification');
    assert.deepEqual(
      {
        id: payload.notification.id,
        agent_id: payload.notification.agent_id,
        conversation_id: payload.notification.conversation_id,
        rule_id: payload.notification.rule_id,
        category: payload.notification.category,
        title: payload.notification.title,
      },
      { id: item.id, agent_id: agent, conversation_id: id, rule_id: rule.id, category: 'complaint', title: 'Complaint' },
    );
    assert.match(payload.notification.body, /I want to talk to your "manager" <now> & fast/);
    const log = await until(async () => {
      const d = (await t.request('GET', `/v1/notifications/destinations/${destination.id}/deliveries`, { key: a.key })).body.deliveries[0];
      return d?.status === 'delivered' ? d : undefined;
    });
    assert.deepEqual(
      log.attempts.map((x: any) => x.status_code),
      [500, 200],
    );
    assert.equal(log.delivery_id, first!.headers['x-service-delivery']);
    // A rotated secret signs the next delivery.
    const rotated = (await t.request('PATCH', `/v1/notifications/destinations/${destination.id}`, { key: a.key, body: { rotate_secret: true } })).body
      .destination;
    const tested = await t.request('POST', `/v1/notifications/rules/${agent}/test-delivery`, { key: a.key, body: { destination_id: destination.id } });
    assert.deepEqual(tested.body.results, [{ destination_id: destination.id, type: 'webhook', delivered: true, status_code: 200, error: null }]);
    assert.ok(verify(rotated.secret, hook.received.at(-1)!));
    assert.ok(!verify(destination.secret, hook.received.at(-1)!));
    await hook.close();
  });

  test('a 4xx is not retried and marks the destination; ten failed deliveries pause it; a test send resumes it', async () => {
    const hook = await receiver([404]);
    const a = await t.account('paid');
    const destination = (await t.request('POST', '/v1/notifications/destinations/webhook', { key: a.key, body: { url: hook.url } })).body.destination;
    const agent = await makeAgent(t, {}, a.key);
    await t.request('POST', `/v1/notifications/rules/${agent}`, { key: a.key, body: { name: 'All', category: 'alert', destination_ids: [destination.id] } });
    await converse(t, agent, ['hello'], a.key);
    const marked = await until(async () => {
      const d = await destinationOf(a.key, destination.id);
      return d.state === 'needs_attention' ? d : undefined;
    });
    assert.equal(marked.consecutive_failures, 1);
    assert.equal(hook.received.length, 1, 'not retried');

    hook.script = Array(9).fill(410);
    for (let i = 0; i < 9; i++) await converse(t, agent, [`hello ${i}`], a.key);
    const paused = await until(
      async () => {
        const d = await destinationOf(a.key, destination.id);
        return d.state === 'paused' ? d : undefined;
      },
      30_000,
      'the pause',
    );
    assert.equal(paused.consecutive_failures, 10);
    const before = hook.received.length;
    await converse(t, agent, ['while paused'], a.key);
    await until(async () => (await t.request('GET', `/v1/notifications?agent_id=${agent}`, { key: a.key })).body.total === 11);
    // Its delivery is in the log, skipped (as a Telegram chat's is), with no attempt.
    const skipped = await until(async () =>
      (await t.request('GET', `/v1/notifications/destinations/${destination.id}/deliveries`, { key: a.key })).body.deliveries.find(
        (d: any) => d.status === 'skipped',
      ),
    );
    assert.deepEqual(skipped.attempts, []);
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(hook.received.length, before, 'a paused destination receives nothing');

    const tested = await t.request('POST', `/v1/notifications/rules/${agent}/test-delivery`, { key: a.key, body: { destination_id: destination.id } });
    assert.equal(tested.body.results[0].delivered, true);
    const resumed = await destinationOf(a.key, destination.id);
    assert.deepEqual([resumed.state, resumed.consecutive_failures], ['active', 0]);
    await hook.close();
  });

  test('quiet hours hold a webhook send until the window ends, then the delivery engine sends it, signed', async () => {
    const hook = await receiver();
    const a = await t.account('paid');
    const destination = (await t.request('POST', '/v1/notifications/destinations/webhook', { key: a.key, body: { url: hook.url } })).body.destination;
    const agent = await makeAgent(t, { name: 'Night agent' }, a.key);
    await t.request('POST', `/v1/notifications/rules/${agent}`, {
      key: a.key,
      body: { name: 'Any lead', category: 'lead', destination_ids: [destination.id] },
    });
    // Quiet hours are whole minutes: a window that ends at the next minute boundary (at least
    // 10 s away, so the conversation ends inside it) holds the send for under 70 s.
    if (new Date().getUTCSeconds() > 50) await sleep((61 - new Date().getUTCSeconds()) * 1000);
    const hhmm = (at: number) => new Date(at).toISOString().slice(11, 16);
    const windowEnd = Math.ceil((Date.now() + 1) / 60_000) * 60_000;
    await t.request('PUT', `/v1/notifications/prefs/${agent}`, {
      key: a.key,
      body: { quiet_hours: { start: hhmm(Date.now() - 3_600_000), end: hhmm(windowEnd), timezone: 'UTC' } },
    });
    const id = await converse(t, agent, ['Please call me tomorrow'], a.key);
    await notificationOf(t, id, a.key);
    const held = await until(
      async () => (await t.request('GET', `/v1/notifications/destinations/${destination.id}/deliveries`, { key: a.key })).body.deliveries[0],
    );
    assert.equal(held.status, 'pending');
    assert.equal(new Date(held.next_attempt_at).getTime(), windowEnd, 'held until the window ends');
    assert.equal(hook.received.length, 0, 'nothing is sent during quiet hours');
    await until(() => hook.received.length >= 1, windowEnd - Date.now() + 30_000, 'the send after the window');
    assert.ok(Date.now() >= windowEnd, 'not before the window ends');
    const payload = JSON.parse(hook.received[0]!.body);
    assert.equal(payload.notification.conversation_id, id);
    assert.ok(verify(destination.secret, hook.received[0]!), 'signed with the destination secret');
    const log = await until(
      async () => {
        const deliveries = (await t.request('GET', `/v1/notifications/destinations/${destination.id}/deliveries`, { key: a.key })).body.deliveries;
        return deliveries.find((d: any) => d.status === 'delivered');
      },
      10_000,
      'the delivered entry in the log',
    );
    assert.equal(log.delivery_id, held.delivery_id, 'the delivery keeps the id its held entry showed');
    assert.equal(hook.received[0]!.headers['x-service-delivery'], held.delivery_id);
    await hook.close();
  });

  test('private addresses are refused when saved unless WEBHOOK_ALLOW_PRIVATE=1', async () => {
    const strict = await startTestApp(engine, {});
    try {
      for (const url of ['http://127.0.0.1:8080/x', 'http://localhost/x', 'http://10.1.2.3/x', 'http://[::1]/x', 'http://192.168.1.5/x']) {
        assertCoded(await strict.request('POST', '/v1/notifications/destinations/webhook', { body: { url } }), 422, 'private_address');
      }
      const ok = await strict.request('POST', '/v1/notifications/destinations/webhook', { body: { url: 'https://93.184.215.14/hook' } });
      assert.equal(ok.status, 201);
      assertCoded(
        await strict.request('PATCH', `/v1/notifications/destinations/${ok.body.destination.id}`, { body: { url: 'http://127.0.0.1/x' } }),
        422,
        'private_address',
      );
    } finally {
      await strict.close();
    }
  });
});
