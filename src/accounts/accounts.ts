/** Accounts (plan and wallet balance) and their API keys. */
import type { Db } from '../core/db/database.js';
import { API_KEY_PREFIX, PERMISSIONS, type KeyLookup, type Permission } from '../core/auth.js';
import { randomToken, sha256Hex } from '../core/secrets.js';
import { ReadCache } from '../core/read-cache.js';
import { accountsErrors } from './errors.js';

export type Plan = 'free' | 'paid';

export interface Account {
  id: number;
  name: string;
  plan: Plan;
  /** Wallet balance as a decimal string with two places, e.g. "25.00". */
  balance: string;
  default_agent_id: number | null;
  created_at: string;
}

export function centsToDecimal(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

export function decimalToCents(value: string): number {
  if (!/^-?\d{1,10}(\.\d{1,2})?$/.test(value)) throw accountsErrors.invalid_balance(`balance must be a decimal amount like 25.00, got "${value}"`);
  const [whole, frac = ''] = value.replace('-', '').split('.');
  const cents = Number(whole) * 100 + Number(frac.padEnd(2, '0'));
  return value.startsWith('-') ? -cents : cents;
}

function toAccount(row: { id: number; name: string; plan: Plan; balance_cents: number; default_agent_id: number | null; created_at: Date }): Account {
  return {
    id: row.id,
    name: row.name,
    plan: row.plan,
    balance: centsToDecimal(Number(row.balance_cents)),
    default_agent_id: row.default_agent_id,
    created_at: new Date(row.created_at).toISOString(),
  };
}

/** `sk_live_` and eight more characters: enough to tell an account's keys apart, far too few to guess the rest. */
const KEY_PREFIX_LENGTH = 16;

export interface ApiKeyInfo {
  id: number;
  name: string | null;
  prefix: string;
  permissions: Permission[];
  created_at: string;
  last_used_at: string | null;
}

const negativeBalance = () => accountsErrors.invalid_balance('balance cannot be negative');

/**
 * Moves an account's balance to `targetCents` through the wallet's ledger (billing's), returning the
 * new balance. Passed in by the composition root: billing sits above accounts and owns the ledger.
 */
export type BalanceSetter = (db: Db, accountId: number, targetCents: number, note: string) => Promise<number>;

export class AccountStore implements KeyLookup {
  private readonly cache: ReadCache<number, Account>;

  /** `cached`: keep accounts in memory (only when this process is the database's sole writer). */
  constructor(
    private readonly db: Db,
    private readonly setBalance: BalanceSetter,
    cached = false,
  ) {
    this.cache = new ReadCache(cached);
  }

  async get(id: number): Promise<Account | undefined> {
    const hit = this.cache.get(id);
    if (hit) return hit;
    const row = await this.db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
    return row && this.cache.set(id, toAccount(row));
  }

  /** Drops a cached account after a write made outside this store (e.g. in a transaction). */
  forget(id: number): void {
    this.cache.delete(id);
  }

  async require(id: number): Promise<Account> {
    const account = await this.get(id);
    if (!account) throw accountsErrors.account_not_found(`account ${id} not found`);
    return account;
  }

  /** The oldest account's id (the first start's `default`), or undefined with none. */
  async firstAccountId(): Promise<number | undefined> {
    const row = await this.db.selectFrom('accounts').select('id').orderBy('id').limit(1).executeTakeFirst();
    return row?.id;
  }

  async count(): Promise<number> {
    const row = await this.db
      .selectFrom('accounts')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async create(input: { name: string; plan: Plan; balanceCents?: number }): Promise<Account> {
    if (input.balanceCents !== undefined && input.balanceCents < 0) throw negativeBalance();
    const row = await this.db.insertInto('accounts').values({ name: input.name, plan: input.plan, balance_cents: 0 }).returningAll().executeTakeFirstOrThrow();
    // The opening balance is an operator credit: an adjustment entry in the wallet's ledger.
    if (input.balanceCents) row.balance_cents = await this.setBalance(this.db, row.id, input.balanceCents, 'opening balance');
    return toAccount(row);
  }

  async update(id: number, changes: { plan?: Plan; balanceCents?: number; name?: string }): Promise<Account> {
    const values: Record<string, unknown> = {};
    if (changes.plan) values.plan = changes.plan;
    if (changes.name) values.name = changes.name;
    if (changes.balanceCents !== undefined) {
      if (changes.balanceCents < 0) throw negativeBalance();
      await this.require(id);
      // Setting a balance is an operator credit (or debit): one adjustment entry for the difference.
      await this.setBalance(this.db, id, changes.balanceCents, 'operator set the balance');
      this.cache.delete(id);
    }
    if (Object.keys(values).length === 0) return (await this.get(id)) ?? this.require(id);
    const row = await this.db.updateTable('accounts').set(values).where('id', '=', id).returningAll().executeTakeFirst();
    this.cache.delete(id);
    if (!row) throw accountsErrors.account_not_found(`account ${id} not found`);
    return toAccount(row);
  }

  async setDefaultAgent(accountId: number, agentId: number | null): Promise<void> {
    await this.db.updateTable('accounts').set({ default_agent_id: agentId }).where('id', '=', accountId).execute();
    this.cache.delete(accountId);
  }

  /** Called with a key's id once it is revoked (the authenticator's cache, console sign-ins made with it). */
  readonly onKeyRevoked: Array<(keyId: number) => void | Promise<void>> = [];

  /** Creates a key and returns it in clear text: the only time it is ever seen. */
  async createKey(
    accountId: number,
    permissions: Permission[],
    name?: string,
  ): Promise<{ key: string; permissions: Permission[]; account_id: number; id: number; name: string | null; prefix: string; created_at: string }> {
    await this.require(accountId);
    const unknown = permissions.filter((p) => !PERMISSIONS.includes(p));
    if (unknown.length || permissions.length === 0) {
      throw accountsErrors.invalid_permissions(`permissions must be a non-empty subset of ${PERMISSIONS.join(',')}`);
    }
    const ordered = PERMISSIONS.filter((p) => permissions.includes(p));
    const key = randomToken(API_KEY_PREFIX, 32);
    const row = await this.db
      .insertInto('api_keys')
      .values({
        account_id: accountId,
        key_hash: sha256Hex(key),
        key_hint: key.slice(0, KEY_PREFIX_LENGTH),
        permissions: ordered,
        revoked_at: null,
        name: name ?? null,
      })
      .returning(['id', 'created_at'])
      .executeTakeFirstOrThrow();
    return {
      key,
      permissions: ordered,
      account_id: accountId,
      id: row.id,
      name: name ?? null,
      prefix: key.slice(0, KEY_PREFIX_LENGTH),
      created_at: new Date(row.created_at).toISOString(),
    };
  }

  /** The account's live keys, oldest first: never the secret, only its first characters. */
  async listKeys(accountId: number): Promise<ApiKeyInfo[]> {
    const rows = await this.db
      .selectFrom('api_keys')
      .select(['id', 'name', 'key_hint', 'permissions', 'created_at', 'last_used_at'])
      .where('account_id', '=', accountId)
      .where('revoked_at', 'is', null)
      .orderBy('id')
      .execute();
    return rows.map((r) => ({
      id: r.id,
      name: r.name,
      prefix: r.key_hint,
      permissions: PERMISSIONS.filter((p) => (r.permissions as string[]).includes(p)),
      created_at: new Date(r.created_at).toISOString(),
      last_used_at: r.last_used_at ? new Date(r.last_used_at).toISOString() : null,
    }));
  }

  /** Revokes one of the account's keys; another account's, unknown or already revoked: 404. */
  async revokeKey(accountId: number, keyId: number): Promise<void> {
    const row = await this.db
      .updateTable('api_keys')
      .set({ revoked_at: new Date() })
      .where('id', '=', keyId)
      .where('account_id', '=', accountId)
      .where('revoked_at', 'is', null)
      .returning('id')
      .executeTakeFirst();
    if (!row) throw accountsErrors.key_not_found(`API key ${keyId} not found`);
    for (const hook of this.onKeyRevoked) await hook(keyId);
  }

  /** Records that a key was used just now (the authenticator calls this at most once a minute per key). */
  async touchKey(keyId: number): Promise<void> {
    await this.db.updateTable('api_keys').set({ last_used_at: new Date() }).where('id', '=', keyId).execute();
  }

  async findByHash(hash: string) {
    const row = await this.db
      .selectFrom('api_keys')
      .select(['id', 'account_id', 'permissions'])
      .where('key_hash', '=', hash)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return row ? { id: row.id, accountId: row.account_id, permissions: row.permissions as Permission[] } : undefined;
  }
}

/**
 * First start with an empty database: the `default` account (paid, 100.00) and one key with all
 * four permissions, returned so the caller can print it once.
 */
export async function bootstrap(store: AccountStore): Promise<{ account: Account; key: string } | undefined> {
  if ((await store.count()) > 0) return undefined;
  const account = await store.create({ name: 'default', plan: 'paid', balanceCents: 10_000 });
  const { key } = await store.createKey(account.id, [...PERMISSIONS]);
  return { account, key };
}
