/** The console inbox: notifications kept per account (the newest RULE_LIMITS.inboxPerAccount), read or unread. */
import { sql, type Kysely } from 'kysely';
import type { Db } from '../core/db/database.js';
import type { Database } from '../core/db/schema.js';
import { itemView } from './texts.js';
import { RULE_LIMITS, type InboxPost, type NotificationItem } from './types.js';

export interface NotificationValues {
  account_id: number;
  agent_id: number;
  agent_name: string;
  conversation_id: string | null;
  rule_id: number | null;
  source: string;
  dedupe_key: string;
  category: string;
  title: string;
  body: string;
}

export class Inbox {
  constructor(private readonly db: Db) {}

  async list(
    accountId: number,
    filters: { status: 'all' | 'unread'; agent_id?: number; category?: string; limit: number; offset: number },
  ): Promise<{ items: NotificationItem[]; total: number; unread: number; limit: number; offset: number }> {
    let query = this.db.selectFrom('notifications').where('account_id', '=', accountId);
    if (filters.agent_id !== undefined) query = query.where('agent_id', '=', filters.agent_id);
    if (filters.category) query = query.where('category', '=', filters.category);
    const unreadQuery = query.where('read_at', 'is', null);
    if (filters.status === 'unread') query = query.where('read_at', 'is', null);
    const [rows, total, unread] = await Promise.all([
      query.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(filters.limit).offset(filters.offset).execute(),
      query.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
      unreadQuery.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { items: rows.map(itemView), total: Number(total.n), unread: Number(unread.n), limit: filters.limit, offset: filters.offset };
  }

  async unreadCount(accountId: number, agentId?: number): Promise<{ unread: number }> {
    let query = this.db.selectFrom('notifications').where('account_id', '=', accountId).where('read_at', 'is', null);
    if (agentId !== undefined) query = query.where('agent_id', '=', agentId);
    const { n } = await query.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
    return { unread: Number(n) };
  }

  async markRead(accountId: number, request: { ids?: number[]; all?: boolean; agent_id?: number }): Promise<{ marked: number; unread: number }> {
    let update = this.db.updateTable('notifications').set({ read_at: new Date() }).where('account_id', '=', accountId).where('read_at', 'is', null);
    if (request.ids) update = update.where('id', 'in', request.ids.map(String));
    if (request.agent_id !== undefined) update = update.where('agent_id', '=', request.agent_id);
    const result = await update.executeTakeFirst();
    return { marked: Number(result.numUpdatedRows ?? 0), ...(await this.unreadCount(accountId)) };
  }

  /** Inserts a notification once per key; keeps the newest RULE_LIMITS.inboxPerAccount. */
  async insert(trx: Kysely<Database>, values: NotificationValues): Promise<string | undefined> {
    const row = await trx
      .insertInto('notifications')
      .values(values)
      .onConflict((oc) => oc.columns(['account_id', 'dedupe_key']).doNothing())
      .returning('id')
      .executeTakeFirst();
    if (!row) return undefined;
    // Ordered as the inbox index is (account, created_at, id), so the bound costs one index walk.
    await sql`DELETE FROM notifications WHERE account_id = ${values.account_id} AND (created_at, id) <= (
      SELECT created_at, id FROM notifications WHERE account_id = ${values.account_id} ORDER BY created_at DESC, id DESC OFFSET ${RULE_LIMITS.inboxPerAccount} LIMIT 1)`.execute(
      trx,
    );
    return row.id;
  }

  async post(post: InboxPost): Promise<{ id: number; created: boolean }> {
    const values = {
      account_id: post.accountId,
      agent_id: post.agentId,
      agent_name: post.agentName,
      conversation_id: post.conversationId ?? null,
      rule_id: null,
      source: 'handoff',
      dedupe_key: `post:${post.key}`,
      category: post.category ?? 'handoff',
      title: post.title.slice(0, 200),
      body: post.body.slice(0, 10_000),
    };
    const id = await this.db.transaction().execute((trx) => this.insert(trx, values));
    if (id) return { id: Number(id), created: true };
    const existing = await this.db
      .selectFrom('notifications')
      .select('id')
      .where('account_id', '=', post.accountId)
      .where('dedupe_key', '=', values.dedupe_key)
      .executeTakeFirstOrThrow();
    return { id: Number(existing.id), created: false };
  }
}
