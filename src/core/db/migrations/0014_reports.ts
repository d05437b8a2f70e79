import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  // The data handoffs delivered for a conversation (rule ids, each once however often a job
  // reruns), written through the handoff capability's delivered hook; the reports count them.
  await sql`ALTER TABLE conversations ADD COLUMN handoffs_delivered TEXT[] NOT NULL DEFAULT '{}'`.execute(db);
  // The reports' notif_category filter.
  await sql`CREATE INDEX conversations_categories_idx ON conversations USING GIN (categories)`.execute(db);
  // "Gaps found" in the reports' stats: the few agent turns that raised a knowledge gap.
  await sql`CREATE INDEX conversation_turns_gap_idx ON conversation_turns (conversation_id) WHERE details ? 'gap_id'`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
