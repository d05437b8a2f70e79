/**
 * Telegram sends go through the one delivery engine (src/delivery, the `telegram` channel): a send
 * is a delivery row with its attempts in the engine's log, retried on WEBHOOK_RETRY_DELAYS, durable
 * across a restart of the server on the same database, its final outcome running the destination's
 * hook (needs attention) and replayable; the bot token is never in a stored record (the delivery
 * holds `telegram:<destination id>`, the chat and the bot are looked up at each attempt). Against
 * the local fake of the Bot API, driven by the real client (grammY). Both engines.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { sql } from 'kysely';
import { buildApp } from '../../src/app.js';
import { PERMISSIONS } from '../../src/core/auth.js';
import { loadConfig } from '../../src/core/config.js';
import { openDatabase, type OpenedDatabase } from '../../src/core/db/database.js';
import { ENGINES, forEachEngine, startTestApp } from '../support/app.js';
import { SEND_QUEUE } from '../../src/notifications/types.js';
import { jsonRequest } from '../support/http.js';
import { createDatabase } from '../support/postgres.js';
import { until } from '../support/until.js';
import { connectChat, startFakeTelegram, type FakeTelegram } from './support/fake-telegram.js';

/** One life of a server on a database that outlives it. */
async function serverLife(where: { databaseUrl?: string; dataDir?: string }, telegram: FakeTelegram, dataDir: string) {
  const database: OpenedDatabase = await openDatabase(where);
  const config = loadConfig({
    PUBLIC_URL: 'http://127.0.0.1:0',
    RATE_LIMIT_PER_SECOND: '100000',
    DATA_DIR: dataDir,
    MODELS_DOWNLOAD: '0',
    TELEGRAM_BOT_TOKEN: telegram.token,
    TELEGRAM_API_URL: telegram.url,
    // Long enough that the first life is gone before its retry is due.
    WEBHOOK_RETRY_DELAYS: '3,3',
  } as NodeJS.ProcessEnv);
  const { app, context } = await buildApp({ config, database, logger: false });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  return {
    context,
    db: database.db,
    request: (method: string, route: string, options: { key?: string | null; body?: unknown } = {}) => jsonRequest(url, method, route, options),
    async close() {
      await app.close();
      await database.close();
    },
  };
}

for (const engine of ENGINES) {
  const skip = engine === 'postgres' && !process.env.TEST_DATABASE_URL ? 'TEST_DATABASE_URL is not set' : false;
  test(`[${engine}] a Telegram send is the engine's delivery: retried across a restart, its outcome hook run, replayed; no token stored`, {
    skip,
  }, async () => {
    const telegram = await startFakeTelegram();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'presence-telegram-'));
    const pg = engine === 'postgres' ? await createDatabase(process.env.TEST_DATABASE_URL!) : undefined;
    const where = pg ? { databaseUrl: pg.url } : { dataDir: path.join(dir, 'db') };
    const dataDir = path.join(dir, 'data');
    let life = await serverLife(where, telegram, dataDir);
    try {
      const account = await life.context.accounts.create({ name: 'telegram', plan: 'paid', balanceCents: 10_000 });
      const { key } = await life.context.accounts.createKey(account.id, [...PERMISSIONS]);
      const chatId = 6100 + crypto.randomInt(1000);
      const { destination } = await connectChat(
        { request: (m, p, o) => life.request(m, p, { ...o, key }) },
        telegram,
        { id: chatId, first_name: 'Durable' },
        key,
      );

      // First life: the Bot API is down (502); the attempt is logged and the retry scheduled.
      telegram.failSends.push({ error_code: 502, description: 'Bad Gateway' });
      assert.equal(
        await life.context.notifications.channels.sendTelegram({
          accountId: account.id,
          destinationId: destination.id,
          text: 'Lead: ana@example.com',
          key: 'k1',
        }),
        true,
      );
      const row = await until(
        async () => {
          const r = await life.db.selectFrom('deliveries').selectAll().where('owner_id', '=', String(destination.id)).executeTakeFirst();
          return r?.status === 'retrying' ? r : undefined;
        },
        15_000,
        'the first attempt',
      );
      assert.deepEqual([row.channel, row.owner_kind, row.url, row.secret, row.attempts], ['telegram', 'notification', `telegram:${destination.id}`, '', 1]);
      const deliveryId = row.id;
      await life.close();

      // Second life on the same database: the chat now blocks the bot (403), so the retry made
      // here is rejected, not retried, and the destination's outcome hook marks it.
      telegram.blocked.add(String(chatId));
      life = await serverLife(where, telegram, dataDir);
      const log = () => life.request('GET', `/v1/notifications/destinations/${destination.id}/deliveries`, { key });
      const failed = await until(
        async () => {
          const entry = (await log()).body.deliveries.find((d: any) => d.delivery_id === deliveryId);
          return entry?.status === 'failed' ? entry : undefined;
        },
        20_000,
        'the retry after the restart',
      );
      assert.deepEqual(
        failed.attempts.map((a: any) => [a.status_code, a.error]),
        [
          [502, 'Bad Gateway'],
          [403, 'Forbidden: bot was blocked by the user'],
        ],
      );
      assert.equal(failed.notification_id, null, 'a handoff message names no notification');
      const marked = (await life.request('GET', '/v1/notifications/destinations', { key })).body.destinations.find((d: any) => d.id === destination.id);
      assert.deepEqual([marked.state, marked.consecutive_failures, marked.last_error], ['needs_attention', 1, 'Forbidden: bot was blocked by the user']);

      // Replay through the engine: same delivery id, from the start of the schedule; delivered.
      telegram.blocked.delete(String(chatId));
      const replayed = await life.request('POST', `/v1/notifications/destinations/${destination.id}/deliveries/${deliveryId}/replay`, { key });
      assert.equal(replayed.status, 200, JSON.stringify(replayed.body));
      assert.equal(replayed.body.delivery.delivery_id, deliveryId);
      const delivered = await until(async () => {
        const entry = (await log()).body.deliveries.find((d: any) => d.delivery_id === deliveryId);
        return entry?.status === 'delivered' ? entry : undefined;
      });
      assert.deepEqual(
        delivered.attempts.map((a: any) => a.status_code),
        [502, 403, 200],
      );
      assert.equal(telegram.sent.filter((m) => m.text === 'Lead: ana@example.com' && m.chat_id === String(chatId)).length, 1);
      const active = (await life.request('GET', '/v1/notifications/destinations', { key })).body.destinations.find((d: any) => d.id === destination.id);
      assert.deepEqual([active.state, active.consecutive_failures], ['active', 0]);

      // The same key again finds the same delivery: nothing new is sent.
      await life.context.notifications.channels.sendTelegram({
        accountId: account.id,
        destinationId: destination.id,
        text: 'Lead: ana@example.com',
        key: 'k1',
      });
      assert.equal((await log()).body.deliveries.length, 1);

      // Neither the bot token (nor its secret half) nor the chat id is in any stored record:
      // the deliveries, their attempts, or the job queue.
      const secretHalf = telegram.token.split(':')[1]!;
      const stored = JSON.stringify([
        await life.db.selectFrom('deliveries').selectAll().execute(),
        await life.db.selectFrom('delivery_attempts').selectAll().execute(),
        (await sql<{ data: unknown }>`SELECT data FROM pgboss.job`.execute(life.db)).rows,
      ]);
      assert.ok(stored.includes(deliveryId), 'the records were read');
      assert.ok(!stored.includes(secretHalf), 'no bot token stored');
      assert.ok(!stored.includes(String(chatId)), 'no chat id stored');
    } finally {
      await life.close();
      await telegram.close();
      await pg?.drop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
}

forEachEngine('a send left on the old notifications.send queue', (engine) => {
  test('is made by the engine when its job comes due (sends waiting at the upgrade are not lost)', async () => {
    const telegram = await startFakeTelegram();
    const t = await startTestApp(engine, { TELEGRAM_BOT_TOKEN: telegram.token, TELEGRAM_API_URL: telegram.url, WEBHOOK_RETRY_DELAYS: '1' });
    try {
      const { destination, chat } = await connectChat(t, telegram, { id: 7300, first_name: 'Upgrade' });
      // What migration 0037 leaves for a send that was waiting: its delivery row, and its job on the old queue.
      const id = crypto.randomUUID();
      await t.database.db
        .insertInto('deliveries')
        .values({
          id,
          account_id: t.accountId,
          owner_kind: 'notification',
          owner_id: String(destination.id),
          dedupe_key: `notification-send:${id}`,
          kind: 'event',
          channel: 'telegram',
          url: `telegram:${destination.id}`,
          method: 'POST',
          content_type: null,
          headers: '{}',
          payload: JSON.stringify({ text: 'sent before the upgrade', notification_id: null }),
          secret: '',
          user_agent: 'Presence-Notifications/1.0',
          status: 'pending',
          updated_at: new Date(),
        })
        .execute();
      await t.context.jobs.send(SEND_QUEUE, { sendId: id, attempt: 1 });
      await until(() => telegram.sent.some((m) => m.chat_id === String(chat.id) && m.text === 'sent before the upgrade'), 15_000, 'the old job');
      const entry = await until(async () => {
        const d = (await t.request('GET', `/v1/notifications/destinations/${destination.id}/deliveries`)).body.deliveries.find(
          (x: any) => x.delivery_id === id,
        );
        return d?.status === 'delivered' ? d : undefined;
      });
      assert.deepEqual(
        entry.attempts.map((a: any) => a.status_code),
        [200],
      );
    } finally {
      await t.close();
      await telegram.close();
    }
  });
});
