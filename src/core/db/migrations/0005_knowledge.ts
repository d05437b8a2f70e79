import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  // One row per agent that has knowledge: the brain build's state, what it produced, and the
  // knowledge version every change bumps (the answering engines' caches key on it).
  await sql`
    CREATE TABLE knowledge_brains (
      agent_id      INTEGER PRIMARY KEY REFERENCES agents(id) ON DELETE CASCADE,
      account_id    INTEGER NOT NULL,
      status        TEXT NOT NULL DEFAULT 'none' CHECK (status IN ('none', 'pending', 'processing', 'complete', 'failed')),
      build_id      UUID,
      phase         TEXT,
      discover      BOOLEAN NOT NULL DEFAULT false,
      build_pages   INTEGER[] NOT NULL DEFAULT '{}',
      pages_total   INTEGER NOT NULL DEFAULT 0,
      pages_done    INTEGER NOT NULL DEFAULT 0,
      error         TEXT,
      engine        TEXT,
      instructions  TEXT,
      facts         JSONB NOT NULL DEFAULT '[]'::jsonb,
      site          JSONB NOT NULL DEFAULT '{}'::jsonb,
      boilerplate   JSONB NOT NULL DEFAULT '{"drop": [], "keepOn": {}}'::jsonb,
      version       INTEGER NOT NULL DEFAULT 0,
      requested_at  TIMESTAMPTZ,
      started_at    TIMESTAMPTZ,
      finished_at   TIMESTAMPTZ,
      updated_at    TIMESTAMPTZ NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`CREATE INDEX knowledge_brains_running_idx ON knowledge_brains (updated_at) WHERE status IN ('pending', 'processing')`.execute(db);

  await sql`
    CREATE TABLE knowledge_pages (
      id               SERIAL PRIMARY KEY,
      agent_id         INTEGER NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
      url              TEXT NOT NULL,
      is_primary       BOOLEAN NOT NULL,
      status           TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'read', 'failed')),
      title            TEXT,
      -- As read (Markdown), before the site's boilerplate is removed; and after (what the agent knows).
      extracted        TEXT,
      content          TEXT,
      -- The owner's own text for the page, which wins over what was read.
      content_override TEXT,
      final_url        TEXT,
      error            TEXT,
      read_at          TIMESTAMPTZ,
      read_build_id    UUID,
      created_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
      updated_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
      UNIQUE (agent_id, url)
    )`.execute(db);

  await sql`
    CREATE TABLE knowledge_sections (
      id         SERIAL PRIMARY KEY,
      agent_id   INTEGER NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
      topic      TEXT NOT NULL,
      title      TEXT NOT NULL,
      content    TEXT NOT NULL,
      created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
      updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
      UNIQUE (agent_id, topic)
    )`.execute(db);

  // Answers the owner gave to questions the agent could not answer (knowledge gaps).
  await sql`
    CREATE TABLE knowledge_answers (
      id         SERIAL PRIMARY KEY,
      agent_id   INTEGER NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
      question   TEXT NOT NULL,
      answer     TEXT NOT NULL,
      gap_id     INTEGER,
      created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
      updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`CREATE UNIQUE INDEX knowledge_answers_gap_idx ON knowledge_answers (gap_id) WHERE gap_id IS NOT NULL`.execute(db);
  await sql`CREATE INDEX knowledge_answers_agent_idx ON knowledge_answers (agent_id)`.execute(db);

  // Questions the agent could not answer, grouped by meaning (`terms`: the question's stemmed words).
  await sql`
    CREATE TABLE knowledge_gaps (
      id                   SERIAL PRIMARY KEY,
      agent_id             INTEGER NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
      question             TEXT NOT NULL,
      terms                TEXT[] NOT NULL,
      status               TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'answered', 'dismissed')),
      times_asked          INTEGER NOT NULL DEFAULT 1,
      first_asked_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
      last_asked_at        TIMESTAMPTZ NOT NULL DEFAULT now(),
      last_conversation_id TEXT,
      answer               TEXT,
      resolved_at          TIMESTAMPTZ
    )`.execute(db);
  await sql`CREATE INDEX knowledge_gaps_agent_idx ON knowledge_gaps (agent_id, status, last_asked_at DESC)`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
