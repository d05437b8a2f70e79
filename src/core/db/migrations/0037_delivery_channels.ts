import { sql, type Kysely } from 'kysely';

/**
 * One retry engine (issue 30): notifications' Telegram sends go through the delivery engine as a
 * channel of their own (src/delivery/channels.ts), and quiet hours hold a delivery with its first
 * attempt's start. So:
 * - `deliveries.channel`: `http` (every row so far) or `telegram`; a Telegram row's `url` is its
 *   target reference `telegram:<destination id>` (the chat and the bot token are looked up at each
 *   attempt, never stored), its `secret` is empty, its payload `{"text", "notification_id"}`.
 * - `skipped`: a send whose destination was disabled or paused when it was due (as before).
 * - The rows of `notification_sends` move into `deliveries` and their attempts into
 *   `delivery_attempts` (same ids, so links and replays keep working; `dedupe_key` set so a re-run
 *   of the same send still finds its row), and the table goes: one log, read one way. Sends still
 *   waiting have a job on the old queue; notifications hands those to the engine (`wake`).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE deliveries ADD COLUMN channel TEXT NOT NULL DEFAULT 'http'`.execute(db);
  await sql`ALTER TABLE deliveries DROP CONSTRAINT deliveries_status_check`.execute(db);
  await sql`ALTER TABLE deliveries ADD CONSTRAINT deliveries_status_check CHECK (status IN ('pending', 'retrying', 'delivered', 'failed', 'skipped'))`.execute(
    db,
  );

  // Telegram sends (a notification's, or a handoff's with no notification).
  await sql`
    INSERT INTO deliveries (id, account_id, owner_kind, owner_id, dedupe_key, conversation_id, kind, channel, url, method,
                            content_type, headers, payload, secret, user_agent, status, attempts, next_attempt_at, last_error,
                            created_at, updated_at, finished_at)
    SELECT s.id, s.account_id, 'notification', s.destination_id::text, 'notification-send:' || s.id::text, n.conversation_id::text, 'event',
           'telegram', 'telegram:' || s.destination_id::text, 'POST', NULL, '{}'::jsonb,
           jsonb_build_object('text', s.text, 'notification_id', s.notification_id)::text, '', 'Presence-Notifications/1.0',
           s.status, jsonb_array_length(s.attempts), s.next_attempt_at, s.attempts -> -1 ->> 'error', s.created_at, now(),
           CASE WHEN s.status IN ('delivered', 'failed', 'skipped') THEN now() END
    FROM notification_sends s
    JOIN notification_destinations d ON d.id = s.destination_id AND d.type = 'telegram'
    LEFT JOIN notifications n ON n.id = s.notification_id
    ON CONFLICT DO NOTHING`.execute(db);
  // Webhook sends held for quiet hours (or skipped at the window's end): signed deliveries, keyed as
  // the webhook sends that were never held.
  await sql`
    INSERT INTO deliveries (id, account_id, owner_kind, owner_id, dedupe_key, conversation_id, kind, channel, url, method,
                            content_type, headers, payload, secret, user_agent, status, attempts, next_attempt_at,
                            created_at, updated_at, finished_at)
    SELECT s.id, s.account_id, 'notification', s.destination_id::text,
           'notification:' || s.notification_id::text || ':' || s.destination_id::text, n.conversation_id::text, 'event',
           'http', COALESCE(d.url, ''), 'POST', 'application/json; charset=utf-8', d.headers, s.payload::text,
           COALESCE(d.secret, ''), 'Presence-Notifications/1.0', s.status, 0, s.next_attempt_at, s.created_at, now(),
           CASE WHEN s.status IN ('delivered', 'failed', 'skipped') THEN now() END
    FROM notification_sends s
    JOIN notification_destinations d ON d.id = s.destination_id AND d.type = 'webhook'
    LEFT JOIN notifications n ON n.id = s.notification_id
    ON CONFLICT DO NOTHING`.execute(db);
  await sql`
    INSERT INTO delivery_attempts (delivery_id, number, at, status_code, error, duration_ms)
    SELECT s.id, a.number, (a.value ->> 'at')::timestamptz, (a.value ->> 'status_code')::integer, a.value ->> 'error',
           COALESCE((a.value ->> 'duration_ms')::integer, 0)
    FROM notification_sends s
    JOIN deliveries d ON d.id = s.id
    CROSS JOIN LATERAL jsonb_array_elements(s.attempts) WITH ORDINALITY AS a(value, number)
    ON CONFLICT DO NOTHING`.execute(db);
  await sql`DROP TABLE notification_sends`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
