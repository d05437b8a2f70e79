/**
 * The wallet's ledger: the only way an account's balance moves. Each change is an immutable entry
 * in integer cents, and `accounts.balance_cents` is the running sum of the account's entries,
 * updated in the same transaction under the account's row lock, so concurrent sessions on any
 * engine or node never lose a charge or take the balance below zero (the table's CHECK refuses it too).
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../core/db/schema.js';
import type { LedgerKind } from './tables.js';
import { monthOf } from '../core/money.js';
import './tables.js';

type Executor = Kysely<Database> | Transaction<Database>;

export interface EntryInput {
  accountId: number;
  kind: LedgerKind;
  /** Signed cents: negative for charges. */
  amountCents: number;
  sessionId?: string | null;
  agentId?: number | null;
  voiceProvider?: string | null;
  seconds?: number;
  reference?: string | null;
  note?: string | null;
}

/** Locks the account row and answers its balance in cents (undefined: no such account). */
export async function lockBalance(trx: Transaction<Database>, accountId: number): Promise<number | undefined> {
  const row = await trx.selectFrom('accounts').select('balance_cents').where('id', '=', accountId).forUpdate().executeTakeFirst();
  return row ? Number(row.balance_cents) : undefined;
}

/**
 * Appends one entry and moves the balance by its amount, inside `trx` (which must hold the account
 * row lock when the amount could take the balance below zero). Answers the new balance.
 */
export async function postEntry(trx: Executor, entry: EntryInput): Promise<number> {
  const row = entryRow(entry, new Date());
  await trx.insertInto('ledger_entries').values(row).execute();
  const account = await trx
    .updateTable('accounts')
    .set({ balance_cents: sql`balance_cents + ${row.amount_cents}` })
    .where('id', '=', entry.accountId)
    .returning('balance_cents')
    .executeTakeFirstOrThrow();
  return Number(account.balance_cents);
}

/** The ledger row of an entry posted at `now`. */
function entryRow(entry: EntryInput, now: Date) {
  return {
    account_id: entry.accountId,
    kind: entry.kind,
    amount_cents: Math.trunc(entry.amountCents),
    session_id: entry.sessionId ?? null,
    agent_id: entry.agentId ?? null,
    voice_provider: entry.voiceProvider ?? null,
    seconds: Math.max(0, Math.trunc(entry.seconds ?? 0)),
    reference: entry.reference ?? null,
    note: entry.note ?? null,
    month: monthOf(now),
    created_at: now,
  };
}

/**
 * Appends entries (one statement) and moves each account's balance by their sum, inside `trx`,
 * which must hold the accounts' row locks and have checked that no balance goes below zero.
 */
export async function postEntries(trx: Transaction<Database>, entries: EntryInput[]): Promise<void> {
  if (!entries.length) return;
  const now = new Date();
  for (let i = 0; i < entries.length; i += 500) {
    await trx
      .insertInto('ledger_entries')
      .values(entries.slice(i, i + 500).map((entry) => entryRow(entry, now)))
      .execute();
  }
  const sums = new Map<number, number>();
  for (const entry of entries) sums.set(entry.accountId, (sums.get(entry.accountId) ?? 0) + Math.trunc(entry.amountCents));
  for (const [accountId, amount] of sums) {
    if (amount !== 0)
      await trx
        .updateTable('accounts')
        .set({ balance_cents: sql`balance_cents + ${amount}` })
        .where('id', '=', accountId)
        .execute();
  }
}

/** Sets the balance to `targetCents` by one adjustment entry (operator credit). */
export async function adjustTo(db: Kysely<Database>, accountId: number, targetCents: number, note: string): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const current = await lockBalance(trx, accountId);
    if (current === undefined) return 0;
    if (current === targetCents) return current;
    return postEntry(trx, { accountId, kind: 'adjustment', amountCents: targetCents - current, note });
  });
}

/** The balance recomputed from the entries (what `accounts.balance_cents` must always equal). */
export async function sumOfEntries(db: Executor, accountId: number): Promise<number> {
  const row = await db
    .selectFrom('ledger_entries')
    .select(sql<string>`COALESCE(SUM(amount_cents), 0)`.as('sum'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  return Number(row.sum);
}
