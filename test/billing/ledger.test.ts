/**
 * The wallet's ledger and charging: integer cents, balance = sum of entries and never negative,
 * sessions charged as they run and by the second at their end, free minutes, premium speech,
 * operator adjustments, and many sessions ending at once, on both engines.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { forEachEngine, startTestApp, type TestApp } from '../support/app.js';
import { makeAgent, PREMIUM_VOICE, renderSocket, sleep, started, stopSession, waitEnded } from '../sessions/helpers.js';
import { centsFor, formatCents, formatPrice, parsePrice } from '../../src/core/money.js';
import { sumOfEntries } from '../../src/billing/ledger.js';
import { billedSeconds, POST_EVERY_CHECKS } from '../../src/billing/meter.js';
import { meteredSpeakers } from '../../src/billing/voice.js';
import { runAdminCommand } from '../../src/accounts/admin.js';

describe('money arithmetic', () => {
  test('prices parse to ten-thousandths exactly; bad ones are refused', () => {
    assert.equal(parsePrice('P', '0.10'), 1000);
    assert.equal(parsePrice('P', '0.0125'), 125);
    assert.equal(parsePrice('P', '6'), 60_000);
    for (const bad of ['-1', '0.00001', 'abc', '1e3', '']) assert.throws(() => parsePrice('P', bad));
    assert.equal(formatPrice(1000), '0.10');
    assert.equal(formatPrice(125), '0.0125');
    assert.equal(formatPrice(50), '0.005');
    assert.equal(formatPrice(10_000), '1.00');
  });

  test('a session is billed every started second of the duration it reports (to the millisecond)', () => {
    assert.equal(billedSeconds(0), 0);
    assert.equal(billedSeconds(0.0004), 0);
    assert.equal(billedSeconds(0.2), 1);
    // Reported as 1.000 s (the API rounds to the millisecond): one second, not two.
    assert.equal(billedSeconds(1.0004), 1);
    assert.equal(billedSeconds(1.0006), 2);
    assert.equal(billedSeconds(59.9996), 60);
    assert.equal(billedSeconds(-3), 0);
  });

  test('billed by the second, rounded half up on the running total', () => {
    // 0.10 a minute: 30 s is 5 cents, 1 s is 1/6 cent (0), 3 s is half a cent (1), 61 s is 10.17 (10).
    assert.equal(centsFor(30, 1000), 5);
    assert.equal(centsFor(1, 1000), 0);
    assert.equal(centsFor(3, 1000), 1);
    assert.equal(centsFor(61, 1000), 10);
    assert.equal(centsFor(3600, 1000), 600);
    assert.equal(centsFor(0, 1000), 0);
    // Charging a session in steps adds up to the charge for its whole length.
    for (const steps of [
      [5, 5, 5, 5, 7],
      [1, 1, 1, 1, 1, 1, 1],
      [59, 1, 0, 13],
    ]) {
      let charged = 0;
      let total = 0;
      for (const s of steps) {
        charged += centsFor(total + s, 1000) - centsFor(total, 1000);
        total += s;
      }
      assert.equal(charged, centsFor(total, 1000));
    }
    assert.equal(formatCents(2550), '25.50');
    assert.equal(formatCents(5), '0.05');
    assert.equal(formatCents(-105), '-1.05');
  });

  test('premium speech is counted per session from the pieces a premium speaker voices', async () => {
    const seen: Array<[string, number]> = [];
    const factory = meteredSpeakers(
      () =>
        async function* () {
          yield { pcm: new Int16Array(24_000) };
          yield { pcm: new Int16Array(12_000) };
        },
      (id, ms) => seen.push([id, ms]),
    );
    for await (const _ of factory({ provider: 'elevenlabs', voiceId: 'v', sessionId: 's1' })({ text: 'hi', sampleRate: 24_000 } as any)) void _;
    for await (const _ of factory({ provider: 'kokoro', voiceId: 'af_bella', sessionId: 's2' })({ text: 'hi', sampleRate: 24_000 } as any)) void _;
    assert.deepEqual(seen, [
      ['s1', 1000],
      ['s1', 500],
    ]);
  });
});

// 6.00 a minute is 10 cents a second, so every second shows in the cents; 3.00 for premium speech.
const PRICES = { PRICE_PER_MINUTE: '6.00', PREMIUM_VOICE_PRICE_PER_MINUTE: '3.00' };

forEachEngine('ledger and charging', (engine) => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(engine, { ...PRICES, BILLING_CHARGE_INTERVAL_SECONDS: '0.25', FREE_MONTHLY_SECONDS: '2' });
  });
  after(() => t.close());

  const balanceCents = async (accountId: number) =>
    Number((await t.database.db.selectFrom('accounts').select('balance_cents').where('id', '=', accountId).executeTakeFirstOrThrow()).balance_cents);
  const entries = (accountId: number) => t.database.db.selectFrom('ledger_entries').selectAll().where('account_id', '=', accountId).orderBy('id').execute();
  const settled = async (accountId: number) => {
    // The last step of every ended session has run when no meter of the account is open.
    for (let i = 0; i < 200; i++) {
      const open = await t.database.db
        .selectFrom('billing_sessions')
        .select('session_id')
        .where('account_id', '=', accountId)
        .where('ended_at', 'is', null)
        .execute();
      if (!open.length) return;
      await sleep(50);
    }
    throw new Error('meters still open');
  };

  test('a paid session is charged by the second, every started second counted, exact to the cent', async () => {
    const paid = await t.account('paid', { balance: '10.00' });
    const agentId = await makeAgent(t, {}, paid.key);
    const s = await started(t, { agent_id: agentId, mode: 'render' }, paid.key);
    // A running session is posted every POST_EVERY_CHECKS checks (here 12 × 0.25 s), then at its end.
    await sleep(POST_EVERY_CHECKS * 250 + 600);
    const stopped = await stopSession(t, s.session_id, paid.key);
    await settled(paid.id);
    const seconds = Math.ceil(stopped.duration_seconds);
    const rows = await entries(paid.id);
    const charges = rows.filter((r) => r.kind === 'session');
    assert.equal(
      charges.reduce((a, r) => a + r.seconds, 0),
      seconds,
    );
    assert.equal(
      charges.reduce((a, r) => a + Number(r.amount_cents), 0),
      -seconds * 10,
    );
    assert.ok(charges.length >= 2, 'charged while running, then at the end');
    assert.ok(charges.every((r) => r.session_id === s.session_id && r.agent_id === agentId));
    assert.equal(await balanceCents(paid.id), 1000 - seconds * 10);
    assert.equal(await sumOfEntries(t.database.db, paid.id), await balanceCents(paid.id));
    // The opening balance is an adjustment entry.
    assert.deepEqual([rows[0].kind, Number(rows[0].amount_cents)], ['adjustment', 1000]);
    // Finishing again (the durable conversation-ended job after the end hook) charges nothing more.
    await t.context.meter.finish(s.session_id, stopped.duration_seconds + 30, 'stopped');
    assert.equal((await entries(paid.id)).length, rows.length);
  });

  test('running sessions with money to spare are posted once a minute, not at every check; each at its end', async () => {
    const paid = await t.account('paid', { balance: '100.00' });
    const agentId = await makeAgent(t, { concurrency_limit: 20 }, paid.key);
    const sessions = await Promise.all(Array.from({ length: 8 }, () => started(t, { agent_id: agentId, mode: 'render' }, paid.key)));
    // Six checks: well short of a post, and the balance is far from running out.
    await sleep(6 * 250 + 100);
    assert.deepEqual(
      (await entries(paid.id)).map((r) => r.kind),
      ['adjustment'],
      'nothing posted while running',
    );
    const stopped = await Promise.all(sessions.map((s) => stopSession(t, s.session_id, paid.key)));
    await settled(paid.id);
    const rows = (await entries(paid.id)).filter((r) => r.kind === 'session');
    for (const s of stopped) {
      const mine = rows.filter((r) => r.session_id === s.session_id);
      assert.equal(mine.length, 1, 'one line, at the end');
      assert.equal(mine[0].seconds, Math.ceil(s.duration_seconds));
    }
    assert.equal(await sumOfEntries(t.database.db, paid.id), await balanceCents(paid.id));
  });

  test('a running paid session ends with insufficient_balance when the balance reaches zero, socket closed 4001', async () => {
    const paid = await t.account('paid', { balance: '0.25' });
    const agentId = await makeAgent(t, {}, paid.key);
    const s = await started(t, { agent_id: agentId, mode: 'render' }, paid.key);
    const socket = await renderSocket(s.ws_url);
    const record = await waitEnded(t, s.session_id, paid.key, 8000);
    assert.equal(record.status, 'ended');
    assert.equal(record.end_reason, 'insufficient_balance');
    // 25 cents at 10 a second: it ran out after 2.5 s, within one charging step.
    assert.ok(record.duration_seconds >= 2.4 && record.duration_seconds < 4, `ran ${record.duration_seconds} s`);
    assert.equal((await socket.closed).code, 4001);
    await settled(paid.id);
    assert.equal(await balanceCents(paid.id), 0);
    assert.equal(await sumOfEntries(t.database.db, paid.id), 0);
    const wallet = await t.request('GET', '/v1/sessions', { key: paid.key });
    assert.equal(wallet.status, 200);
    // The next start is refused.
    const again = await t.request('POST', '/v1/sessions', { key: paid.key, body: { agent_id: agentId, mode: 'render' } });
    assert.equal(again.status, 402);
    assert.equal(again.body.detail.code, 'insufficient_balance');
  });

  test("a free session ends with free_minutes_exhausted when the month's free seconds run out, socket closed 4001; nothing is charged", async () => {
    const free = await t.account('free', { balance: '5.00' });
    const agentId = await makeAgent(t, {}, free.key);
    const s = await started(t, { agent_id: agentId, mode: 'render' }, free.key);
    const socket = await renderSocket(s.ws_url);
    const record = await waitEnded(t, s.session_id, free.key, 8000);
    assert.equal(record.end_reason, 'free_minutes_exhausted');
    assert.ok(record.duration_seconds >= 1.9 && record.duration_seconds < 3.5, `ran ${record.duration_seconds} s`);
    assert.equal((await socket.closed).code, 4001);
    await settled(free.id);
    assert.equal(await balanceCents(free.id), 500);
    assert.deepEqual(
      (await entries(free.id)).map((r) => r.kind),
      ['adjustment'],
    );
    const meter = await t.database.db.selectFrom('billing_sessions').selectAll().where('session_id', '=', s.session_id).executeTakeFirstOrThrow();
    assert.equal(meter.seconds, Math.ceil(record.duration_seconds));
    assert.equal(meter.plan, 'free');
  });

  test('a session whose end waits on a lock is billed for the duration it records, not for the wait', {
    skip: engine !== 'postgres' && 'needs a second connection holding the row lock (PostgreSQL)',
  }, async () => {
    const paid = await t.account('paid', { balance: '10.00' });
    const agentId = await makeAgent(t, {}, paid.key);
    const s = await started(t, { agent_id: agentId, mode: 'render' }, paid.key);
    await sleep(1200);
    let stopping!: ReturnType<typeof stopSession>;
    await t.database.db.transaction().execute(async (trx) => {
      await trx.selectFrom('sessions').select('id').where('id', '=', s.session_id).forUpdate().execute();
      // The stop's transaction takes its end time now and waits for the lock, as a loaded
      // database makes it wait; charging steps run meanwhile.
      stopping = stopSession(t, s.session_id, paid.key);
      await sleep(2000);
    });
    const stopped = await stopping;
    assert.ok(stopped.duration_seconds < 2, `recorded ${stopped.duration_seconds} s`);
    await settled(paid.id);
    const meter = await t.database.db.selectFrom('billing_sessions').selectAll().where('session_id', '=', s.session_id).executeTakeFirstOrThrow();
    assert.equal(meter.seconds, Math.ceil(stopped.duration_seconds));
    const charged = (await entries(paid.id)).filter((r) => r.kind === 'session');
    assert.equal(
      charged.reduce((a, r) => a + r.seconds, 0),
      Math.ceil(stopped.duration_seconds),
    );
    assert.equal(await balanceCents(paid.id), 1000 - Math.ceil(stopped.duration_seconds) * 10);
  });

  test('premium speech is charged per second voiced, on top of the session seconds', async () => {
    const paid = await t.account('paid', { balance: '20.00' });
    const agentId = await makeAgent(t, {}, paid.key);
    const s = await started(t, { agent_id: agentId, mode: 'render', voice_id: PREMIUM_VOICE }, paid.key);
    // 90.2 s of speech voiced by ElevenLabs: 91 started seconds at 3.00 a minute = 4.55.
    t.context.meter.voiced(s.session_id, 60_000);
    await sleep(400);
    t.context.meter.voiced(s.session_id, 30_200);
    const stopped = await stopSession(t, s.session_id, paid.key);
    await settled(paid.id);
    const rows = await entries(paid.id);
    const voice = rows.filter((r) => r.kind === 'premium_voice');
    assert.equal(
      voice.reduce((a, r) => a + r.seconds, 0),
      91,
    );
    assert.equal(
      voice.reduce((a, r) => a + Number(r.amount_cents), 0),
      -455,
    );
    assert.ok(voice.every((r) => r.voice_provider === 'elevenlabs'));
    const sessionCents = Math.ceil(stopped.duration_seconds) * 10;
    assert.equal(await balanceCents(paid.id), 2000 - 455 - sessionCents);
    assert.equal(await sumOfEntries(t.database.db, paid.id), await balanceCents(paid.id));
  });

  test('operator balances are adjustment entries; a negative balance is refused; entries cannot be changed', async () => {
    const paid = await t.account('paid', { balance: '3.00' });
    const set = (balance: string) => runAdminCommand(t.context.accounts, 'accounts.set', { id: paid.id, balance }) as Promise<any>;
    assert.equal((await set('25.00')).balance, '25.00');
    assert.equal((await set('24.99')).balance, '24.99');
    await assert.rejects(set('-1.00'), (e: any) => e.statusCode === 422 && e.code === 'invalid_balance');
    const rows = await entries(paid.id);
    assert.deepEqual(
      rows.map((r) => [r.kind, Number(r.amount_cents)]),
      [
        ['adjustment', 300],
        ['adjustment', 2200],
        ['adjustment', -1],
      ],
    );
    assert.equal(await sumOfEntries(t.database.db, paid.id), 2499);
    // The ledger is append-only: updates and deletes change nothing.
    await t.database.db
      .updateTable('ledger_entries')
      .set({ month: '1999-01' } as any)
      .where('account_id', '=', paid.id)
      .execute();
    await t.database.db.deleteFrom('ledger_entries').where('account_id', '=', paid.id).execute();
    assert.equal((await entries(paid.id)).length, 3);
    // And the balance cannot go below zero even by a direct write.
    await assert.rejects(t.database.db.updateTable('accounts').set({ balance_cents: -1 }).where('id', '=', paid.id).execute());
  });

  test('many sessions ending at once: every second charged once, balance = sum of entries', async () => {
    const paid = await t.account('paid', { balance: '100.00' });
    const agentId = await makeAgent(t, { concurrency_limit: 40 }, paid.key);
    const sessions = await Promise.all(Array.from({ length: 24 }, () => started(t, { agent_id: agentId, mode: 'render' }, paid.key)));
    await sleep(800);
    const stopped = await Promise.all(sessions.map((s) => stopSession(t, s.session_id, paid.key)));
    // The durable path runs too: every meter finished again, concurrently.
    await Promise.all(stopped.map((s) => t.context.meter.finish(s.session_id, s.duration_seconds, 'stopped')));
    await settled(paid.id);
    const expected = stopped.reduce((a, s) => a + Math.ceil(s.duration_seconds) * 10, 0);
    assert.equal(await balanceCents(paid.id), 10_000 - expected);
    assert.equal(await sumOfEntries(t.database.db, paid.id), 10_000 - expected);
    const rows = await entries(paid.id);
    for (const s of stopped) {
      const mine = rows.filter((r) => r.session_id === s.session_id);
      assert.equal(
        mine.reduce((a, r) => a + r.seconds, 0),
        Math.ceil(s.duration_seconds),
        `seconds of ${s.session_id}`,
      );
    }
  });

  test('many sessions draining a small balance at once: it stops at exactly zero, never below', async () => {
    const paid = await t.account('paid', { balance: '1.00' });
    const agentId = await makeAgent(t, { concurrency_limit: 40 }, paid.key);
    const sessions = await Promise.all(Array.from({ length: 16 }, () => started(t, { agent_id: agentId, mode: 'render' }, paid.key)));
    // 16 sessions at 10 cents a second take 1.00 in well under a second.
    const records = await Promise.all(sessions.map((s) => waitEnded(t, s.session_id, paid.key, 20_000)));
    assert.ok(
      records.every((r) => r.end_reason === 'insufficient_balance'),
      records.map((r) => r.end_reason).join(),
    );
    await settled(paid.id);
    assert.equal(await balanceCents(paid.id), 0);
    assert.equal(await sumOfEntries(t.database.db, paid.id), 0);
    const rows = await entries(paid.id);
    assert.equal(
      rows.filter((r) => r.kind === 'session').reduce((a, r) => a + Number(r.amount_cents), 0),
      -100,
    );
  });
});
