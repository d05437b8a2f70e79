import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  // agent_id is not a foreign key: a session's record (and its metered seconds) outlives the agent.
  await sql`
    CREATE TABLE sessions (
      id                  UUID PRIMARY KEY,
      account_id          INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
      agent_id            INTEGER NOT NULL,
      mode                TEXT NOT NULL CHECK (mode IN ('conversation', 'render')),
      status              TEXT NOT NULL CHECK (status IN ('active', 'ended')),
      avatar_id           TEXT NOT NULL,
      voice_id            TEXT NOT NULL,
      voice_provider      TEXT NOT NULL,
      look                JSONB NOT NULL,
      player_key          TEXT NOT NULL UNIQUE,
      token_hash          TEXT NOT NULL UNIQUE,
      max_session_seconds INTEGER,
      created_at          TIMESTAMPTZ NOT NULL DEFAULT now(),
      player_opened_at    TIMESTAMPTZ,
      ended_at            TIMESTAMPTZ,
      end_reason          TEXT,
      duration_seconds    DOUBLE PRECISION
    )`.execute(db);
  await sql`CREATE INDEX sessions_account_idx ON sessions (account_id, created_at DESC)`.execute(db);
  await sql`CREATE INDEX sessions_active_idx ON sessions (agent_id) WHERE status = 'active'`.execute(db);

  // Metered session seconds, one row per ended session: the usage and billing routes sum these
  // per account, agent, voice provider and month.
  await sql`
    CREATE TABLE usage_records (
      id             SERIAL PRIMARY KEY,
      account_id     INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
      agent_id       INTEGER NOT NULL,
      session_id     UUID NOT NULL UNIQUE,
      voice_provider TEXT NOT NULL,
      seconds        DOUBLE PRECISION NOT NULL,
      month          TEXT NOT NULL,
      recorded_at    TIMESTAMPTZ NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`CREATE INDEX usage_account_month_idx ON usage_records (account_id, month)`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
