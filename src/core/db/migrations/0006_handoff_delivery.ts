import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  // The delivery engine (src/delivery): one row per signed delivery, whoever owns it (a handoff
  // rule, a notification destination). `id` is the X-Service-Delivery id, the same on every attempt.
  // `dedupe_key` makes "one delivery per rule and conversation" hold when an ended-conversation job
  // runs twice. The secret is kept so a delivery can be signed after a restart even when its owner
  // cannot say (the owner's current secret wins when it can).
  await sql`
    CREATE TABLE deliveries (
      id              UUID PRIMARY KEY,
      account_id      INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
      owner_kind      TEXT NOT NULL,
      owner_id        TEXT NOT NULL,
      dedupe_key      TEXT UNIQUE,
      conversation_id TEXT,
      kind            TEXT NOT NULL CHECK (kind IN ('event', 'test')),
      url             TEXT NOT NULL,
      method          TEXT NOT NULL CHECK (method IN ('POST', 'GET')),
      content_type    TEXT,
      headers         JSONB NOT NULL DEFAULT '{}'::jsonb,
      payload         TEXT NOT NULL,
      secret          TEXT NOT NULL,
      user_agent      TEXT NOT NULL,
      status          TEXT NOT NULL CHECK (status IN ('pending', 'retrying', 'delivered', 'failed')),
      attempts        INTEGER NOT NULL DEFAULT 0,
      -- Attempts made before the current schedule began (a replay starts the schedule again).
      round_start     INTEGER NOT NULL DEFAULT 0,
      next_attempt_at TIMESTAMPTZ,
      last_error      TEXT,
      created_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
      updated_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
      finished_at     TIMESTAMPTZ
    )`.execute(db);
  await sql`CREATE INDEX deliveries_owner_idx ON deliveries (owner_kind, owner_id, created_at DESC, id)`.execute(db);
  await sql`CREATE INDEX deliveries_finished_idx ON deliveries (finished_at) WHERE finished_at IS NOT NULL`.execute(db);

  await sql`
    CREATE TABLE delivery_attempts (
      id               BIGSERIAL PRIMARY KEY,
      delivery_id      UUID NOT NULL REFERENCES deliveries(id) ON DELETE CASCADE,
      number           INTEGER NOT NULL,
      at               TIMESTAMPTZ NOT NULL,
      status_code      INTEGER,
      error            TEXT,
      duration_ms      INTEGER NOT NULL,
      response_excerpt TEXT,
      UNIQUE (delivery_id, number)
    )`.execute(db);

  // Data-handoff rules (src/handoff): the contract's v2/rules shape. `consecutive_failures` counts
  // failed deliveries in a row (10 pause the rule; a delivered one resets it).
  await sql`
    CREATE TABLE handoff_rules (
      id                   SERIAL PRIMARY KEY,
      account_id           INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
      agent_id             INTEGER NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
      name                 TEXT NOT NULL,
      details              JSONB NOT NULL DEFAULT '[]'::jsonb,
      destination          JSONB NOT NULL,
      enabled              BOOLEAN NOT NULL DEFAULT true,
      state                TEXT NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'needs_attention', 'paused')),
      secret               TEXT NOT NULL,
      consecutive_failures INTEGER NOT NULL DEFAULT 0,
      created_at           TIMESTAMPTZ NOT NULL DEFAULT now(),
      updated_at           TIMESTAMPTZ NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`CREATE INDEX handoff_rules_agent_idx ON handoff_rules (agent_id, id)`.execute(db);

  // The details found in one ended conversation, kept so a retried job does not ask the model again.
  await sql`
    CREATE TABLE handoff_findings (
      conversation_id UUID PRIMARY KEY,
      agent_id        INTEGER NOT NULL,
      found           JSONB NOT NULL,
      engine          TEXT NOT NULL,
      created_at      TIMESTAMPTZ NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`CREATE INDEX handoff_findings_created_idx ON handoff_findings (created_at)`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
