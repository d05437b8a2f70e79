import { sql, type Kysely } from 'kysely';

/**
 * Several nodes on one PostgreSQL (issue 29): each running `presence serve` registers itself with
 * its internal address (NODE_URL) and keeps a lease; each session records the node that started it
 * (its owner), so a socket arriving at another node is forwarded there, and the sessions of a node
 * whose lease ran out are ended by the others (`node_lost`). NULL owner: started on the embedded
 * database or before this migration; such sessions are handled as before.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE nodes (
      id          TEXT PRIMARY KEY,
      url         TEXT NOT NULL,
      started_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
      lease_until TIMESTAMPTZ NOT NULL,
      stopped_at  TIMESTAMPTZ
    )`.execute(db);
  await sql`ALTER TABLE sessions ADD COLUMN node_id TEXT`.execute(db);
  await sql`CREATE INDEX sessions_node_active_idx ON sessions (node_id) WHERE status = 'active'`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
