import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  // One conversation per session (contract: conversation_id = session_id), render mode included.
  // Not foreign keys to sessions or agents: the record outlives both, as usage does. `agent_name`
  // is the name at the start, so reports read right after an agent is renamed or deleted.
  await sql`
    CREATE TABLE conversations (
      id               UUID PRIMARY KEY,
      account_id       INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
      agent_id         INTEGER NOT NULL,
      agent_name       TEXT NOT NULL,
      mode             TEXT NOT NULL CHECK (mode IN ('conversation', 'render')),
      visitor_id       TEXT,
      visitor          JSONB NOT NULL DEFAULT '{}'::jsonb,
      started_at       TIMESTAMPTZ NOT NULL,
      ended_at         TIMESTAMPTZ,
      duration_seconds DOUBLE PRECISION,
      end_reason       TEXT,
      visitor_turns    INTEGER NOT NULL DEFAULT 0,
      agent_turns      INTEGER NOT NULL DEFAULT 0,
      -- Notification categories raised by this conversation (reports filter on notif_category).
      categories       TEXT[] NOT NULL DEFAULT '{}',
      -- The transcript's words, for the reports' q filter (same on PGlite and PostgreSQL).
      search           TSVECTOR NOT NULL DEFAULT ''::tsvector
    )`.execute(db);
  await sql`CREATE INDEX conversations_account_started_idx ON conversations (account_id, started_at DESC, id)`.execute(db);
  await sql`CREATE INDEX conversations_agent_started_idx ON conversations (account_id, agent_id, started_at DESC)`.execute(db);
  await sql`CREATE INDEX conversations_visitor_idx ON conversations (account_id, visitor_id) WHERE visitor_id IS NOT NULL`.execute(db);
  await sql`CREATE INDEX conversations_search_idx ON conversations USING GIN (search)`.execute(db);
  await sql`CREATE INDEX conversations_open_idx ON conversations (started_at) WHERE ended_at IS NULL`.execute(db);

  await sql`
    CREATE TABLE conversation_turns (
      id              BIGSERIAL PRIMARY KEY,
      conversation_id UUID NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
      role            TEXT NOT NULL CHECK (role IN ('visitor', 'agent')),
      text            TEXT NOT NULL,
      at              TIMESTAMPTZ NOT NULL,
      language        TEXT,
      -- Per turn: how it arrived (voice, typed, command) and its latency waterfall in ms.
      details         JSONB NOT NULL DEFAULT '{}'::jsonb
    )`.execute(db);
  await sql`CREATE INDEX conversation_turns_conversation_idx ON conversation_turns (conversation_id, id)`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
