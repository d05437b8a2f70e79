import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  // The wallet's ledger: every charge and credit as an immutable entry in integer cents (signed:
  // charges negative, credits positive). accounts.balance_cents is the running sum of an account's
  // entries, written in the same transaction as each entry under the account's row lock.
  await sql`
    CREATE TABLE ledger_entries (
      id             BIGSERIAL PRIMARY KEY,
      account_id     INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
      kind           TEXT NOT NULL CHECK (kind IN ('session', 'premium_voice', 'topup', 'adjustment')),
      amount_cents   BIGINT NOT NULL,
      session_id     UUID,
      agent_id       INTEGER,
      voice_provider TEXT,
      seconds        INTEGER NOT NULL DEFAULT 0,
      -- A top-up's Stripe Checkout Session id: one credit per checkout, however often confirmed.
      reference      TEXT,
      note           TEXT,
      month          TEXT NOT NULL,
      created_at     TIMESTAMPTZ NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`CREATE UNIQUE INDEX ledger_topup_reference_idx ON ledger_entries (reference) WHERE kind = 'topup'`.execute(db);
  await sql`CREATE INDEX ledger_account_month_idx ON ledger_entries (account_id, month, id)`.execute(db);
  await sql`CREATE INDEX ledger_session_idx ON ledger_entries (session_id) WHERE session_id IS NOT NULL`.execute(db);
  // Rules that make the entries immutable: the ledger is only ever appended to.
  await sql`CREATE RULE ledger_entries_no_update AS ON UPDATE TO ledger_entries DO INSTEAD NOTHING`.execute(db);
  await sql`CREATE RULE ledger_entries_no_delete AS ON DELETE TO ledger_entries DO INSTEAD NOTHING`.execute(db);

  // Balances held before the ledger existed become its opening entries, so balance = sum holds.
  await sql`
    INSERT INTO ledger_entries (account_id, kind, amount_cents, note, month)
    SELECT id, 'adjustment', balance_cents, 'opening balance', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM')
    FROM accounts WHERE balance_cents <> 0`.execute(db);
  await sql`UPDATE accounts SET balance_cents = 0 WHERE balance_cents < 0`.execute(db);
  await sql`ALTER TABLE accounts ADD CONSTRAINT accounts_balance_not_negative CHECK (balance_cents >= 0)`.execute(db);

  // Billing's meter of each session: seconds and premium speech charged so far (the watermark that
  // makes charging idempotent), what the plan was when it started, and the cents actually taken.
  await sql`
    CREATE TABLE billing_sessions (
      session_id            UUID PRIMARY KEY,
      account_id            INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
      agent_id              INTEGER NOT NULL,
      plan                  TEXT NOT NULL CHECK (plan IN ('free', 'paid')),
      voice_provider        TEXT NOT NULL,
      premium               BOOLEAN NOT NULL,
      started_at            TIMESTAMPTZ NOT NULL,
      ended_at              TIMESTAMPTZ,
      end_reason            TEXT,
      seconds               INTEGER NOT NULL DEFAULT 0,
      voiced_ms             BIGINT NOT NULL DEFAULT 0,
      voice_seconds         INTEGER NOT NULL DEFAULT 0,
      charged_cents         BIGINT NOT NULL DEFAULT 0,
      month                 TEXT NOT NULL
    )`.execute(db);
  await sql`CREATE INDEX billing_sessions_account_month_idx ON billing_sessions (account_id, month)`.execute(db);
  await sql`CREATE INDEX billing_sessions_open_idx ON billing_sessions (account_id) WHERE ended_at IS NULL`.execute(db);

  // Stripe: the account's customer, and each Checkout Session a top-up opened.
  await sql`
    CREATE TABLE billing_customers (
      account_id         INTEGER PRIMARY KEY REFERENCES accounts(id) ON DELETE CASCADE,
      stripe_customer_id TEXT NOT NULL UNIQUE,
      created_at         TIMESTAMPTZ NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`
    CREATE TABLE billing_checkouts (
      id           TEXT PRIMARY KEY,
      account_id   INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
      amount_cents BIGINT NOT NULL,
      status       TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'credited', 'expired')),
      created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
      credited_at  TIMESTAMPTZ
    )`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
