import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  // The id a LiveAvatar customer's code already sends as `avatar_id` (contract, "LiveAvatar-compatible
  // session routes"): one agent per id within an account.
  await sql`ALTER TABLE agents ADD COLUMN liveavatar_avatar_id UUID`.execute(db);
  await sql`CREATE UNIQUE INDEX agents_liveavatar_avatar_id_idx ON agents (account_id, liveavatar_avatar_id) WHERE liveavatar_avatar_id IS NOT NULL`.execute(
    db,
  );
  // A session started through the LiveAvatar routes ends after `idle_seconds` without a socket
  // command or a keep-alive (instead of the player-open timeout); `last_active_at` is written at
  // most every few seconds, so a sweep after a restart (or on another node) sees the idle ones.
  await sql`ALTER TABLE sessions ADD COLUMN idle_seconds INTEGER`.execute(db);
  await sql`ALTER TABLE sessions ADD COLUMN last_active_at TIMESTAMPTZ`.execute(db);
  // Minted session tokens: the JWT carries session_id; this row says it may start once, and
  // whether it was stopped before it started.
  await sql`
    CREATE TABLE liveavatar_tokens (
      session_id UUID PRIMARY KEY,
      account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
      agent_id INTEGER NOT NULL,
      player_key TEXT NOT NULL UNIQUE,
      max_session_seconds INTEGER,
      created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
      started_at TIMESTAMPTZ,
      stopped_at TIMESTAMPTZ
    )`.execute(db);
  await sql`CREATE INDEX liveavatar_tokens_created_idx ON liveavatar_tokens (created_at)`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
