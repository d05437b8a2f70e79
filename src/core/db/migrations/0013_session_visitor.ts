import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  // The visitor a session talks to: the anonymous (or site-given) visitor id and the verified
  // visitor values passed when it started (`{{visitor.<name>}}`), so the conversation and its
  // records know them from the first turn, on every node.
  await sql`ALTER TABLE sessions ADD COLUMN visitor_id TEXT`.execute(db);
  await sql`ALTER TABLE sessions ADD COLUMN visitor JSONB NOT NULL DEFAULT '{}'::jsonb`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
