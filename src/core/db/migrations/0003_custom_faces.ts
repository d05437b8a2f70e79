import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  // Faces added by operators (account_id NULL: every account sees them) or by an account through
  // the API. The GLB itself is stored here, so it survives restarts and every node can serve it.
  await sql`
    CREATE TABLE custom_faces (
      avatar_id        TEXT PRIMARY KEY,
      account_id       INTEGER REFERENCES accounts(id) ON DELETE CASCADE,
      name             TEXT NOT NULL,
      gender           TEXT NOT NULL CHECK (gender IN ('f', 'm')),
      description      TEXT NOT NULL DEFAULT '',
      default_voice_id TEXT NOT NULL,
      morphs           TEXT[] NOT NULL,
      size_bytes       INTEGER NOT NULL,
      sha256           TEXT NOT NULL,
      glb              BYTEA NOT NULL,
      created_at       TIMESTAMPTZ NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`CREATE INDEX custom_faces_account_idx ON custom_faces (account_id)`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
