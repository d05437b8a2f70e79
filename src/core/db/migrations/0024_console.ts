import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  // API keys made in the console (or by POST /v1/keys) carry a name, and every key shows when it
  // was last used (GET /v1/keys).
  await sql`ALTER TABLE api_keys ADD COLUMN name TEXT`.execute(db);
  await sql`ALTER TABLE api_keys ADD COLUMN last_used_at TIMESTAMPTZ`.execute(db);
  // One-time sign-in links (`presence console-link`, and the first start's link): only the hash
  // of the token is kept; `used_at` makes the second opening fail.
  await sql`
    CREATE TABLE console_links (
      id SERIAL PRIMARY KEY,
      account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
      token_hash TEXT NOT NULL UNIQUE,
      expires_at TIMESTAMPTZ NOT NULL,
      used_at TIMESTAMPTZ,
      created_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )`.execute(db);
  // Console sign-ins: the browser holds the token in an HttpOnly cookie, the server its hash and
  // the permissions of what it came from (a link: all four; a key: that key's, ended with it).
  await sql`
    CREATE TABLE console_sessions (
      id SERIAL PRIMARY KEY,
      account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
      token_hash TEXT NOT NULL UNIQUE,
      permissions TEXT[] NOT NULL,
      key_id INTEGER,
      created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
      expires_at TIMESTAMPTZ NOT NULL,
      ended_at TIMESTAMPTZ
    )`.execute(db);
  await sql`CREATE INDEX console_sessions_key_idx ON console_sessions (key_id) WHERE key_id IS NOT NULL`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
