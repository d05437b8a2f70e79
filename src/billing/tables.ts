/**
 * Row types of billing's tables (migration 0007), added to the shared `Database` interface by
 * declaration merging so that billing's storage stays described inside billing.
 */
import type { ColumnType, Generated } from 'kysely';

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;

export type LedgerKind = 'session' | 'premium_voice' | 'topup' | 'adjustment';

export interface LedgerEntriesTable {
  id: Generated<string>;
  account_id: number;
  kind: LedgerKind;
  /** Signed cents: charges negative, credits positive. BIGINT, read as a string by pg. */
  amount_cents: ColumnType<string | number, number, never>;
  session_id: string | null;
  agent_id: number | null;
  voice_provider: string | null;
  seconds: ColumnType<number, number | undefined, never>;
  reference: string | null;
  note: string | null;
  month: string;
  created_at: ColumnType<Date, Date | string | undefined, never>;
}

export interface BillingSessionsTable {
  session_id: string;
  account_id: number;
  agent_id: number;
  plan: 'free' | 'paid';
  voice_provider: string;
  premium: boolean;
  started_at: Timestamp;
  ended_at: Timestamp | null;
  end_reason: string | null;
  seconds: Generated<number>;
  voiced_ms: ColumnType<string | number, number | undefined, number>;
  voice_seconds: Generated<number>;
  charged_cents: ColumnType<string | number, number | undefined, number>;
  month: string;
}

export interface BillingCustomersTable {
  account_id: number;
  stripe_customer_id: string;
  created_at: Generated<Date>;
}

export interface BillingCheckoutsTable {
  id: string;
  account_id: number;
  amount_cents: ColumnType<string | number, number, number>;
  status: Generated<'open' | 'credited' | 'expired'>;
  created_at: Generated<Date>;
  credited_at: Timestamp | null;
}

declare module '../core/db/schema.js' {
  interface Database {
    ledger_entries: LedgerEntriesTable;
    billing_sessions: BillingSessionsTable;
    billing_customers: BillingCustomersTable;
    billing_checkouts: BillingCheckoutsTable;
  }
}
