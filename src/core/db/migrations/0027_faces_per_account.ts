import { sql, type Kysely } from 'kysely';

/**
 * Uploaded faces belong to their account (issue 27, item 6): an avatar_id is unique within an
 * account (operator faces, account NULL, among themselves), not across accounts, so one account's
 * ids cannot be probed by uploading them. Each face's file is served at an unguessable address,
 * `/assets/faces/<file_token>.glb`, which only the owning account's API and its sessions show.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE custom_faces ADD COLUMN file_token TEXT`.execute(db);
  // gen_random_uuid draws from the database's strong random source (122 random bits).
  await sql`UPDATE custom_faces SET file_token = 'cf' || replace(gen_random_uuid()::text, '-', '')`.execute(db);
  await sql`ALTER TABLE custom_faces ALTER COLUMN file_token SET NOT NULL`.execute(db);
  await sql`CREATE UNIQUE INDEX custom_faces_file_token_idx ON custom_faces (file_token)`.execute(db);
  await sql`ALTER TABLE custom_faces DROP CONSTRAINT custom_faces_pkey`.execute(db);
  await sql`CREATE UNIQUE INDEX custom_faces_owner_avatar_idx ON custom_faces (COALESCE(account_id, 0), avatar_id)`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
