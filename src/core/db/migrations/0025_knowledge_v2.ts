import { sql, type Kysely } from 'kysely';

/**
 * Knowledge version 2 (contract "Knowledge, version 2"): the schema of questions a business must
 * answer, facts with their sources, review items, correction previews, and per agent the behavior,
 * the dynamic instructions and the texts the owner overruled (never said again, never re-extracted).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE knowledge_questions (
      id         SERIAL PRIMARY KEY,
      agent_id   INTEGER NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
      key        TEXT NOT NULL,
      question   TEXT NOT NULL,
      topic      TEXT NOT NULL,
      state      TEXT NOT NULL DEFAULT 'needed' CHECK (state IN ('needed', 'not_applicable', 'skipped')),
      position   INTEGER NOT NULL DEFAULT 0,
      created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
      UNIQUE (agent_id, key)
    )`.execute(db);

  // sources: [{"kind": "page"|"kb_section"|"owner"|"correction"|"gap", "ref", "url"?}]; origin: the
  // words of the page or section it was first read from (to find and silence them once overruled).
  await sql`
    CREATE TABLE knowledge_facts (
      id          SERIAL PRIMARY KEY,
      agent_id    INTEGER NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
      question_id INTEGER REFERENCES knowledge_questions(id) ON DELETE SET NULL,
      text        TEXT NOT NULL,
      sources     JSONB NOT NULL DEFAULT '[]'::jsonb,
      confidence  REAL NOT NULL DEFAULT 1,
      origin      TEXT,
      orphan      BOOLEAN NOT NULL DEFAULT false,
      created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
      updated_at  TIMESTAMPTZ NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`CREATE INDEX knowledge_facts_agent_idx ON knowledge_facts (agent_id, id)`.execute(db);

  await sql`
    CREATE TABLE knowledge_reviews (
      id          SERIAL PRIMARY KEY,
      agent_id    INTEGER NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
      question_id INTEGER REFERENCES knowledge_questions(id) ON DELETE CASCADE,
      fact_ids    INTEGER[] NOT NULL,
      created_at  TIMESTAMPTZ NOT NULL DEFAULT now()
    )`.execute(db);

  await sql`
    CREATE TABLE knowledge_previews (
      id         TEXT PRIMARY KEY,
      agent_id   INTEGER NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
      text       TEXT NOT NULL,
      changes    JSONB NOT NULL,
      created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
      expires_at TIMESTAMPTZ NOT NULL,
      applied_at TIMESTAMPTZ
    )`.execute(db);

  await sql`
    CREATE TABLE knowledge_settings (
      agent_id             INTEGER PRIMARY KEY REFERENCES agents(id) ON DELETE CASCADE,
      behavior             JSONB NOT NULL DEFAULT '{}'::jsonb,
      dynamic_instructions TEXT NOT NULL DEFAULT '',
      business_type        TEXT,
      overruled            JSONB NOT NULL DEFAULT '[]'::jsonb,
      updated_at           TIMESTAMPTZ NOT NULL DEFAULT now()
    )`.execute(db);

  // Which v2 build step a queued build runs after reading (schema, extract, recompile).
  await sql`ALTER TABLE knowledge_brains ADD COLUMN v2_step TEXT`.execute(db);

  // Gap answers given before version 2 become facts with source gap.
  await sql`
    INSERT INTO knowledge_facts (agent_id, text, sources)
    SELECT agent_id, answer, jsonb_build_array(jsonb_build_object('kind', 'gap', 'ref', gap_id))
    FROM knowledge_answers WHERE gap_id IS NOT NULL ORDER BY id`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
