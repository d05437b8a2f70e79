/**
 * The notification routes on a real server and database (both engines): alert rules, prefs, the
 * inbox fed by real ended conversations, `test`, the offline builder, webhook destinations, and
 * every 422 and limit.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { forEachEngine, startTestApp, type TestApp } from '../support/app.js';
import { assertCoded, converse, endedHandled, itemAt, makeAgent, notificationOf, until, validationItems } from './helpers.js';
import { started, stopSession } from '../sessions/helpers.js';
import { RULE_LIMITS } from '../../src/notifications/types.js';

const refundRule = { name: 'Refund request', category: 'support', when: { keywords: ['refund'] } };

forEachEngine('notification routes', (engine) => {
  let t: TestApp;
  let agentId: number;
  before(async () => {
    t = await startTestApp(engine, { WEBHOOK_ALLOW_PRIVATE: '1' });
    agentId = await makeAgent(t, { name: 'Inbox agent' });
  });
  after(() => t.close());

  test('alert rules: create, list, replace, delete; another account sees none of them', async () => {
    const created = await t.request('POST', `/v1/notifications/rules/${agentId}`, {
      body: { ...refundRule, when: { keywords: ['refund', 'money back'], min_duration_seconds: 30, min_visitor_turns: 2, detail_collected: 'email' } },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const rule = created.body.rule;
    assert.equal(typeof rule.id, 'number');
    assert.deepEqual(
      { name: rule.name, category: rule.category, when: rule.when, destination_ids: rule.destination_ids, enabled: rule.enabled, agent_id: rule.agent_id },
      {
        name: 'Refund request',
        category: 'support',
        when: { keywords: ['refund', 'money back'], min_duration_seconds: 30, min_visitor_turns: 2, detail_collected: 'email' },
        destination_ids: [],
        enabled: true,
        agent_id: agentId,
      },
    );
    const listed = await t.request('GET', `/v1/notifications/rules/${agentId}`);
    assert.equal(listed.status, 200);
    assert.deepEqual(
      listed.body.rules.map((r: any) => r.id),
      [rule.id],
    );

    const replaced = await t.request('PUT', `/v1/notifications/rules/${agentId}/${rule.id}`, {
      body: { name: 'Angry', category: 'complaint', when: { keywords: ['angry'] }, enabled: false },
    });
    assert.equal(replaced.status, 200);
    assert.deepEqual(
      [replaced.body.rule.name, replaced.body.rule.category, replaced.body.rule.when, replaced.body.rule.enabled],
      ['Angry', 'complaint', { keywords: ['angry'] }, false],
    );

    const other = await t.account('paid');
    assertCoded(await t.request('GET', `/v1/notifications/rules/${agentId}`, { key: other.key }), 404, 'agent_not_found');
    assertCoded(await t.request('PUT', `/v1/notifications/rules/${agentId}/${rule.id}`, { key: other.key, body: refundRule }), 404, 'agent_not_found');
    const otherAgent = await makeAgent(t, { name: 'Other' }, other.key);
    assertCoded(await t.request('PUT', `/v1/notifications/rules/${otherAgent}/${rule.id}`, { key: other.key, body: refundRule }), 404, 'rule_not_found');
    assertCoded(await t.request('DELETE', `/v1/notifications/rules/${agentId}/${rule.id}`), 400, 'confirmation_required');
    const deleted = await t.request('DELETE', `/v1/notifications/rules/${agentId}/${rule.id}?confirm=true`);
    assert.equal(deleted.status, 200);
    assert.deepEqual(deleted.body.rules, []);
    assertCoded(await t.request('DELETE', `/v1/notifications/rules/${agentId}/${rule.id}?confirm=true`), 404, 'rule_not_found');
  });

  test('alert rules: every bad field is a 422 naming it', async () => {
    const post = (body: unknown) => t.request('POST', `/v1/notifications/rules/${agentId}`, { body });
    assert.equal(itemAt(await post({ category: 'lead' }), ['body', 'name']).type, 'missing');
    itemAt(await post({ name: '   ', category: 'lead' }), ['body', 'name']);
    itemAt(await post({ name: 'x', category: 'Not A Word' }), ['body', 'category']);
    itemAt(await post({ name: 'x', category: 'lead', when: { keywords: [] } }), ['body', 'when', 'keywords']);
    itemAt(await post({ name: 'x', category: 'lead', when: { keywords: Array.from({ length: RULE_LIMITS.keywords + 1 }, (_, i) => `k${i}`) } }), [
      'body',
      'when',
      'keywords',
    ]);
    itemAt(await post({ name: 'x', category: 'lead', when: { min_duration_seconds: -1 } }), ['body', 'when', 'min_duration_seconds']);
    itemAt(await post({ name: 'x', category: 'lead', when: { min_visitor_turns: 1.5 } }), ['body', 'when', 'min_visitor_turns']);
    itemAt(await post({ name: 'x', category: 'lead', when: { detail_collected: 'e mail!' } }), ['body', 'when', 'detail_collected']);
    assert.equal(itemAt(await post({ name: 'x', category: 'lead', when: { sentiment: 'angry' } }), ['body', 'when', 'sentiment']).type, 'extra_forbidden');
    assert.equal(itemAt(await post({ name: 'x', category: 'lead', colour: 'red' }), ['body', 'colour']).type, 'extra_forbidden');
    itemAt(await post({ name: 'x', category: 'lead', destination_ids: [1, 1] }), ['body', 'destination_ids']);
    const unknown = itemAt(await post({ name: 'x', category: 'lead', destination_ids: [999999] }), ['body', 'destination_ids', 0]);
    assert.equal(unknown.type, 'unknown_destination');
    itemAt(await t.request('POST', `/v1/notifications/rules/abc`, { body: refundRule }), ['path', 'agent_id']);
    assertCoded(await t.request('POST', `/v1/notifications/rules/999999`, { body: refundRule }), 404, 'agent_not_found');
    assert.equal((await t.request('GET', `/v1/notifications/rules/${agentId}`)).body.rules.length, 0, 'nothing was saved');
  });

  test(`an agent has at most ${RULE_LIMITS.rulesPerAgent} alert rules`, async () => {
    const agent = await makeAgent(t, { name: 'Many rules' });
    for (let i = 0; i < RULE_LIMITS.rulesPerAgent; i++) {
      const res = await t.request('POST', `/v1/notifications/rules/${agent}`, { body: { name: `r${i}`, category: 'alert' } });
      assert.equal(res.status, 201);
    }
    assertCoded(await t.request('POST', `/v1/notifications/rules/${agent}`, { body: { name: 'one more', category: 'alert' } }), 409, 'rule_limit');
  });

  test('prefs: defaults, categories on and off, quiet hours set and cleared, and 422s', async () => {
    const agent = await makeAgent(t, { name: 'Prefs agent' });
    await t.request('POST', `/v1/notifications/rules/${agent}`, { body: { name: 'VIP', category: 'vip' } });
    const initial = await t.request('GET', `/v1/notifications/prefs/${agent}`);
    assert.equal(initial.status, 200);
    assert.equal(initial.body.agent_id, agent);
    assert.equal(initial.body.quiet_hours, null);
    assert.equal(initial.body.categories.vip, true, "a category the agent's rules use is listed");
    assert.equal(initial.body.categories.lead, true);

    const put = await t.request('PUT', `/v1/notifications/prefs/${agent}`, {
      body: { categories: { vip: false }, quiet_hours: { start: '22:00', end: '07:30', timezone: 'Europe/Berlin' } },
    });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    assert.equal(put.body.categories.vip, false);
    assert.deepEqual(put.body.quiet_hours, { start: '22:00', end: '07:30', timezone: 'Europe/Berlin' });
    // A PUT of one field keeps the other.
    const cleared = await t.request('PUT', `/v1/notifications/prefs/${agent}`, { body: { quiet_hours: null } });
    assert.equal(cleared.body.quiet_hours, null);
    assert.equal(cleared.body.categories.vip, false);
    assert.deepEqual((await t.request('GET', `/v1/notifications/prefs/${agent}`)).body, cleared.body);

    const bad = (body: unknown) => t.request('PUT', `/v1/notifications/prefs/${agent}`, { body });
    itemAt(await bad({ quiet_hours: { start: '25:00', end: '07:00' } }), ['body', 'quiet_hours', 'start']);
    itemAt(await bad({ quiet_hours: { start: '22:00', end: '7am' } }), ['body', 'quiet_hours', 'end']);
    itemAt(await bad({ quiet_hours: { start: '22:00', end: '07:00', timezone: 'Mars/Olympus' } }), ['body', 'quiet_hours', 'timezone']);
    validationItems(await bad({ categories: { 'Bad Name': true } }));
    itemAt(await bad({ categories: { lead: 'yes' } }), ['body', 'categories', 'lead']);
    validationItems(await bad({ categories: Object.fromEntries(Array.from({ length: RULE_LIMITS.categoriesInPrefs + 1 }, (_, i) => [`c${i}`, true])) }));
    itemAt(await bad({ mute: true }), ['body', 'mute']);
    const other = await t.account('paid');
    assertCoded(await t.request('GET', `/v1/notifications/prefs/${agent}`, { key: other.key }), 404, 'agent_not_found');
  });

  test('a conversation that ends matching a rule makes one notification in the inbox; one that does not, none', async () => {
    const agent = await makeAgent(t, { name: 'Refund desk' });
    const rule = (
      await t.request('POST', `/v1/notifications/rules/${agent}`, { body: { ...refundRule, when: { keywords: ['refund'], min_visitor_turns: 2 } } })
    ).body.rule;
    await t.request('POST', `/v1/notifications/rules/${agent}`, { body: { name: 'Long talks', category: 'alert', when: { min_duration_seconds: 3600 } } });

    const matching = await converse(t, agent, ['Hello there', 'I would like a refund for my order, it arrived broken']);
    const item = await notificationOf(t, matching);
    assert.equal(typeof item.id, 'number');
    assert.equal(item.agent_id, agent);
    assert.equal(item.category, 'support');
    assert.equal(item.title, 'Refund request');
    assert.match(item.body, /Visitor said: "I would like a refund for my order, it arrived broken"/);
    assert.match(item.body, /Refund desk · \d+ s · 2 visitor turns/);
    assert.equal(item.read, false);
    assert.equal(item.rule_id, rule.id);
    assert.match(item.created_at, /^\d{4}-\d\d-\d\dT.*Z$/);
    // The conversation carries the category (the reports filter on it).
    const { rows } = await sql<{ categories: string[] }>`SELECT categories FROM conversations WHERE id = ${matching}`.execute(t.database.db);
    assert.deepEqual(rows[0]!.categories, ['support']);

    const oneTurn = await converse(t, agent, ['refund please']);
    const other = await converse(t, agent, ['What are your opening hours?', 'And on Sunday?']);
    await endedHandled(t, oneTurn);
    await endedHandled(t, other);
    const all = (await t.request('GET', `/v1/notifications?agent_id=${agent}`)).body;
    assert.deepEqual(
      all.items.map((i: any) => i.conversation_id),
      [matching],
      'only the conversation where every condition held',
    );

    // The ended hook running again (a retried job) adds nothing.
    await t.context.notifications.conversationEnded((await t.context.conversations.ended(matching))!);
    assert.equal((await t.request('GET', `/v1/notifications?agent_id=${agent}`)).body.total, 1);
  });

  test('end to end through visitor.message: a typed visitor turn, the session stops, the inbox has the notification', async () => {
    const agent = await makeAgent(t, { name: 'Live desk', system_prompt: 'We repair bikes. Refunds within 30 days.' });
    await t.request('POST', `/v1/notifications/rules/${agent}`, { body: { name: 'Refund asked', category: 'support', when: { keywords: ['refund'] } } });
    const session = await started(t, { agent_id: agent, mode: 'conversation' });
    const sent = await t.request('POST', `/v1/sessions/${session.session_id}/commands`, {
      body: { type: 'visitor.message', text: 'Can I get a refund on my bike repair?' },
    });
    assert.equal(sent.status, 202, JSON.stringify(sent.body));
    await until(
      async () => (await t.context.conversations.transcript(session.session_id)).some((turn) => turn.role === 'agent'),
      20_000,
      'the agent to answer',
    );
    await stopSession(t, session.session_id);
    const item = await notificationOf(t, session.session_id);
    assert.equal(item.title, 'Refund asked');
    assert.match(item.body, /Visitor said: "Can I get a refund on my bike repair\?"/);
    assert.match(item.body, /1 visitor turn/);
  });

  test('the inbox: filters, unread count, mark read by ids or all, and its 422s', async () => {
    const a = await t.account('paid');
    const agentA = await makeAgent(t, { name: 'A' }, a.key);
    const agentB = await makeAgent(t, { name: 'B' }, a.key);
    for (const agent of [agentA, agentB]) {
      await t.request('POST', `/v1/notifications/rules/${agent}`, { key: a.key, body: { name: 'Everything', category: agent === agentA ? 'lead' : 'alert' } });
    }
    const ids = [await converse(t, agentA, ['one'], a.key), await converse(t, agentA, ['two'], a.key), await converse(t, agentB, ['three'], a.key)];
    for (const id of ids) await notificationOf(t, id, a.key);

    const all = (await t.request('GET', '/v1/notifications', { key: a.key })).body;
    assert.equal(all.total, 3);
    assert.equal(all.unread, 3);
    assert.equal(all.limit, 30);
    assert.equal(all.offset, 0);
    assert.deepEqual(
      all.items.map((i: any) => i.conversation_id),
      [...ids].reverse(),
      'newest first',
    );
    assert.deepEqual(
      (await t.request('GET', `/v1/notifications?agent_id=${agentB}`, { key: a.key })).body.items.map((i: any) => i.conversation_id),
      [ids[2]],
    );
    assert.equal((await t.request('GET', '/v1/notifications?category=lead', { key: a.key })).body.total, 2);
    const page = (await t.request('GET', '/v1/notifications?limit=1&offset=1', { key: a.key })).body;
    assert.deepEqual([page.items.length, page.items[0].conversation_id, page.total], [1, ids[1], 3]);
    assert.deepEqual((await t.request('GET', '/v1/notifications/unread-count', { key: a.key })).body, { unread: 3 });
    assert.deepEqual((await t.request('GET', `/v1/notifications/unread-count?agent_id=${agentA}`, { key: a.key })).body, { unread: 2 });

    const newest = all.items[0];
    const marked = await t.request('POST', '/v1/notifications/read', { key: a.key, body: { ids: [newest.id] } });
    assert.deepEqual(marked.body, { marked: 1, unread: 2 });
    const unread = (await t.request('GET', '/v1/notifications?status=unread', { key: a.key })).body;
    assert.deepEqual([unread.total, unread.unread], [2, 2]);
    assert.ok(!unread.items.some((i: any) => i.id === newest.id));
    assert.equal((await t.request('GET', '/v1/notifications', { key: a.key })).body.items[0].read, true);
    // Another account's ids are not touched.
    assert.deepEqual((await t.request('POST', '/v1/notifications/read', { body: { ids: [all.items[1].id] } })).body.marked, 0);
    assert.deepEqual((await t.request('POST', '/v1/notifications/read', { key: a.key, body: { all: true, agent_id: agentA } })).body, { marked: 2, unread: 0 });
    assert.deepEqual((await t.request('GET', '/v1/notifications/unread-count', { key: a.key })).body, { unread: 0 });

    const get = (query: string) => t.request('GET', `/v1/notifications${query}`, { key: a.key });
    itemAt(await get('?status=read'), ['query', 'status']);
    itemAt(await get('?limit=0'), ['query', 'limit']);
    itemAt(await get('?limit=201'), ['query', 'limit']);
    itemAt(await get('?offset=-1'), ['query', 'offset']);
    itemAt(await get('?agent_id=x'), ['query', 'agent_id']);
    itemAt(await t.request('GET', '/v1/notifications/unread-count?agent_id=0', { key: a.key }), ['query', 'agent_id']);
    const read = (body: unknown) => t.request('POST', '/v1/notifications/read', { key: a.key, body });
    validationItems(await read({}));
    validationItems(await read({ ids: [1], all: true }));
    validationItems(await read({ all: false }));
    itemAt(await read({ ids: [] }), ['body', 'ids']);
    itemAt(await read({ ids: ['x'] }), ['body', 'ids', 0]);
    itemAt(await read({ ids: Array.from({ length: 1001 }, (_, i) => i + 1) }), ['body', 'ids']);
  });

  test('test: would a rule fire for a sample or a past conversation, condition by condition', async () => {
    const agent = await makeAgent(t, { name: 'Tester' });
    const saved = (
      await t.request('POST', `/v1/notifications/rules/${agent}`, {
        body: { name: 'Leads', category: 'lead', when: { keywords: ['price'], detail_collected: 'email' } },
      })
    ).body.rule;
    const sample = {
      transcript: [
        { role: 'visitor', text: 'What is the price of the gold plan?' },
        { role: 'agent', text: 'It is 20 a month.' },
        { role: 'visitor', text: 'Send it to ana@example.com' },
      ],
      duration_seconds: 75,
    };
    const fires = await t.request('POST', `/v1/notifications/rules/${agent}/test`, { body: { rule_id: saved.id, sample } });
    assert.equal(fires.status, 200, JSON.stringify(fires.body));
    assert.equal(fires.body.would_fire, true);
    assert.deepEqual(
      fires.body.conditions.map((c: any) => [c.condition, c.passed]),
      [
        ['keywords', true],
        ['detail_collected', true],
      ],
    );
    assert.equal(fires.body.notification.title, 'Leads');
    assert.match(fires.body.notification.body, /email: ana@example.com/);

    const unsaved = await t.request('POST', `/v1/notifications/rules/${agent}/test`, {
      body: { rule: { name: 'Long', category: 'alert', when: { min_duration_seconds: 120 } }, sample },
    });
    assert.equal(unsaved.body.would_fire, false);
    assert.equal(unsaved.body.notification, null);
    assert.match(unsaved.body.conditions[0].explanation, /1 min 15 s/);

    const past = await converse(t, agent, ['how much is the price?', 'mail me at bo@example.org']);
    await endedHandled(t, past);
    const onPast = await t.request('POST', `/v1/notifications/rules/${agent}/test`, { body: { rule_id: saved.id, conversation_id: past } });
    assert.equal(onPast.body.would_fire, true);
    assert.match(onPast.body.notification.body, /bo@example.org/);

    const other = await t.account('paid');
    const otherAgent = await makeAgent(t, {}, other.key);
    assertCoded(
      await t.request('POST', `/v1/notifications/rules/${otherAgent}/test`, {
        key: other.key,
        body: { rule: { name: 'x', category: 'alert' }, conversation_id: past },
      }),
      404,
      'conversation_not_found',
    );
    assertCoded(await t.request('POST', `/v1/notifications/rules/${agent}/test`, { body: { rule_id: 999999, sample } }), 404, 'rule_not_found');
    const bad = (body: unknown) => t.request('POST', `/v1/notifications/rules/${agent}/test`, { body });
    validationItems(await bad({ sample }));
    validationItems(await bad({ rule_id: saved.id, rule: { name: 'x', category: 'alert' }, sample }));
    validationItems(await bad({ rule_id: saved.id }));
    itemAt(await bad({ rule_id: saved.id, conversation_id: 'not-a-uuid' }), ['body', 'conversation_id']);
    itemAt(await bad({ rule_id: saved.id, sample: { transcript: [{ role: 'robot', text: 'x' }] } }), ['body', 'sample', 'transcript', 0, 'role']);
  });

  test('builder: a plain request becomes a proposed rule (offline parser), not saved', async () => {
    const agent = await makeAgent(t, { name: 'Builder' });
    const res = await t.request('POST', `/v1/notifications/rules/${agent}/builder`, {
      body: { message: 'Tell me when someone asks about refunds and leaves their email' },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.engine, 'offline');
    assert.equal(res.body.understood, true);
    assert.deepEqual(res.body.rule.when, { keywords: ['refunds'], detail_collected: 'email' });
    assert.equal(res.body.rule.category, 'support');
    assert.match(res.body.reply, /refunds/);
    assert.equal((await t.request('GET', `/v1/notifications/rules/${agent}`)).body.rules.length, 0);
    // The proposal saves as it is.
    assert.equal((await t.request('POST', `/v1/notifications/rules/${agent}`, { body: res.body.rule })).status, 201);
    const refined = await t.request('POST', `/v1/notifications/rules/${agent}/builder`, {
      body: { message: 'only when it lasts more than 3 minutes', draft: res.body.rule },
    });
    assert.deepEqual(refined.body.rule.when, { keywords: ['refunds'], detail_collected: 'email', min_duration_seconds: 180 });
    itemAt(await t.request('POST', `/v1/notifications/rules/${agent}/builder`, { body: {} }), ['body', 'message']);
    itemAt(await t.request('POST', `/v1/notifications/rules/${agent}/builder`, { body: { message: 'x'.repeat(1001) } }), ['body', 'message']);
    itemAt(await t.request('POST', `/v1/notifications/rules/${agent}/builder`, { body: { message: 'hi', draft: { category: 'BAD' } } }), [
      'body',
      'draft',
      'category',
    ]);
  });

  test('webhook destinations: created with a whsec_ secret (masked without setup), patched, rotated, deleted', async () => {
    const a = await t.account('paid');
    const created = await t.request('POST', '/v1/notifications/destinations/webhook', {
      key: a.key,
      body: { url: 'http://127.0.0.1:9/hook', name: 'CRM', headers: { 'X-Api-Key': 'k1' } },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const destination = created.body.destination;
    assert.deepEqual(
      [destination.type, destination.name, destination.url, destination.headers, destination.enabled, destination.state],
      ['webhook', 'CRM', 'http://127.0.0.1:9/hook', { 'X-Api-Key': 'k1' }, true, 'active'],
    );
    assert.match(destination.secret, /^whsec_[A-Za-z0-9_-]{32}$/);

    const readOnly = await t.keyFor(a.id, ['read']);
    const masked = (await t.request('GET', '/v1/notifications/destinations', { key: readOnly })).body.destinations[0];
    assert.ok(!masked.secret.includes(destination.secret.slice(6, 20)));
    assert.ok(masked.secret.startsWith('whsec_') && masked.secret.endsWith(destination.secret.slice(-4)));
    assert.equal((await t.request('GET', '/v1/notifications/destinations', { key: a.key })).body.destinations[0].secret, destination.secret);

    const rotated = await t.request('PATCH', `/v1/notifications/destinations/${destination.id}`, {
      key: a.key,
      body: { rotate_secret: true, name: 'CRM 2', enabled: false },
    });
    assert.equal(rotated.status, 200);
    assert.notEqual(rotated.body.destination.secret, destination.secret);
    assert.deepEqual([rotated.body.destination.name, rotated.body.destination.enabled], ['CRM 2', false]);
    const moved = await t.request('PATCH', `/v1/notifications/destinations/${destination.id}`, {
      key: a.key,
      body: { url: 'https://example.com/new', headers: {} },
    });
    assert.deepEqual([moved.body.destination.url, moved.body.destination.headers], ['https://example.com/new', {}]);

    const agent = await makeAgent(t, {}, a.key);
    const rule = (
      await t.request('POST', `/v1/notifications/rules/${agent}`, { key: a.key, body: { name: 'r', category: 'alert', destination_ids: [destination.id] } })
    ).body.rule;
    assert.deepEqual(rule.destination_ids, [destination.id]);
    assertCoded(await t.request('PATCH', `/v1/notifications/destinations/${destination.id}`, { body: { name: 'theft' } }), 404, 'destination_not_found');
    assertCoded(await t.request('DELETE', `/v1/notifications/destinations/${destination.id}?confirm=true`), 404, 'destination_not_found');
    const deleted = await t.request('DELETE', `/v1/notifications/destinations/${destination.id}?confirm=true`, { key: a.key });
    assert.equal(deleted.status, 200);
    assert.deepEqual(deleted.body.destinations, []);
    assert.deepEqual(
      (await t.request('GET', `/v1/notifications/rules/${agent}`, { key: a.key })).body.rules[0].destination_ids,
      [],
      'the rule no longer names it',
    );
    assertCoded(
      await t.request('PATCH', `/v1/notifications/destinations/${destination.id}`, { key: a.key, body: { name: 'x' } }),
      404,
      'destination_not_found',
    );

    const post = (body: unknown) => t.request('POST', '/v1/notifications/destinations/webhook', { key: a.key, body });
    assert.equal(itemAt(await post({}), ['body', 'url']).type, 'missing');
    itemAt(await post({ url: 'ftp://example.com/x' }), ['body', 'url']);
    itemAt(await post({ url: 'not a url' }), ['body', 'url']);
    validationItems(await post({ url: 'https://example.com/x', headers: { 'X-Service-Signature': 'forged' } }));
    validationItems(await post({ url: 'https://example.com/x', headers: { 'Content-Type': 'text/plain' } }));
    validationItems(await post({ url: 'https://example.com/x', headers: { 'X-Ok': 'line\r\nInjected: yes' } }));
    itemAt(await post({ url: 'https://example.com/x', secret: 'whsec_mine' }), ['body', 'secret']);
    const patch = (body: unknown) => t.request('PATCH', `/v1/notifications/destinations/abc`, { key: a.key, body });
    itemAt(await patch({ name: 'x' }), ['path', 'destination_id']);
    const again = (await post({ url: 'https://example.com/y' })).body.destination;
    itemAt(await t.request('PATCH', `/v1/notifications/destinations/${again.id}`, { key: a.key, body: { rotate_secret: false } }), ['body', 'rotate_secret']);
    itemAt(await t.request('PATCH', `/v1/notifications/destinations/${again.id}`, { key: a.key, body: { colour: 'red' } }), ['body', 'colour']);
  });

  test('an account has at most 20 destinations', async () => {
    const a = await t.account('paid');
    for (let i = 0; i < 20; i++)
      assert.equal((await t.request('POST', '/v1/notifications/destinations/webhook', { key: a.key, body: { url: `https://example.com/${i}` } })).status, 201);
    assertCoded(
      await t.request('POST', '/v1/notifications/destinations/webhook', { key: a.key, body: { url: 'https://example.com/21' } }),
      409,
      'destination_limit',
    );
  });

  test('permissions: reading needs read, changing needs setup, deleting needs delete', async () => {
    const a = await t.account('paid');
    const agent = await makeAgent(t, {}, a.key);
    const readOnly = await t.keyFor(a.id, ['read']);
    assert.equal((await t.request('GET', '/v1/notifications', { key: readOnly })).status, 200);
    assertCoded(await t.request('POST', `/v1/notifications/rules/${agent}`, { key: readOnly, body: refundRule }), 403, 'missing_permission');
    assertCoded(await t.request('POST', '/v1/notifications/read', { key: readOnly, body: { all: true } }), 403, 'missing_permission');
    const setup = await t.keyFor(a.id, ['setup']);
    assertCoded(await t.request('GET', '/v1/notifications', { key: setup }), 403, 'missing_permission');
    const rule = (await t.request('POST', `/v1/notifications/rules/${agent}`, { key: setup, body: refundRule })).body.rule;
    assertCoded(await t.request('DELETE', `/v1/notifications/rules/${agent}/${rule.id}?confirm=true`, { key: setup }), 403, 'missing_permission');
    assertCoded(await t.request('GET', '/v1/notifications', { key: null }), 401, 'invalid_api_key');
  });

  test('Telegram without TELEGRAM_BOT_TOKEN: connect answers 503 telegram_not_configured', async () => {
    assertCoded(await t.request('POST', '/v1/notifications/destinations/telegram/connect'), 503, 'telegram_not_configured');
    assertCoded(await t.request('GET', '/v1/notifications/destinations/telegram/connect/abcdefghijklmnopqrstuvwx'), 404, 'connect_token_not_found');
  });

  test(`the inbox keeps the newest ${RULE_LIMITS.inboxPerAccount} notifications of an account`, async () => {
    const a = await t.account('paid');
    const agent = await makeAgent(t, {}, a.key);
    await sql`INSERT INTO notifications (account_id, agent_id, agent_name, dedupe_key, category, title, body, created_at)
      SELECT ${a.id}, ${agent}, 'Old', 'old:' || n, 'alert', 'old ' || n, 'b', now() - (n || ' seconds')::interval
      FROM generate_series(1, ${RULE_LIMITS.inboxPerAccount}) AS n`.execute(t.database.db);
    assert.equal((await t.request('GET', '/v1/notifications?limit=1', { key: a.key })).body.total, RULE_LIMITS.inboxPerAccount);
    await t.context.notifications.channels.postToInbox({ accountId: a.id, agentId: agent, agentName: 'New', title: 'newest', body: 'b', key: 'bound' });
    const inbox = (await t.request('GET', '/v1/notifications?limit=1', { key: a.key })).body;
    assert.equal(inbox.total, RULE_LIMITS.inboxPerAccount);
    assert.equal(inbox.items[0].title, 'newest');
    const { rows } = await sql<{ title: string }>`SELECT title FROM notifications WHERE account_id = ${a.id} ORDER BY created_at ASC LIMIT 1`.execute(
      t.database.db,
    );
    assert.equal(rows[0]!.title, `old ${RULE_LIMITS.inboxPerAccount - 1}`, 'the oldest one went');
  });

  test('handoff channel: a post to the inbox, once per key', async () => {
    const agent = await makeAgent(t, { name: 'Handoff agent' });
    const post = {
      accountId: t.accountId,
      agentId: agent,
      agentName: 'Handoff agent',
      conversationId: null,
      title: 'New lead',
      body: 'email: {{visitor.email}} → jo@example.com',
      key: 'rule-7:conv-1',
    };
    const first = await t.context.notifications.channels.postToInbox(post);
    const second = await t.context.notifications.channels.postToInbox(post);
    assert.equal(first.created, true);
    assert.deepEqual(second, { id: first.id, created: false });
    const item = (await t.request('GET', `/v1/notifications?agent_id=${agent}`)).body.items;
    assert.equal(item.length, 1);
    assert.deepEqual([item[0].title, item[0].category, item[0].source, item[0].body], ['New lead', 'handoff', 'handoff', post.body]);
  });
});
