/**
 * The delivery-channels migration on a database that already holds notification sends (from when
 * Telegram sends had their own retry engine): every send moves into the delivery engine's log with
 * its id, status, attempts, notification and dedupe key, a Telegram one as a target reference (no
 * chat, no token), a webhook send held for quiet hours as a signed delivery waiting for the
 * window's end; the old table goes. Both engines.
 */
import { after } from 'node:test';
import assert from 'node:assert/strict';
import { sql, type Kysely } from 'kysely';
import type { OpenedDatabase } from '../../src/core/db/database.js';
import { migrateToLatest } from '../../src/core/db/migrate.js';
import { DeliveryEngine } from '../../src/delivery/engine.js';
import { cleanup } from '../cli/support/process.js';
import { describeMigration, migrateBefore } from '../support/migration.js';

after(cleanup);

const MIGRATION = '0037_delivery_channels';

const ids = {
  delivered: '11111111-1111-5111-8111-111111111111',
  handoffFailed: '22222222-2222-5222-8222-222222222222',
  skipped: '33333333-3333-5333-8333-333333333333',
  held: '44444444-4444-5444-8444-444444444444',
};
const conversationId = '0f0f0f0f-0000-4000-8000-000000000001';

async function check(open: (migrate: boolean) => Promise<OpenedDatabase>) {
  const opened = await open(false);
  try {
    await migrateBefore(opened.db, MIGRATION);
    const db = opened.db as Kysely<any>;
    const account = await db.insertInto('accounts').values({ name: 'a', plan: 'paid', balance_cents: 0 }).returning('id').executeTakeFirstOrThrow();
    const chat = await db
      .insertInto('notification_destinations')
      .values({ account_id: account.id, type: 'telegram', name: 'Telegram: Ana', chat_id: '4242', chat_title: 'Ana' })
      .returning('id')
      .executeTakeFirstOrThrow();
    const hook = await db
      .insertInto('notification_destinations')
      .values({ account_id: account.id, type: 'webhook', name: 'Hook', url: 'https://example.com/hook', secret: 'whsec_old', headers: '{"X-Team":"ops"}' })
      .returning('id')
      .executeTakeFirstOrThrow();
    const notification = await db
      .insertInto('notifications')
      .values({
        account_id: account.id,
        agent_id: 1,
        agent_name: 'Shop',
        conversation_id: conversationId,
        dedupe_key: 'rule:1:x',
        category: 'lead',
        title: 'Lead',
        body: 'jo@example.com',
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const heldUntil = new Date(Date.now() + 3600_000);
    const attempt = (status_code: number, error: string | null) => ({ at: new Date(Date.now() - 60_000).toISOString(), status_code, error, duration_ms: 12 });
    await db
      .insertInto('notification_sends')
      .values([
        {
          id: ids.delivered,
          account_id: account.id,
          notification_id: notification.id,
          destination_id: chat.id,
          text: '🔔 Lead',
          status: 'delivered',
          attempts: JSON.stringify([attempt(429, 'Too Many Requests: retry after 1'), attempt(200, null)]),
        },
        {
          id: ids.handoffFailed,
          account_id: account.id,
          notification_id: null,
          destination_id: chat.id,
          text: 'Lead: jo@example.com',
          status: 'failed',
          attempts: JSON.stringify([attempt(403, 'Forbidden: bot was blocked by the user')]),
        },
        { id: ids.skipped, account_id: account.id, notification_id: null, destination_id: chat.id, text: 'while paused', status: 'skipped' },
        {
          id: ids.held,
          account_id: account.id,
          notification_id: notification.id,
          destination_id: hook.id,
          text: 'Lead',
          payload: JSON.stringify({ type: 'notification', notification: { id: notification.id, title: 'Lead' } }),
          status: 'pending',
          next_attempt_at: heldUntil,
        },
      ])
      .execute();

    await migrateToLatest(db);

    const rows = await db.selectFrom('deliveries').selectAll().orderBy('id').execute();
    assert.deepEqual(
      rows.map((r) => [r.id, r.channel, r.status, r.attempts, r.owner_kind, r.owner_id]),
      [
        [ids.delivered, 'telegram', 'delivered', 2, 'notification', String(chat.id)],
        [ids.handoffFailed, 'telegram', 'failed', 1, 'notification', String(chat.id)],
        [ids.skipped, 'telegram', 'skipped', 0, 'notification', String(chat.id)],
        [ids.held, 'http', 'pending', 0, 'notification', String(hook.id)],
      ],
    );
    const [delivered, failed, , held] = rows;
    // A Telegram send: the destination's reference, its text and notification; no chat, no secret.
    assert.equal(delivered.url, `telegram:${chat.id}`);
    assert.deepEqual(JSON.parse(delivered.payload), { text: '🔔 Lead', notification_id: notification.id });
    assert.equal(delivered.secret, '');
    assert.equal(delivered.conversation_id, conversationId);
    assert.ok(!JSON.stringify(rows).includes('4242'), 'no chat id in a delivery record');
    assert.equal(delivered.dedupe_key, `notification-send:${ids.delivered}`);
    assert.ok(delivered.finished_at, 'a finished send is pruned like every finished delivery');
    assert.equal(failed.last_error, 'Forbidden: bot was blocked by the user');
    assert.deepEqual(JSON.parse(failed.payload), { text: 'Lead: jo@example.com', notification_id: null });
    // The held webhook send: a signed delivery, keyed like an unheld one, still waiting for the window's end.
    assert.deepEqual(
      [held.url, held.secret, held.headers, held.dedupe_key, held.finished_at],
      ['https://example.com/hook', 'whsec_old', { 'X-Team': 'ops' }, `notification:${notification.id}:${hook.id}`, null],
    );
    assert.equal(new Date(held.next_attempt_at).getTime(), heldUntil.getTime());
    assert.deepEqual(JSON.parse(held.payload).notification.title, 'Lead');

    // The old log reads through the engine, attempts in order.
    // (Listing reads the tables only: the engine's job queue is never reached here.)
    const engine = new DeliveryEngine(opened.db, undefined as never, console, { retryDelays: [1], timeoutSeconds: 5, allowPrivate: false });
    const log = await engine.list({ kind: 'notification', id: String(chat.id) }, { limit: 10, offset: 0 });
    const byId = new Map(log.map((v) => [v.delivery_id, v]));
    assert.deepEqual(
      byId.get(ids.delivered)!.attempts.map((a) => [a.status_code, a.error, a.duration_ms]),
      [
        [429, 'Too Many Requests: retry after 1', 12],
        [200, null, 12],
      ],
    );
    assert.equal(byId.get(ids.skipped)!.status, 'skipped');

    const left = await sql<{ name: string | null }>`SELECT to_regclass('notification_sends')::text AS name`.execute(db);
    assert.equal(left.rows[0]!.name, null, 'the old table is gone');
  } finally {
    await opened.close();
  }
}

describeMigration(MIGRATION, 'notification sends move into the delivery log', check);
