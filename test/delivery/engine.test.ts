/**
 * The delivery engine against real receivers on 127.0.0.1, on both database engines: headers and
 * signatures exactly as a receiver checks them (POST and GET), every row of the outcome table, the
 * schedule (shortened through WEBHOOK_RETRY_DELAYS's setting), the attempt log, replay, the capped
 * read of a slow or huge answer, and private addresses refused at connect time.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, test } from 'node:test';
import { forEachEngine, openTestDatabase } from '../support/app.js';
import { openDatabase, type OpenedDatabase } from '../../src/core/db/database.js';
import { Jobs } from '../../src/core/jobs.js';
import { DeliveryEngine, type DeliveryOutcomeEvent, type DeliveryInput } from '../../src/delivery/engine.js';
import { newWebhookSecret, signature, verifySignature } from '../../src/delivery/signing.js';
import { EXCERPT_BYTES } from '../../src/delivery/http.js';
import { until } from '../support/until.js';
import { startReceiver, type Answer, type Receiver } from './support/receiver.js';

const quiet = { info() {}, warn() {}, error() {} };
const TIMEOUT_SECONDS = 15;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

forEachEngine('delivery engine', (engine) => {
  let database: OpenedDatabase;
  let jobs: Jobs;
  let deliveries: DeliveryEngine;
  let strict: DeliveryEngine;
  let drop: (() => Promise<void>) | undefined;
  let accountId: number;
  const outcomes: DeliveryOutcomeEvent[] = [];
  const receivers: Receiver[] = [];
  const receiver = async (script: Answer[]) => {
    const r = await startReceiver(script);
    receivers.push(r);
    return r;
  };

  before(async () => {
    ({ database, drop } = await openTestDatabase(engine));
    jobs = await Jobs.start(database, quiet);
    // The schedule shortened as WEBHOOK_RETRY_DELAYS=1,1,1,1 would. The time limit stays generous
    // (15 s): the receivers share this process with the embedded database, whose work blocks it, so
    // on a loaded machine a short limit would turn their answers into timeouts.
    deliveries = new DeliveryEngine(database.db, jobs, quiet, { retryDelays: [1, 1, 1, 1], timeoutSeconds: TIMEOUT_SECONDS, allowPrivate: true });
    deliveries.owner('test', {
      outcome: async (event, trx) => {
        // Runs inside the recording transaction: it sees the delivery already final.
        const row = await trx.selectFrom('deliveries').select('status').where('id', '=', event.deliveryId).executeTakeFirstOrThrow();
        assert.ok(row.status === 'delivered' || row.status === 'failed');
        outcomes.push(event);
      },
    });
    await deliveries.start();
    // A second engine over the same jobs with the production rule: private addresses refused.
    strict = new DeliveryEngine(database.db, jobs, quiet, { retryDelays: [1], timeoutSeconds: TIMEOUT_SECONDS, allowPrivate: false });
    const account = await database.db
      .insertInto('accounts')
      .values({ name: 'acme', plan: 'paid', balance_cents: 100 })
      .returning('id')
      .executeTakeFirstOrThrow();
    accountId = account.id;
  });
  after(async () => {
    deliveries.stop();
    for (const r of receivers) await r.close();
    await jobs.stop();
    await database.close();
    await drop?.();
  });

  const input = (url: string, extra: Partial<DeliveryInput> = {}): DeliveryInput => ({
    accountId,
    owner: { kind: 'test', id: crypto.randomUUID() },
    url,
    method: 'POST',
    contentType: 'application/json; charset=utf-8',
    payload: JSON.stringify({ email: 'ann@example.com', note: 'quote " and é' }),
    secret: newWebhookSecret(),
    ...extra,
  });
  // The outcome hook runs inside the recording transaction: wait for its commit too.
  const committed = (deliveryId: string, status?: string) =>
    until(async () => {
      const row = await database.db.selectFrom('deliveries').select('status').where('id', '=', deliveryId).executeTakeFirst();
      return row && (status ? row.status === status : row.status === 'delivered' || row.status === 'failed') ? true : undefined;
    });
  const outcomeOf = async (deliveryId: string) => {
    const outcome = await until(() => outcomes.find((o) => o.deliveryId === deliveryId));
    await committed(deliveryId);
    return outcome;
  };

  test('a POST carries the interface headers and a signature a receiver verifies', async () => {
    const r = await receiver([{ status: 200 }]);
    const delivery = input(`${r.url}/hook`, { headers: { 'X-Api-Key': 'k1', 'X-Service-Signature': 'forged', 'user-agent': 'evil' } });
    const { deliveryId } = await deliveries.enqueue(delivery);
    const [got] = await r.waitFor(1);
    assert.equal(got!.method, 'POST');
    assert.equal(got!.url, '/hook');
    assert.equal(got!.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(got!.headers['user-agent'], 'Presence-DataHandoff/1.0');
    assert.equal(got!.headers['x-service-delivery'], deliveryId);
    assert.equal(got!.headers['x-api-key'], 'k1');
    assert.match(String(got!.headers['x-service-timestamp']), /^\d+$/);
    assert.ok(Math.abs(Number(got!.headers['x-service-timestamp']) - Date.now() / 1000) < 5);
    assert.equal(got!.body, delivery.payload);
    // The receiver's computation, written out: HMAC-SHA256 keyed by the whole secret over "<ts>.<body>".
    const expected = 'sha256=' + crypto.createHmac('sha256', delivery.secret).update(`${got!.headers['x-service-timestamp']}.${got!.body}`).digest('hex');
    assert.equal(got!.headers['x-service-signature'], expected);
    assert.ok(verifySignature(delivery.secret, expected, String(got!.headers['x-service-timestamp']), got!.body));
    assert.ok(!verifySignature(delivery.secret, expected, String(Number(got!.headers['x-service-timestamp']) - 301), got!.body), 'an old timestamp fails');
    const outcome = await outcomeOf(deliveryId);
    assert.equal(outcome.outcome, 'delivered');
    assert.equal(outcome.statusCode, 200);
    const [view] = await deliveries.list(delivery.owner);
    assert.equal(view!.status, 'delivered');
    assert.equal(view!.attempts.length, 1);
    assert.equal(view!.attempts[0]!.status_code, 200);
    assert.equal(view!.attempts[0]!.response_excerpt, 'ok');
    assert.equal(view!.next_attempt_at, null);
  });

  test("a GET appends the query after the URL's own parameters and signs only the appended part", async () => {
    const r = await receiver([{ status: 204 }]);
    const query = 'email=ann%40example.com&note=a%26b%3Dc';
    const delivery = input(`${r.url}/lead?source=site#frag`, { method: 'GET', payload: query });
    const { deliveryId } = await deliveries.enqueue(delivery);
    const [got] = await r.waitFor(1);
    assert.equal(got!.method, 'GET');
    assert.equal(got!.url, `/lead?source=site&${query}`);
    assert.equal(got!.body, '');
    assert.equal(got!.headers['content-type'], undefined);
    // As a receiver does it: the part of the query after the URL's own parameters.
    const after = got!.url.slice(got!.url.indexOf('?') + 1).slice('source=site&'.length);
    const expected = 'sha256=' + crypto.createHmac('sha256', delivery.secret).update(`${got!.headers['x-service-timestamp']}.${after}`).digest('hex');
    assert.equal(got!.headers['x-service-signature'], expected);
    assert.equal((await outcomeOf(deliveryId)).outcome, 'delivered');
  });

  test('a GET to a URL without parameters gets "?" and the whole query is signed', async () => {
    const r = await receiver([{ status: 200 }]);
    const delivery = input(`${r.url}/lead`, { method: 'GET', payload: 'a=1&b=%0A' });
    await deliveries.enqueue(delivery);
    const [got] = await r.waitFor(1);
    assert.equal(got!.url, '/lead?a=1&b=%0A');
    assert.equal(got!.headers['x-service-signature'], signature(delivery.secret, Number(got!.headers['x-service-timestamp']), 'a=1&b=%0A'));
  });

  for (const status of [500, 503, 408, 425, 429]) {
    test(`${status} is retried on the schedule with the same delivery id, each attempt signed afresh`, async () => {
      const r = await receiver([{ status }, { status }, { status: 200 }]);
      const delivery = input(r.url);
      const { deliveryId } = await deliveries.enqueue(delivery);
      const got = await r.waitFor(3);
      assert.deepEqual(
        got.map((g) => g.headers['x-service-delivery']),
        [deliveryId, deliveryId, deliveryId],
      );
      for (const g of got) assert.equal(g.headers['x-service-signature'], signature(delivery.secret, Number(g.headers['x-service-timestamp']), g.body));
      // One second apart (the shortened schedule): the timestamps, and so the signatures, differ.
      assert.ok(got[1]!.at - got[0]!.at >= 900, `retried after ${got[1]!.at - got[0]!.at} ms`);
      assert.notEqual(got[0]!.headers['x-service-timestamp'], got[1]!.headers['x-service-timestamp']);
      assert.notEqual(got[0]!.headers['x-service-signature'], got[1]!.headers['x-service-signature']);
      const outcome = await outcomeOf(deliveryId);
      assert.equal(outcome.outcome, 'delivered');
      assert.equal(outcome.attempts, 3);
      const [view] = await deliveries.list(delivery.owner);
      assert.deepEqual(
        view!.attempts.map((a) => a.status_code),
        [status, status, 200],
      );
      assert.equal(view!.attempts[0]!.error, `HTTP ${status}`);
    });
  }

  test('five attempts in all, then the delivery fails (exhausted)', async () => {
    const r = await receiver([{ status: 502 }]);
    const delivery = input(r.url);
    const { deliveryId } = await deliveries.enqueue(delivery);
    const outcome = await outcomeOf(deliveryId);
    assert.equal(outcome.outcome, 'exhausted');
    assert.equal(outcome.attempts, 5);
    await sleep(1500);
    assert.equal(r.received.length, 5, 'no sixth attempt');
    const [view] = await deliveries.list(delivery.owner);
    assert.equal(view!.status, 'failed');
    assert.equal(view!.attempts.length, 5);
    assert.equal(view!.next_attempt_at, null);
  });

  test('a receiver that does not answer in time is retried (timeout)', async () => {
    const r = await receiver([{ hang: true }, { status: 200 }]);
    const { deliveryId } = await deliveries.enqueue(input(r.url));
    const outcome = await outcomeOf(deliveryId);
    assert.equal(outcome.outcome, 'delivered');
    const [view] = await deliveries.list(
      await database.db.selectFrom('deliveries').select(['owner_kind as kind', 'owner_id as id']).where('id', '=', deliveryId).executeTakeFirstOrThrow(),
    );
    assert.equal(view!.attempts[0]!.error, 'timeout');
    assert.equal(view!.attempts[0]!.status_code, null);
    assert.ok(view!.attempts[0]!.duration_ms >= TIMEOUT_SECONDS * 1000 - 100, `${view!.attempts[0]!.duration_ms} ms`);
  });

  test('an unreachable receiver is retried', async () => {
    const r = await receiver([{ close: true }, { status: 200 }]);
    const closed = await startReceiver();
    const deadUrl = closed.url;
    await closed.close();
    const delivery = input(deadUrl);
    const { deliveryId } = await deliveries.enqueue(delivery);
    await until(async () => ((await deliveries.list(delivery.owner))[0]?.attempts.length ? true : undefined));
    const [view] = await deliveries.list(delivery.owner);
    assert.equal(view!.status, 'retrying');
    assert.match(view!.attempts[0]!.error!, /^unreachable: ECONNREFUSED/);
    assert.ok(view!.next_attempt_at);
    // A connection closed without an answer is retried too.
    const second = await deliveries.enqueue(input(r.url));
    assert.equal((await outcomeOf(second.deliveryId)).outcome, 'delivered');
    assert.equal(r.received.length, 2);
    void deliveryId;
  });

  for (const answer of [
    { status: 400 },
    { status: 401 },
    { status: 404 },
    { status: 410 },
    { status: 302, headers: { location: 'http://127.0.0.1:1/elsewhere' } },
    { status: 301, headers: { location: '/moved' } },
  ]) {
    test(`${answer.status} is not retried and marks the owner as needing attention${answer.status < 400 ? ' (the redirect is not followed)' : ''}`, async () => {
      const r = await receiver([answer, { status: 200 }]);
      const delivery = input(r.url);
      const { deliveryId } = await deliveries.enqueue(delivery);
      const outcome = await outcomeOf(deliveryId);
      assert.equal(outcome.outcome, 'rejected');
      assert.equal(outcome.statusCode, answer.status);
      await sleep(1500);
      assert.equal(r.received.length, 1, 'one attempt, nothing followed');
      const [view] = await deliveries.list(delivery.owner);
      assert.equal(view!.status, 'failed');
      assert.equal(view!.attempts[0]!.error, answer.status < 400 ? `redirect ${answer.status} (redirects are not followed)` : `HTTP ${answer.status}`);
    });
  }

  test('a slow, endless answer is cut at the excerpt cap and the time limit', async () => {
    const r = await receiver([{ dribble: true, status: 200 }]);
    const delivery = input(r.url);
    const started = Date.now();
    const { deliveryId } = await deliveries.enqueue(delivery);
    const outcome = await outcomeOf(deliveryId);
    assert.equal(outcome.outcome, 'delivered');
    assert.ok(Date.now() - started < TIMEOUT_SECONDS * 1000, 'the excerpt, not the endless body, ends the attempt');
    const [view] = await deliveries.list(delivery.owner);
    assert.ok(view!.attempts[0]!.response_excerpt!.length <= EXCERPT_BYTES);
    assert.ok(view!.attempts[0]!.response_excerpt!.length >= 100);
  });

  test('a huge answer is read only up to the excerpt', async () => {
    const r = await receiver([{ status: 200, body: 'y'.repeat(5_000_000) }]);
    const delivery = input(r.url);
    const result = await deliveries.sendNow(delivery);
    assert.equal(result.delivered, true);
    const [view] = await deliveries.list(delivery.owner);
    assert.equal(view!.kind, 'test');
    assert.equal(view!.attempts[0]!.response_excerpt!.length, EXCERPT_BYTES);
  });

  test('sendNow makes one attempt now and answers its result; a failure is not retried', async () => {
    const r = await receiver([{ status: 500 }]);
    const delivery = input(r.url);
    const result = await deliveries.sendNow(delivery);
    assert.deepEqual(
      { delivered: result.delivered, status_code: result.status_code, error: result.error },
      { delivered: false, status_code: 500, error: 'HTTP 500' },
    );
    await sleep(1500);
    assert.equal(r.received.length, 1);
    assert.equal(r.received[0]!.headers['x-service-delivery'], result.delivery_id);
  });

  test('a failed delivery replayed by hand is made again with the same delivery id', async () => {
    const r = await receiver([{ status: 404 }, { status: 200 }]);
    const delivery = input(r.url);
    const { deliveryId } = await deliveries.enqueue(delivery);
    assert.equal((await outcomeOf(deliveryId)).outcome, 'rejected');
    await assert.rejects(deliveries.replay({ kind: 'test', id: 'someone-else' }, deliveryId), /.*/);
    const replayed = await deliveries.replay(delivery.owner, deliveryId);
    assert.equal(replayed.status, 'pending');
    const got = await r.waitFor(2);
    assert.equal(got[1]!.headers['x-service-delivery'], deliveryId);
    await until(() => (outcomes.filter((o) => o.deliveryId === deliveryId).length === 2 ? true : undefined));
    await committed(deliveryId, 'delivered');
    const [view] = await deliveries.list(delivery.owner);
    assert.equal(view!.status, 'delivered');
    assert.deepEqual(
      view!.attempts.map((a) => a.status_code),
      [404, 200],
    );
    await assert.rejects(deliveries.replay(delivery.owner, deliveryId), /.*/, 'only a failed delivery is replayed');
  });

  test('a dedupe key makes one delivery, however often it is enqueued', async () => {
    const r = await receiver([{ status: 200 }]);
    const delivery = input(r.url, { dedupeKey: `rule-1:${crypto.randomUUID()}` });
    const first = await deliveries.enqueue(delivery);
    const second = await deliveries.enqueue(delivery);
    assert.equal(second.deliveryId, first.deliveryId);
    assert.equal(second.created, false);
    await outcomeOf(first.deliveryId);
    await sleep(800);
    assert.equal(r.received.length, 1);
  });

  test('a URL is checked when saved: private and loopback refused by address and by name (422 private_address)', async () => {
    for (const url of [
      'http://127.0.0.1/x',
      'http://localhost:1/x',
      'http://10.0.0.8/',
      'http://[fd00::1]/',
      'http://192.168.1.1/',
      'http://[::ffff:127.0.0.1]/',
    ]) {
      await assert.rejects(strict.checkUrl(url), (error: any) => error.statusCode === 422 && error.code === 'private_address', url);
    }
    await assert.rejects(strict.checkUrl('ftp://example.com/'), (error: any) => error.code === 'invalid_url');
    await assert.rejects(strict.checkUrl('https://user:pw@example.com/'), (error: any) => error.code === 'invalid_url');
    await strict.checkUrl('https://93.184.215.14/hook');
    await deliveries.checkUrl('http://127.0.0.1/x'); // WEBHOOK_ALLOW_PRIVATE=1
  });

  test('private addresses are refused at connect time: a literal 127.0.0.1 and a name resolving to it', async () => {
    const r = await receiver([{ status: 200 }]);
    const literal = await strict.sendNow(input(r.url));
    assert.equal(literal.delivered, false);
    assert.match(literal.error!, /^private_address: 127\.0\.0\.1 resolves to 127\.0\.0\.1/);
    const byName = await strict.sendNow(input(`http://localhost:${r.port}/`));
    assert.equal(byName.delivered, false);
    assert.match(byName.error!, /^private_address: localhost resolves to (127\.0\.0\.1|::1)/);
    assert.equal(r.received.length, 0, 'nothing reached the receiver');
  });
});
