import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  // Where notifications go besides the inbox: a signed webhook or a Telegram chat, per account.
  // `state` follows the delivery outcomes (a 4xx marks it needs_attention, 10 failures pause it).
  await sql`
    CREATE TABLE notification_destinations (
      id                   SERIAL PRIMARY KEY,
      account_id           INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
      type                 TEXT NOT NULL CHECK (type IN ('webhook', 'telegram')),
      name                 TEXT NOT NULL,
      enabled              BOOLEAN NOT NULL DEFAULT true,
      state                TEXT NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'needs_attention', 'paused')),
      url                  TEXT,
      headers              JSONB NOT NULL DEFAULT '{}'::jsonb,
      secret               TEXT,
      chat_id              TEXT,
      chat_title           TEXT,
      consecutive_failures INTEGER NOT NULL DEFAULT 0,
      last_error           TEXT,
      created_at           TIMESTAMPTZ NOT NULL DEFAULT now(),
      updated_at           TIMESTAMPTZ NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`CREATE INDEX notification_destinations_account_idx ON notification_destinations (account_id, id)`.execute(db);

  // Alert rules, per agent: conditions (`when`) that must all hold for an ended conversation.
  await sql`
    CREATE TABLE notification_rules (
      id              SERIAL PRIMARY KEY,
      account_id      INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
      agent_id        INTEGER NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
      name            TEXT NOT NULL,
      category        TEXT NOT NULL,
      conditions      JSONB NOT NULL DEFAULT '{}'::jsonb,
      destination_ids INTEGER[] NOT NULL DEFAULT '{}',
      enabled         BOOLEAN NOT NULL DEFAULT true,
      created_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
      updated_at      TIMESTAMPTZ NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`CREATE INDEX notification_rules_agent_idx ON notification_rules (agent_id, id)`.execute(db);

  // The inbox. Not tied to the agent by a foreign key: a notification outlives its agent, as the
  // conversation record does. One per (rule, conversation), so a re-run ended hook adds nothing.
  await sql`
    CREATE TABLE notifications (
      id              BIGSERIAL PRIMARY KEY,
      account_id      INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
      agent_id        INTEGER NOT NULL,
      agent_name      TEXT NOT NULL,
      conversation_id UUID,
      rule_id         INTEGER,
      source          TEXT NOT NULL DEFAULT 'alert_rule',
      dedupe_key      TEXT NOT NULL,
      category        TEXT NOT NULL,
      title           TEXT NOT NULL,
      body            TEXT NOT NULL,
      created_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
      read_at         TIMESTAMPTZ,
      UNIQUE (account_id, dedupe_key)
    )`.execute(db);
  await sql`CREATE INDEX notifications_account_idx ON notifications (account_id, created_at DESC, id DESC)`.execute(db);
  await sql`CREATE INDEX notifications_unread_idx ON notifications (account_id, agent_id) WHERE read_at IS NULL`.execute(db);

  // Per agent: which categories go out to destinations, and the quiet hours that hold them back.
  await sql`
    CREATE TABLE notification_prefs (
      agent_id    INTEGER PRIMARY KEY REFERENCES agents(id) ON DELETE CASCADE,
      account_id  INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
      categories  JSONB NOT NULL DEFAULT '{}'::jsonb,
      quiet_hours JSONB,
      updated_at  TIMESTAMPTZ NOT NULL DEFAULT now()
    )`.execute(db);

  // One-time Telegram deep-link tokens (only their hash is kept).
  await sql`
    CREATE TABLE notification_telegram_links (
      token_hash     TEXT PRIMARY KEY,
      account_id     INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
      created_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
      expires_at     TIMESTAMPTZ NOT NULL,
      destination_id INTEGER REFERENCES notification_destinations(id) ON DELETE SET NULL,
      connected_at   TIMESTAMPTZ
    )`.execute(db);
  await sql`CREATE INDEX notification_telegram_links_account_idx ON notification_telegram_links (account_id, created_at)`.execute(db);

  // Each notification sent to a destination: its id is the delivery id (X-Service-Delivery for a
  // webhook); the attempts are the send log.
  await sql`
    CREATE TABLE notification_sends (
      id              UUID PRIMARY KEY,
      account_id      INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
      notification_id BIGINT REFERENCES notifications(id) ON DELETE CASCADE,
      destination_id  INTEGER NOT NULL REFERENCES notification_destinations(id) ON DELETE CASCADE,
      text            TEXT NOT NULL,
      payload         JSONB NOT NULL DEFAULT '{}'::jsonb,
      status          TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'retrying', 'delivered', 'failed', 'skipped')),
      attempts        JSONB NOT NULL DEFAULT '[]'::jsonb,
      next_attempt_at TIMESTAMPTZ,
      created_at      TIMESTAMPTZ NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`CREATE INDEX notification_sends_destination_idx ON notification_sends (destination_id, created_at DESC)`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
