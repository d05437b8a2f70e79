/**
 * Billing routes over real charges: summary, by-agent, voice, monthly, line items and their CSV,
 * wallet, plan, usage; every 422; 503 payments_not_configured without Stripe.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { forEachEngine, startTestApp, type TestApp } from '../support/app.js';
import { assertCoded, itemAt, makeAgent, PREMIUM_VOICE, sleep, started, stopSession } from '../sessions/helpers.js';
import { monthsBack } from '../../src/billing/service.js';

const month = () => new Date().toISOString().slice(0, 7);

test('monthsBack counts back across years', () => {
  assert.deepEqual(monthsBack('2026-02', 4), ['2026-02', '2026-01', '2025-12', '2025-11']);
});

forEachEngine('billing routes', (engine) => {
  let t: TestApp;
  let acct: { id: number; key: string };
  let agentA: number;
  let agentB: number;
  const stopped: any[] = [];
  before(async () => {
    t = await startTestApp(engine, { PRICE_PER_MINUTE: '6.00', PREMIUM_VOICE_PRICE_PER_MINUTE: '3.00', BILLING_CHARGE_INTERVAL_SECONDS: '0.3' });
    acct = await t.account('paid', { balance: '50.00' });
    agentA = await makeAgent(t, { name: 'Alice desk' }, acct.key);
    agentB = await makeAgent(t, { name: 'Bob desk' }, acct.key);
    // Three sessions: two on A (one with 61 s of premium speech), one on B.
    const s1 = await started(t, { agent_id: agentA, mode: 'render' }, acct.key);
    const s3 = await started(t, { agent_id: agentB, mode: 'render' }, acct.key);
    await sleep(700);
    stopped.push(await stopSession(t, s1.session_id, acct.key));
    const s2 = await started(t, { agent_id: agentA, mode: 'render', voice_id: PREMIUM_VOICE }, acct.key);
    t.context.meter.voiced(s2.session_id, 61_000);
    await sleep(300);
    stopped.push(await stopSession(t, s2.session_id, acct.key));
    stopped.push(await stopSession(t, s3.session_id, acct.key));
    for (let i = 0; i < 200; i++) {
      const open = await t.database.db
        .selectFrom('billing_sessions')
        .select('session_id')
        .where('account_id', '=', acct.id)
        .where('ended_at', 'is', null)
        .execute();
      if (!open.length) break;
      await sleep(50);
    }
  });
  after(() => t.close());

  const get = (path: string, key = acct.key) => t.request('GET', path, { key });
  const cents = (s: any) => Math.ceil(s.duration_seconds) * 10;
  const fmt = (c: number) => `${Math.floor(c / 100)}.${String(c % 100).padStart(2, '0')}`;

  test('summary: the month exact to the cent', async () => {
    const res = await get('/v1/billing/summary');
    assert.equal(res.status, 200);
    const sessionCents = stopped.reduce((a, s) => a + cents(s), 0);
    assert.equal(res.body.month, month());
    assert.equal(res.body.sessions, 3);
    assert.equal(res.body.session_amount, fmt(sessionCents));
    assert.equal(
      res.body.charged_session_seconds,
      stopped.reduce((a, s) => a + Math.ceil(s.duration_seconds), 0),
    );
    assert.equal(res.body.premium_voice_seconds, 61);
    assert.equal(res.body.premium_voice_amount, '3.05');
    assert.equal(res.body.total_charged, fmt(sessionCents + 305));
    assert.equal(res.body.adjustments, '50.00');
    assert.equal(res.body.topups, '0.00');
    assert.equal(res.body.balance, fmt(5000 - sessionCents - 305));
    assert.equal(res.body.price_per_minute, '6.00');
    // Another month is empty; the query is checked.
    const empty = await get('/v1/billing/summary?month=2020-01');
    assert.equal(empty.body.sessions, 0);
    assert.equal(empty.body.total_charged, '0.00');
    const wallet = await get('/v1/billing/wallet');
    assert.equal(wallet.body.balance, res.body.balance);
    assert.equal(wallet.body.currency, 'USD');
    assert.equal(wallet.body.payments_enabled, false);
    assert.deepEqual(
      wallet.body.recent_credits.map((c: any) => [c.kind, c.amount]),
      [['adjustment', '50.00']],
    );
  });

  test('by-agent and voice split the same money', async () => {
    const res = await get('/v1/billing/by-agent');
    assert.equal(res.status, 200);
    const a = res.body.agents.find((x: any) => x.agent_id === agentA);
    const b = res.body.agents.find((x: any) => x.agent_id === agentB);
    assert.equal(a.agent_name, 'Alice desk');
    assert.equal(a.sessions, 2);
    assert.equal(a.session_amount, fmt(cents(stopped[0]) + cents(stopped[1])));
    assert.equal(a.premium_voice_amount, '3.05');
    assert.equal(a.total, fmt(cents(stopped[0]) + cents(stopped[1]) + 305));
    assert.equal(b.sessions, 1);
    assert.equal(b.total, fmt(cents(stopped[2])));
    assert.equal(res.body.agents.length, 2);
    const voice = await get('/v1/billing/voice');
    assert.deepEqual(voice.body.providers, [{ provider: 'elevenlabs', sessions: 1, seconds: 61, minutes: 1.02, amount: '3.05' }]);
    assert.equal(voice.body.total, '3.05');
  });

  test('monthly: N months newest first, empty ones included', async () => {
    const res = await get('/v1/billing/monthly?limit=3');
    assert.equal(res.status, 200);
    assert.deepEqual(
      res.body.months.map((m: any) => m.month),
      monthsBack(month(), 3),
    );
    assert.equal(res.body.months[0].total_charged, fmt(stopped.reduce((a, s) => a + cents(s), 0) + 305));
    assert.equal(res.body.months[1].total_charged, '0.00');
    assert.equal((await get('/v1/billing/monthly')).body.months.length, 12);
    assert.equal((await get('/v1/billing/monthly?limit=60')).body.months.length, 60);
  });

  test('line items: one per session and kind, paged, and the same rows as CSV', async () => {
    const all = await get('/v1/billing/line-items');
    assert.equal(all.status, 200);
    assert.equal(all.body.total, 4);
    assert.equal(all.body.limit, 50);
    assert.equal(all.body.offset, 0);
    const items = all.body.items;
    for (const s of stopped) {
      const line = items.find((i: any) => i.session_id === s.session_id && i.kind === 'session');
      assert.equal(line.seconds, Math.ceil(s.duration_seconds));
      assert.equal(line.amount, fmt(cents(s)));
      assert.equal(line.agent_id, s.agent_id);
    }
    const voice = items.find((i: any) => i.kind === 'premium_voice');
    assert.deepEqual([voice.session_id, voice.seconds, voice.amount], [stopped[1].session_id, 61, '3.05']);
    for (const key of ['id', 'session_id', 'agent_id', 'kind', 'seconds', 'amount', 'created_at']) assert.ok(key in items[0]);
    // Newest first, paged without overlap.
    const ids = items.map((i: any) => i.id);
    assert.deepEqual(
      ids,
      [...ids].sort((x, y) => y - x),
    );
    const p1 = await get('/v1/billing/line-items?limit=3&offset=0');
    const p2 = await get('/v1/billing/line-items?limit=3&offset=3');
    assert.deepEqual(
      [...p1.body.items, ...p2.body.items].map((i: any) => i.id),
      ids,
    );
    assert.equal(p2.body.total, 4);
    assert.equal((await get('/v1/billing/line-items?month=2020-01')).body.total, 0);

    const csv = await fetch(`${t.url}/v1/billing/export/line-items`, { headers: { authorization: `Bearer ${acct.key}` } });
    assert.equal(csv.status, 200);
    assert.match(csv.headers.get('content-type')!, /^text\/csv/);
    assert.match(csv.headers.get('content-disposition')!, /^attachment; filename="line-items-\d{4}-\d{2}\.csv"$/);
    const lines = (await csv.text()).trim().split('\n');
    assert.equal(lines[0], 'id,session_id,agent_id,kind,seconds,amount,created_at');
    assert.deepEqual(
      lines.slice(1),
      items.map((i: any) => [i.id, i.session_id, i.agent_id, i.kind, i.seconds, i.amount, i.created_at].join(',')),
    );
  });

  test("plan and usage: the plan's limits and this month's use", async () => {
    const paid = await get('/v1/billing/plan');
    assert.equal(paid.status, 200);
    assert.equal(paid.body.plan, 'paid');
    assert.equal(paid.body.limits.agents, null);
    assert.equal(paid.body.limits.premium_voices, true);
    assert.equal(paid.body.usage.agents, 2);
    assert.equal(paid.body.usage.running_sessions, 0);
    const free = await t.account('free');
    await makeAgent(t, {}, free.key);
    const plan = await get('/v1/billing/plan', free.key);
    assert.deepEqual(plan.body.limits, { agents: 1, premium_voices: false, monthly_session_seconds: 3600, running_sessions: 1, max_session_seconds: 300 });
    assert.equal(plan.body.usage.free_seconds_remaining, 3600);
    assert.equal(plan.body.usage.agents, 1);
    const usage = await get('/v1/usage/summary');
    assert.equal(usage.status, 200);
    assert.equal(usage.body.sessions, 3);
    assert.equal(usage.body.premium_voice_seconds, 61);
    assert.equal(usage.body.charged, fmt(stopped.reduce((a, s) => a + cents(s), 0) + 305));
    assert.equal(usage.body.free_seconds_remaining, null);
    const freeUsage = await get('/v1/usage/summary', free.key);
    assert.equal(freeUsage.body.free_seconds_included, 3600);
    assert.equal(freeUsage.body.charged, '0.00');
  });

  test('every bad query or body answers 422 in the FastAPI shape', async () => {
    for (const bad of ['2026-13', '2026-1', 'x', '2026-00', '202-01']) {
      for (const path of ['/v1/billing/summary', '/v1/billing/by-agent', '/v1/billing/voice', '/v1/billing/line-items', '/v1/billing/export/line-items']) {
        const item = itemAt(await get(`${path}?month=${bad}`), ['query', 'month']);
        assert.equal(item.type, 'string_pattern_mismatch');
      }
    }
    for (const limit of ['0', '61', 'abc', '1.5']) itemAt(await get(`/v1/billing/monthly?limit=${limit}`), ['query', 'limit']);
    for (const limit of ['0', '201', 'x']) itemAt(await get(`/v1/billing/line-items?limit=${limit}`), ['query', 'limit']);
    assert.equal(itemAt(await get('/v1/billing/line-items?offset=-1'), ['query', 'offset']).type, 'greater_than_equal');
    assert.equal(itemAt(await get('/v1/billing/wallet/topup/confirm'), ['query', 'checkout_session_id']).type, 'missing');
    assert.equal(
      itemAt(await get('/v1/billing/wallet/topup/confirm?checkout_session_id=cs_123456'), ['query', 'checkout_session_id']).type,
      'string_too_short',
    );
    assert.equal(
      itemAt(await get(`/v1/billing/wallet/topup/confirm?checkout_session_id=${'c'.repeat(256)}`), ['query', 'checkout_session_id']).type,
      'string_too_long',
    );
    const post = (body: unknown) => t.request('POST', '/v1/billing/wallet/topup', { key: acct.key, body });
    for (const amount of ['abc', '0.50', '10000.01', '1.234', -5, 0, '']) itemAt(await post({ amount }), ['body', 'amount']);
    assert.equal(itemAt(await post({}), ['body', 'amount']).type, 'missing');
    assert.equal(itemAt(await post({ amount: '25.00', tip: 1 }), ['body', 'tip']).type, 'extra_forbidden');
    itemAt(await post({ amount: '25.00', success_url: 'ftp://x' }), ['body', 'success_url']);
  });

  test('without Stripe: top-up, confirm and portal answer 503 payments_not_configured', async () => {
    assertCoded(await t.request('POST', '/v1/billing/wallet/topup', { key: acct.key, body: { amount: '25.00' } }), 503, 'payments_not_configured');
    assertCoded(await get('/v1/billing/wallet/topup/confirm?checkout_session_id=cs_test_0123456789'), 503, 'payments_not_configured');
    assertCoded(await t.request('POST', '/v1/billing/wallet/portal', { key: acct.key }), 503, 'payments_not_configured');
    assertCoded(
      await t.request('POST', '/v1/billing/stripe/webhook', { key: null, body: { type: 'checkout.session.completed' } }),
      503,
      'payments_not_configured',
    );
  });

  test('another account sees only its own money; the routes need read (GET) or setup (POST)', async () => {
    const other = await t.account('paid', { balance: '7.00' });
    const res = await get('/v1/billing/line-items', other.key);
    assert.equal(res.body.total, 0);
    assert.equal((await get('/v1/billing/summary', other.key)).body.balance, '7.00');
    const readOnly = await t.keyFor(acct.id, ['read']);
    assert.equal((await get('/v1/billing/wallet', readOnly)).status, 200);
    assertCoded(await t.request('POST', '/v1/billing/wallet/topup', { key: readOnly, body: { amount: '5.00' } }), 403, 'missing_permission');
    assertCoded(await get('/v1/billing/wallet', null as any), 401, 'invalid_api_key');
  });

  test('the OpenAPI document describes every billing answer', async () => {
    const doc = (await t.request('GET', '/openapi.json')).body;
    for (const [path, method] of [
      ['/v1/billing/summary', 'get'],
      ['/v1/billing/by-agent', 'get'],
      ['/v1/billing/voice', 'get'],
      ['/v1/billing/monthly', 'get'],
      ['/v1/billing/line-items', 'get'],
      ['/v1/billing/wallet', 'get'],
      ['/v1/billing/wallet/topup', 'post'],
      ['/v1/billing/wallet/topup/confirm', 'get'],
      ['/v1/billing/wallet/portal', 'post'],
      ['/v1/billing/plan', 'get'],
      ['/v1/usage/summary', 'get'],
    ] as const) {
      const op = doc.paths[path]?.[method];
      assert.ok(op, `${method} ${path} documented`);
      assert.ok(op.responses['200'].content['application/json'].schema, `${path} answer shape`);
    }
    assert.ok(doc.paths['/v1/billing/export/line-items'].get);
  });
});
