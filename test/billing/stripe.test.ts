/**
 * Wallet top-ups through Stripe Checkout, driven by the real `stripe` client against a local fake
 * of Stripe's API: a checkout credits once however often it is confirmed, and also through Stripe's
 * signed checkout.session.completed webhook; the customer portal.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { forEachEngine, startTestApp, type TestApp } from '../support/app.js';
import { assertCoded } from '../sessions/helpers.js';
import { FAKE_SECRET_KEY, FAKE_WEBHOOK_SECRET, StripeFake } from './support/stripe-fake.js';
import { sumOfEntries } from '../../src/billing/ledger.js';

forEachEngine('Stripe top-ups', (engine) => {
  let t: TestApp;
  let stripe: StripeFake;
  let acct: { id: number; key: string };
  before(async () => {
    stripe = new StripeFake();
    await stripe.start();
    t = await startTestApp(engine, { STRIPE_SECRET_KEY: FAKE_SECRET_KEY, STRIPE_API_BASE: stripe.url, STRIPE_WEBHOOK_SECRET: FAKE_WEBHOOK_SECRET });
    acct = await t.account('paid', { balance: '2.00' });
  });
  after(async () => {
    await t.close();
    await stripe.stop();
  });

  const topup = (amount: unknown, key = acct.key, extra: object = {}) => t.request('POST', '/v1/billing/wallet/topup', { key, body: { amount, ...extra } });
  const confirm = (id: string, key = acct.key) => t.request('GET', `/v1/billing/wallet/topup/confirm?checkout_session_id=${id}`, { key });
  const balance = async (key = acct.key) => (await t.request('GET', '/v1/billing/wallet', { key })).body.balance;
  const webhook = (payload: string, signature: string) =>
    fetch(`${t.url}/v1/billing/stripe/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'stripe-signature': signature },
      body: payload,
    });

  test('a top-up opens a Checkout Session for the amount; confirm credits it once, however often it is called', async () => {
    const res = await topup('25.50', acct.key, { success_url: 'https://example.com/done?cs={CHECKOUT_SESSION_ID}' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.match(res.body.checkout_session_id, /^cs_test_/);
    assert.equal(res.body.url, `https://checkout.stripe.com/c/pay/${res.body.checkout_session_id}`);
    assert.equal(res.body.amount, '25.50');
    // What the client sent Stripe.
    const sent = stripe.requests.find((r) => r.path === '/v1/checkout/sessions')!;
    assert.equal(sent.form.mode, 'payment');
    assert.equal(sent.form.line_items[0].price_data.unit_amount, '2550');
    assert.equal(sent.form.line_items[0].price_data.currency, 'usd');
    assert.equal(sent.form.metadata.account_id, String(acct.id));
    assert.equal(sent.form.success_url, 'https://example.com/done?cs={CHECKOUT_SESSION_ID}');
    assert.match(sent.form.customer, /^cus_/);

    // Not paid yet: nothing credited.
    const early = await confirm(res.body.checkout_session_id);
    assert.equal(early.status, 200);
    assert.deepEqual([early.body.status, early.body.paid, early.body.credited_now, early.body.balance], ['open', false, false, '2.00']);

    stripe.pay(res.body.checkout_session_id);
    const answers = await Promise.all(Array.from({ length: 6 }, () => confirm(res.body.checkout_session_id)));
    assert.ok(answers.every((a) => a.status === 200 && a.body.status === 'credited'));
    assert.equal(answers.filter((a) => a.body.credited_now).length, 1);
    assert.equal(await balance(), '27.50');
    // The signed webhook for the same checkout credits nothing more.
    const event = stripe.signedEvent(res.body.checkout_session_id);
    const hook = await webhook(event.payload, event.signature);
    assert.equal(hook.status, 200);
    assert.deepEqual(await hook.json(), { received: true, credited: false });
    assert.equal(await balance(), '27.50');
    const entries = await t.database.db.selectFrom('ledger_entries').selectAll().where('account_id', '=', acct.id).where('kind', '=', 'topup').execute();
    assert.deepEqual(
      entries.map((e) => [Number(e.amount_cents), e.reference]),
      [[2550, res.body.checkout_session_id]],
    );
    assert.equal(await sumOfEntries(t.database.db, acct.id), 2750);
    const wallet = (await t.request('GET', '/v1/billing/wallet', { key: acct.key })).body;
    assert.equal(wallet.payments_enabled, true);
    assert.deepEqual(
      [wallet.recent_credits[0].kind, wallet.recent_credits[0].amount, wallet.recent_credits[0].checkout_session_id],
      ['topup', '25.50', res.body.checkout_session_id],
    );
  });

  test("Stripe's signed checkout.session.completed webhook credits a paid checkout once; a bad signature is refused", async () => {
    const res = await topup(10);
    const id = res.body.checkout_session_id;
    stripe.pay(id);
    const forged = stripe.signedEvent(id, 'whsec_wrong');
    const refused = await webhook(forged.payload, forged.signature);
    assert.equal(refused.status, 400);
    assert.equal((await refused.json()).detail.code, 'invalid_signature');
    const unsigned = await fetch(`${t.url}/v1/billing/stripe/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: forged.payload,
    });
    assert.equal(unsigned.status, 400);
    const before = await balance();
    const event = stripe.signedEvent(id);
    const first = await webhook(event.payload, event.signature);
    assert.deepEqual(await first.json(), { received: true, credited: true });
    const again = await webhook(event.payload, event.signature);
    assert.deepEqual(await again.json(), { received: true, credited: false });
    assert.equal(Number(await balance()) * 100, Math.round(Number(before) * 100) + 1000);
    // Confirm afterwards answers credited, without crediting.
    const c = await confirm(id);
    assert.deepEqual([c.body.status, c.body.credited_now], ['credited', false]);
  });

  test("another account's checkout, or one Stripe does not know, is 404 checkout_not_found", async () => {
    const other = await t.account('paid', { balance: '1.00' });
    const res = await topup('5.00');
    assertCoded(await confirm(res.body.checkout_session_id, other.key), 404, 'checkout_not_found');
    assertCoded(await confirm('cs_test_doesnotexist0000'), 404, 'checkout_not_found');
    stripe.pay(res.body.checkout_session_id);
    assert.equal(await balance(other.key), '1.00');
  });

  test("the portal opens Stripe's customer portal for the account's customer (made once)", async () => {
    const res = await t.request('POST', '/v1/billing/wallet/portal', { key: acct.key });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.match(res.body.url, /^https:\/\/billing\.stripe\.com\/p\/session\/bps_/);
    const fresh = await t.account('paid');
    const first = await t.request('POST', '/v1/billing/wallet/portal', { key: fresh.key });
    await t.request('POST', '/v1/billing/wallet/portal', { key: fresh.key });
    assert.equal(first.status, 200);
    const made = stripe.requests.filter((r) => r.path === '/v1/customers' && r.form.metadata?.account_id === String(fresh.id));
    assert.equal(made.length, 1);
  });
});
