import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE accounts (
      id              SERIAL PRIMARY KEY,
      name            TEXT NOT NULL,
      plan            TEXT NOT NULL CHECK (plan IN ('free', 'paid')),
      balance_cents   BIGINT NOT NULL DEFAULT 0,
      default_agent_id INTEGER,
      created_at      TIMESTAMPTZ NOT NULL DEFAULT now()
    )`.execute(db);

  await sql`
    CREATE TABLE api_keys (
      id          SERIAL PRIMARY KEY,
      account_id  INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
      key_hash    TEXT NOT NULL UNIQUE,
      key_hint    TEXT NOT NULL,
      permissions TEXT[] NOT NULL,
      created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
      revoked_at  TIMESTAMPTZ
    )`.execute(db);

  await sql`
    CREATE TABLE agents (
      id                SERIAL PRIMARY KEY,
      account_id        INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
      name              TEXT NOT NULL,
      avatar_id         TEXT NOT NULL,
      voice_id          TEXT NOT NULL,
      tts_primary       TEXT NOT NULL,
      languages         JSONB NOT NULL,
      studio            JSONB NOT NULL,
      website_url       TEXT,
      system_prompt     TEXT,
      concurrency_limit INTEGER NOT NULL DEFAULT 1,
      welcome_message   TEXT,
      fillers_enabled   BOOLEAN NOT NULL DEFAULT false,
      status            TEXT NOT NULL DEFAULT 'active',
      embed             JSONB NOT NULL,
      visitor_values    JSONB NOT NULL,
      visitor_secret    TEXT NOT NULL,
      visitor_secret_rotated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
      created_at        TIMESTAMPTZ NOT NULL DEFAULT now(),
      updated_at        TIMESTAMPTZ NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`CREATE INDEX agents_account_idx ON agents (account_id, id)`.execute(db);
  await sql`CREATE UNIQUE INDEX agents_embed_key_idx ON agents ((embed->>'embed_key'))`.execute(db);
  // Deployment-wide values shared by every node (e.g. the key that signs preview links).
  await sql`CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL)`.execute(db);
  await sql`
    ALTER TABLE accounts ADD CONSTRAINT accounts_default_agent_fk
      FOREIGN KEY (default_agent_id) REFERENCES agents(id) ON DELETE SET NULL`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
