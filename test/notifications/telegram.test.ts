/**
 * Telegram destinations against a local fake of the Bot API (real wire format), driven by the
 * real client (grammY): connecting a chat through the one-time deep link, notifications sent when
 * conversations end, retries (429 retry_after), a blocked bot (needs attention), the pause after
 * 10 failures and its resume by a test send, quiet hours and muted categories.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { forEachEngine, startTestApp, type TestApp } from '../support/app.js';
import { assertCoded, converse, endedHandled, itemAt, makeAgent, notificationOf, sleep, until } from './helpers.js';
import { connectChat as connectNewChat, startFakeTelegram, type FakeTelegram } from './support/fake-telegram.js';

forEachEngine('Telegram destinations', (engine) => {
  let t: TestApp;
  let telegram: FakeTelegram;
  let chatIds = 5000;
  before(async () => {
    telegram = await startFakeTelegram();
    t = await startTestApp(engine, { TELEGRAM_BOT_TOKEN: telegram.token, TELEGRAM_API_URL: telegram.url, WEBHOOK_RETRY_DELAYS: '1,1,1,1' });
  });
  after(async () => {
    await t.close();
    await telegram.close();
  });

  /** Connects a new chat to the account of `key`; answers the destination and the chat. */
  const connectChat = (key?: string, name = 'Maria') => connectNewChat(t, telegram, { id: chatIds++, first_name: name, username: name.toLowerCase() }, key);

  test('connect: a one-time deep link; the chat that presses Start becomes a destination and is told so', async () => {
    const link = await t.request('POST', '/v1/notifications/destinations/telegram/connect');
    assert.equal(link.status, 200);
    assert.equal(link.body.status, 'pending');
    assert.match(link.body.token, /^[A-Za-z0-9_-]{32}$/);
    assert.equal(link.body.url, `https://t.me/${telegram.username}?start=${link.body.token}`);
    assert.ok(new Date(link.body.expires_at).getTime() > Date.now() + 9 * 60_000);

    const pending = await t.request('GET', `/v1/notifications/destinations/telegram/connect/${link.body.token}`);
    assert.deepEqual([pending.status, pending.body.status, pending.body.destination], [200, 'pending', null]);

    const chat = { id: 4242, first_name: 'Ana', last_name: 'Lima' };
    telegram.userSends(chat, 'hello bot'); // not a /start: ignored
    telegram.userSends(chat, `/start ${link.body.token}`);
    const connected = await until(async () => {
      const res = await t.request('GET', `/v1/notifications/destinations/telegram/connect/${link.body.token}`);
      return res.body.status === 'connected' ? res.body : undefined;
    });
    assert.deepEqual(
      [connected.destination.type, connected.destination.name, connected.destination.chat, connected.destination.state],
      ['telegram', 'Telegram: Ana Lima', { id: '4242', title: 'Ana Lima' }, 'active'],
    );
    assert.ok(
      telegram.sent.some((m) => m.chat_id === '4242' && /^Connected\./.test(m.text)),
      'the chat is told',
    );
    const listed = (await t.request('GET', '/v1/notifications/destinations')).body.destinations;
    assert.ok(listed.some((d: any) => d.id === connected.destination.id && d.type === 'telegram'));

    // The link works once: a second chat using it is told it expired, and connects nothing.
    const intruder = { id: 777, first_name: 'Eve' };
    telegram.userSends(intruder, `/start ${link.body.token}`);
    // The bot reads its messages while a link is pending: a new link wakes it.
    await t.request('POST', '/v1/notifications/destinations/telegram/connect');
    await until(() => telegram.sent.some((m) => m.chat_id === '777'));
    assert.match(telegram.sent.find((m) => m.chat_id === '777')!.text, /expired or was already used/);
    assert.equal(
      (await t.request('GET', '/v1/notifications/destinations')).body.destinations.filter((d: any) => d.type === 'telegram').length,
      listed.filter((d: any) => d.type === 'telegram').length,
    );
    // getUpdates moved past what it read: every update was confirmed with a later offset.
    const reads = telegram.calls.filter((c) => c.method === 'getUpdates').map((c) => Number(c.params.offset ?? 0));
    assert.ok(reads.at(-1)! > 1000, `offsets advance: ${reads.slice(-3)}`);

    // Another account cannot see the link; an old link says it expired.
    const other = await t.account('paid');
    assertCoded(
      await t.request('GET', `/v1/notifications/destinations/telegram/connect/${link.body.token}`, { key: other.key }),
      404,
      'connect_token_not_found',
    );
    const old = await t.request('POST', '/v1/notifications/destinations/telegram/connect');
    await sql`UPDATE notification_telegram_links SET expires_at = now() - interval '1 second' WHERE connected_at IS NULL`.execute(t.database.db);
    assert.equal((await t.request('GET', `/v1/notifications/destinations/telegram/connect/${old.body.token}`)).body.status, 'expired');
    itemAt(await t.request('GET', `/v1/notifications/destinations/telegram/connect/${encodeURIComponent('not a token!')}`), ['path', 'token']);
    itemAt(await t.request('GET', `/v1/notifications/destinations/telegram/connect/${'x'.repeat(65)}`), ['path', 'token']);
  });

  test('a bot whose updates go to a webhook cannot connect chats, and says so', async () => {
    telegram.webhookUrl = 'https://elsewhere.example/telegram';
    try {
      assertCoded(await t.request('POST', '/v1/notifications/destinations/telegram/connect'), 409, 'telegram_webhook_set');
    } finally {
      telegram.webhookUrl = '';
    }
  });

  test('at most ten pending links per account: the oldest goes', async () => {
    const a = await t.account('paid');
    const tokens: string[] = [];
    for (let i = 0; i < 11; i++) tokens.push((await t.request('POST', '/v1/notifications/destinations/telegram/connect', { key: a.key })).body.token);
    assertCoded(await t.request('GET', `/v1/notifications/destinations/telegram/connect/${tokens[0]}`, { key: a.key }), 404, 'connect_token_not_found');
    assert.equal((await t.request('GET', `/v1/notifications/destinations/telegram/connect/${tokens[10]}`, { key: a.key })).body.status, 'pending');
  });

  test('a conversation matching a rule is sent to the connected chat, and the send is logged', async () => {
    const a = await t.account('paid');
    const { destination, chat } = await connectChat(a.key, 'Owner');
    const agent = await makeAgent(t, { name: 'Shop assistant' }, a.key);
    await t.request('POST', `/v1/notifications/rules/${agent}`, {
      key: a.key,
      body: { name: 'Wants a refund', category: 'support', when: { keywords: ['refund'] }, destination_ids: [destination.id] },
    });
    const id = await converse(t, agent, ['Hi! I need a refund & a <receipt> for "order 7"'], a.key);
    await notificationOf(t, id, a.key);
    const message = await until(() => telegram.sent.find((m) => m.chat_id === String(chat.id) && m.text.includes('Wants a refund')));
    assert.equal(message.text.split('\n')[0], '🔔 Wants a refund');
    assert.match(message.text, /Visitor said: "Hi! I need a refund & a <receipt> for "order 7""/);
    assert.match(message.text, /Shop assistant · \d+ s · 1 visitor turn/);
    const log = await until(async () => {
      const res = await t.request('GET', `/v1/notifications/destinations/${destination.id}/deliveries`, { key: a.key });
      return res.body.deliveries[0]?.status === 'delivered' ? res.body.deliveries : undefined;
    });
    assert.equal(log.length, 1);
    assert.equal(log[0].attempts.length, 1);
    assert.equal(log[0].attempts[0].status_code, 200);
  });

  test('429 with retry_after is retried on the schedule; a blocked bot is not retried and needs attention', async () => {
    const a = await t.account('paid');
    const { destination, chat } = await connectChat(a.key, 'Retry');
    telegram.failSends.push({ error_code: 429, description: 'Too Many Requests: retry after 1', retry_after: 1 });
    assert.equal(
      await t.context.notifications.channels.sendTelegram({ accountId: a.id, destinationId: destination.id, text: 'Lead: jo@example.com', key: 'h1' }),
      true,
    );
    const delivered = await until(
      async () => {
        const res = await t.request('GET', `/v1/notifications/destinations/${destination.id}/deliveries`, { key: a.key });
        return res.body.deliveries[0]?.status === 'delivered' ? res.body.deliveries[0] : undefined;
      },
      15_000,
      'the retried send',
    );
    assert.deepEqual(
      delivered.attempts.map((x: any) => x.status_code),
      [429, 200],
    );
    assert.match(delivered.attempts[0].error, /Too Many Requests/);
    // A retry_after past the schedule's longest wait (1 s here) is held to it.
    telegram.failSends.push({ error_code: 429, description: 'Too Many Requests: retry after ever', retry_after: 1e15 });
    await t.context.notifications.channels.sendTelegram({ accountId: a.id, destinationId: destination.id, text: 'Later', key: 'h-later' });
    const later = await until(
      async () => {
        const res = await t.request('GET', `/v1/notifications/destinations/${destination.id}/deliveries`, { key: a.key });
        return res.body.deliveries.find((x: any) => x.attempts.length >= 1 && x.attempts[0].status_code === 429 && x.attempts[0].error.includes('ever'));
      },
      15_000,
      'the first attempt of the send told to wait for ever',
    );
    if (later.status === 'retrying') assert.ok(Date.parse(later.next_attempt_at) - Date.now() <= 5_000, `next attempt at ${later.next_attempt_at}`);
    await until(
      async () => {
        const res = await t.request('GET', `/v1/notifications/destinations/${destination.id}/deliveries`, { key: a.key });
        return res.body.deliveries.find((x: any) => x.delivery_id === later.delivery_id && x.status === 'delivered');
      },
      15_000,
      'the send delivered after the held wait',
    );
    assert.equal(telegram.sent.filter((m) => m.text === 'Lead: jo@example.com').length, 1);
    // The same key sends nothing more.
    await t.context.notifications.channels.sendTelegram({ accountId: a.id, destinationId: destination.id, text: 'Lead: jo@example.com', key: 'h1' });
    await sleep(500);
    assert.equal(telegram.sent.filter((m) => m.text === 'Lead: jo@example.com').length, 1);
    // Not a Telegram destination of this account: refused.
    assert.equal(await t.context.notifications.channels.sendTelegram({ accountId: t.accountId, destinationId: destination.id, text: 'x', key: 'h2' }), false);

    telegram.blocked.add(String(chat.id));
    await t.context.notifications.channels.sendTelegram({ accountId: a.id, destinationId: destination.id, text: 'blocked?', key: 'h3' });
    const state = await until(async () => {
      const d = (await t.request('GET', '/v1/notifications/destinations', { key: a.key })).body.destinations.find((x: any) => x.id === destination.id);
      return d.state === 'needs_attention' ? d : undefined;
    });
    assert.equal(state.last_error, 'Forbidden: bot was blocked by the user');
    const failed = (await t.request('GET', `/v1/notifications/destinations/${destination.id}/deliveries`, { key: a.key })).body.deliveries[0];
    assert.deepEqual([failed.status, failed.attempts.length, failed.attempts[0].status_code], ['failed', 1, 403]);

    // Replayed by hand once the chat unblocked the bot: the same delivery id, delivered.
    telegram.blocked.delete(String(chat.id));
    const replay = `/v1/notifications/destinations/${destination.id}/deliveries/${failed.delivery_id}/replay`;
    const replayed = await t.request('POST', replay, { key: a.key });
    assert.equal(replayed.status, 200, JSON.stringify(replayed.body));
    assert.equal(replayed.body.delivery.delivery_id, failed.delivery_id);
    const again = await until(async () => {
      const d = (await t.request('GET', `/v1/notifications/destinations/${destination.id}/deliveries`, { key: a.key })).body.deliveries.find(
        (x: any) => x.delivery_id === failed.delivery_id,
      );
      return d.status === 'delivered' ? d : undefined;
    });
    assert.deepEqual(
      again.attempts.map((x: any) => x.status_code),
      [403, 200],
    );
    assert.ok(telegram.sent.some((m) => m.text === 'blocked?'));
    assertCoded(await t.request('POST', replay, { key: a.key }), 409, 'delivery_not_failed');
    assertCoded(
      await t.request('POST', `/v1/notifications/destinations/${destination.id}/deliveries/00000000-0000-4000-8000-000000000000/replay`, { key: a.key }),
      404,
      'delivery_not_found',
    );
    assertCoded(await t.request('POST', replay), 404, 'destination_not_found');
    itemAt(await t.request('POST', `/v1/notifications/destinations/${destination.id}/deliveries/nope/replay`, { key: a.key }), ['path', 'delivery_id']);
  });

  test('ten failed sends in a row pause the destination; a successful test send resumes it', async () => {
    const a = await t.account('paid');
    const { destination, chat } = await connectChat(a.key, 'Paused');
    const agent = await makeAgent(t, {}, a.key);
    telegram.blocked.add(String(chat.id));
    for (let i = 0; i < 10; i++)
      await t.context.notifications.channels.sendTelegram({ accountId: a.id, destinationId: destination.id, text: `n${i}`, key: `p${i}` });
    await until(
      async () => {
        const d = (await t.request('GET', '/v1/notifications/destinations', { key: a.key })).body.destinations.find((x: any) => x.id === destination.id);
        return d.state === 'paused' && d.consecutive_failures === 10;
      },
      20_000,
      'the pause',
    );
    // While paused, sends are skipped.
    telegram.blocked.delete(String(chat.id));
    await t.context.notifications.channels.sendTelegram({ accountId: a.id, destinationId: destination.id, text: 'while paused', key: 'p-skip' });
    await until(async () =>
      (await t.request('GET', `/v1/notifications/destinations/${destination.id}/deliveries`, { key: a.key })).body.deliveries.find(
        (d: any) => d.status === 'skipped',
      ),
    );
    assert.ok(!telegram.sent.some((m) => m.text === 'while paused'));

    const tested = await t.request('POST', `/v1/notifications/rules/${agent}/test-delivery`, { key: a.key, body: { destination_id: destination.id } });
    assert.equal(tested.status, 200, JSON.stringify(tested.body));
    assert.deepEqual(tested.body.results, [{ destination_id: destination.id, type: 'telegram', delivered: true, status_code: 200, error: null }]);
    assert.ok(telegram.sent.some((m) => m.chat_id === String(chat.id) && /test notification/.test(m.text)));
    const resumed = (await t.request('GET', '/v1/notifications/destinations', { key: a.key })).body.destinations.find((x: any) => x.id === destination.id);
    assert.deepEqual([resumed.state, resumed.consecutive_failures], ['active', 0]);
    assertCoded(
      await t.request('POST', `/v1/notifications/rules/${agent}/test-delivery`, { key: a.key, body: { destination_id: 999999 } }),
      404,
      'destination_not_found',
    );
    itemAt(await t.request('POST', `/v1/notifications/rules/${agent}/test-delivery`, { key: a.key, body: { destination_id: 'x' } }), [
      'body',
      'destination_id',
    ]);
  });

  test('quiet hours hold the send (the inbox has it at once); a muted category is not sent; a disabled destination is skipped', async () => {
    const a = await t.account('paid');
    const { destination, chat } = await connectChat(a.key, 'Quiet');
    const agent = await makeAgent(t, {}, a.key);
    await t.request('POST', `/v1/notifications/rules/${agent}`, {
      key: a.key,
      body: { name: 'Any lead', category: 'lead', destination_ids: [destination.id] },
    });
    const hhmm = (offsetMinutes: number) => new Date(Date.now() + offsetMinutes * 60_000).toISOString().slice(11, 16);
    await t.request('PUT', `/v1/notifications/prefs/${agent}`, { key: a.key, body: { quiet_hours: { start: hhmm(-60), end: hhmm(60), timezone: 'UTC' } } });
    const held = await converse(t, agent, ['Quiet please'], a.key);
    await notificationOf(t, held, a.key);
    const send = await until(
      async () => (await t.request('GET', `/v1/notifications/destinations/${destination.id}/deliveries`, { key: a.key })).body.deliveries[0],
    );
    assert.equal(send.status, 'pending');
    const wait = new Date(send.next_attempt_at).getTime() - Date.now();
    assert.ok(wait > 55 * 60_000 && wait <= 61 * 60_000, `held until the window ends (${wait} ms)`);
    await sleep(1500);
    assert.ok(!telegram.sent.some((m) => m.chat_id === String(chat.id) && m.text.includes('Any lead')), 'nothing sent during quiet hours');

    await t.request('PUT', `/v1/notifications/prefs/${agent}`, { key: a.key, body: { quiet_hours: null, categories: { lead: false } } });
    const muted = await converse(t, agent, ['Muted'], a.key);
    await notificationOf(t, muted, a.key);
    await endedHandled(t, muted);
    assert.equal(
      (await t.request('GET', `/v1/notifications/destinations/${destination.id}/deliveries`, { key: a.key })).body.deliveries.length,
      1,
      'a muted category makes no send',
    );

    await t.request('PUT', `/v1/notifications/prefs/${agent}`, { key: a.key, body: { categories: { lead: true } } });
    const patched = await t.request('PATCH', `/v1/notifications/destinations/${destination.id}`, { key: a.key, body: { enabled: false, name: 'Night phone' } });
    assert.deepEqual([patched.body.destination.enabled, patched.body.destination.name], [false, 'Night phone']);
    assertCoded(
      await t.request('PATCH', `/v1/notifications/destinations/${destination.id}`, { key: a.key, body: { url: 'https://example.com/x' } }),
      422,
      'not_a_webhook',
    );
    const off = await converse(t, agent, ['Disabled'], a.key);
    await notificationOf(t, off, a.key);
    await endedHandled(t, off);
    assert.equal(
      (await t.request('GET', `/v1/notifications/destinations/${destination.id}/deliveries`, { key: a.key })).body.deliveries.length,
      1,
      'a disabled destination gets no send',
    );
    await sleep(500);
    assert.ok(!telegram.sent.some((m) => m.chat_id === String(chat.id) && m.text.includes('Any lead')));
  });
});
