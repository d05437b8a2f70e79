/**
 * The read side of the conversation records, for the reports (src/reports): filtered pages,
 * aggregates, one conversation with its turns, and a keyset walk for exports. Reports never read
 * these tables themselves; app.ts hands them this object.
 *
 * A running conversation's duration is the time since it began (its record has none yet), so a
 * "minimum duration" filter and the minutes agree with what the list shows.
 */
import { sql, type SelectQueryBuilder } from 'kysely';
import type { Db } from '../core/db/database.js';
import type { Database } from '../core/db/schema.js';

/** Which conversations of one account; every field but the account is optional. */
export interface ConversationFilter {
  accountId: number;
  /** Started at or after. */
  from?: Date;
  /** Started strictly before. */
  before?: Date;
  agentId?: number;
  visitorId?: string;
  minDurationSeconds?: number;
  /** Words of the transcript (web-search syntax: words, "a phrase", -not, or). */
  words?: string;
  /** A notification category the conversation raised. */
  category?: string;
}

export interface ConversationRow {
  id: string;
  agent_id: number;
  agent_name: string;
  mode: 'conversation' | 'render';
  visitor_id: string | null;
  started_at: Date;
  ended_at: Date | null;
  duration_seconds: number;
  end_reason: string | null;
  visitor_turns: number;
  agent_turns: number;
  categories: string[];
  handoffs_delivered: number;
}

export interface TurnRow {
  id: number;
  role: 'visitor' | 'agent';
  text: string;
  at: Date;
  language: string | null;
  details: Record<string, unknown>;
}

export interface ConversationTotals {
  conversations: number;
  running: number;
  seconds: number;
  visitorTurns: number;
  agentTurns: number;
  handoffsDelivered: number;
  first: Date | null;
  last: Date | null;
}

export interface AgentTotals extends ConversationTotals {
  agentId: number;
  agentName: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DURATION = sql<number>`COALESCE(duration_seconds, GREATEST(0, EXTRACT(EPOCH FROM (now() - started_at))))`;

type ConversationsQuery<O> = SelectQueryBuilder<Database, 'conversations', O>;

function filtered<O>(query: ConversationsQuery<O>, filter: ConversationFilter): ConversationsQuery<O> {
  let q = query.where('account_id', '=', filter.accountId);
  if (filter.from) q = q.where('started_at', '>=', filter.from);
  if (filter.before) q = q.where('started_at', '<', filter.before);
  if (filter.agentId !== undefined) q = q.where('agent_id', '=', filter.agentId);
  if (filter.visitorId !== undefined) q = q.where('visitor_id', '=', filter.visitorId);
  if (filter.minDurationSeconds !== undefined) q = q.where(sql<boolean>`${DURATION} >= ${filter.minDurationSeconds}`);
  if (filter.words !== undefined) q = q.where(sql<boolean>`search @@ websearch_to_tsquery('simple', ${filter.words})`);
  if (filter.category !== undefined) q = q.where(sql<boolean>`categories @> ARRAY[${filter.category}]::text[]`);
  return q;
}

const totalsSelect = [
  sql<string>`COUNT(*)`.as('conversations'),
  sql<string>`COUNT(*) FILTER (WHERE ended_at IS NULL)`.as('running'),
  sql<string | null>`SUM(${DURATION})`.as('seconds'),
  sql<string | null>`SUM(visitor_turns)`.as('visitor_turns'),
  sql<string | null>`SUM(agent_turns)`.as('agent_turns'),
  sql<string | null>`SUM(cardinality(handoffs_delivered))`.as('handoffs'),
  sql<Date | null>`MIN(started_at)`.as('first'),
  sql<Date | null>`MAX(started_at)`.as('last'),
] as const;

function totals(r: { conversations: string; running: string; seconds: string | null; visitor_turns: string | null; agent_turns: string | null; handoffs: string | null; first: Date | null; last: Date | null }): ConversationTotals {
  return {
    conversations: Number(r.conversations),
    running: Number(r.running),
    seconds: Number(r.seconds ?? 0),
    visitorTurns: Number(r.visitor_turns ?? 0),
    agentTurns: Number(r.agent_turns ?? 0),
    handoffsDelivered: Number(r.handoffs ?? 0),
    first: r.first ? new Date(r.first) : null,
    last: r.last ? new Date(r.last) : null,
  };
}

export class ConversationQueries {
  constructor(private readonly db: Db) {}

  private rows(filter: ConversationFilter) {
    return filtered(
      this.db.selectFrom('conversations').select([
        'id', 'agent_id', 'agent_name', 'mode', 'visitor_id', 'started_at', 'ended_at', DURATION.as('duration_seconds'), 'end_reason',
        'visitor_turns', 'agent_turns', 'categories', sql<number>`cardinality(handoffs_delivered)`.as('handoffs_delivered'),
      ]),
      filter,
    );
  }

  /** One page, newest first, and how many match in all. */
  async page(filter: ConversationFilter, limit: number, offset: number): Promise<{ rows: ConversationRow[]; total: number }> {
    const [rows, count] = await Promise.all([
      this.rows(filter).orderBy('started_at', 'desc').orderBy('id', 'desc').limit(limit).offset(offset).execute(),
      filtered(this.db.selectFrom('conversations').select(sql<string>`COUNT(*)`.as('n')), filter).executeTakeFirstOrThrow(),
    ]);
    return { rows: rows.map(normalise), total: Number(count.n) };
  }

  /** Every match, newest first, read in keyset batches so that memory stays flat however many there are. */
  async *walk(filter: ConversationFilter, batch = 500): AsyncGenerator<ConversationRow[]> {
    // The cursor is the database's own text of the start (microseconds), not a JS Date (milliseconds).
    let after: { startedAt: string; id: string } | undefined;
    for (;;) {
      let query = this.rows(filter).select(sql<string>`started_at::text`.as('cursor'));
      if (after) {
        const { startedAt, id } = after;
        query = query.where(sql<boolean>`(started_at, id) < (${startedAt}::timestamptz, ${id}::uuid)`);
      }
      const raw = await query.orderBy('started_at', 'desc').orderBy('id', 'desc').limit(batch).execute();
      if (raw.length) yield raw.map(normalise);
      if (raw.length < batch) return;
      const last = raw[raw.length - 1]!;
      after = { startedAt: last.cursor, id: last.id };
    }
  }

  /** One conversation of the account, or undefined (unknown or another account's). */
  async one(accountId: number, id: string): Promise<ConversationRow | undefined> {
    const row = await this.rows({ accountId }).where('id', '=', id).executeTakeFirst();
    return row && normalise(row);
  }

  /** A conversation's turns in order, with how each arrived and its latency waterfall; `afterId` pages on. */
  async turns(conversationId: string, limit: number, afterId = 0): Promise<TurnRow[]> {
    const rows = await this.db
      .selectFrom('conversation_turns')
      .select(['id', 'role', 'text', 'at', 'language', 'details'])
      .where('conversation_id', '=', conversationId)
      .where('id', '>', afterId)
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ id: Number(r.id), role: r.role, text: r.text, at: new Date(r.at), language: r.language, details: (r.details ?? {}) as Record<string, unknown> }));
  }

  /** Totals over the matches. */
  async totals(filter: ConversationFilter): Promise<ConversationTotals> {
    const row = await filtered(this.db.selectFrom('conversations').select([...totalsSelect]), filter).executeTakeFirstOrThrow();
    return totals(row);
  }

  /**
   * Totals per UTC day of the start, oldest first (days without conversations are absent): one
   * scan gives both the series and, summed, the totals.
   */
  async perDay(filter: ConversationFilter): Promise<Array<ConversationTotals & { day: string }>> {
    const day = sql<string>`((started_at AT TIME ZONE 'UTC')::date)`;
    const rows = await filtered(this.db.selectFrom('conversations').select([sql<string>`${day}::text`.as('day'), ...totalsSelect]), filter)
      .groupBy(day)
      .orderBy(day)
      .execute();
    return rows.map((r) => ({ day: r.day, ...totals(r) }));
  }

  /** Distinct knowledge gaps the agents raised in the matches (questions they could not answer). */
  async gapsFound(filter: ConversationFilter): Promise<number> {
    const matches = filtered(this.db.selectFrom('conversations').select('id'), filter);
    const row = await this.db
      .selectFrom('conversation_turns')
      .select(sql<string>`COUNT(DISTINCT details->>'gap_id')`.as('n'))
      .where(sql<boolean>`details ? 'gap_id'`)
      .where('conversation_id', 'in', matches)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Totals per agent (by the agent id; the name is the latest conversation's). */
  async perAgent(filter: ConversationFilter): Promise<AgentTotals[]> {
    const rows = await filtered(
      this.db.selectFrom('conversations').select(['agent_id', sql<string>`(array_agg(agent_name ORDER BY started_at DESC))[1]`.as('agent_name'), ...totalsSelect]),
      filter,
    )
      .groupBy('agent_id')
      .orderBy('agent_id')
      .execute();
    return rows.map((r) => ({ agentId: r.agent_id, agentName: r.agent_name, ...totals(r) }));
  }

  /** Records that a data handoff of this rule was delivered for the conversation (idempotent). */
  async handoffDelivered(conversationId: string, ruleId: number, db: Db = this.db): Promise<void> {
    if (!UUID.test(conversationId)) return; // not a conversation of this service (ids are session UUIDs)
    await db
      .updateTable('conversations')
      .set({ handoffs_delivered: sql`array_append(handoffs_delivered, ${String(ruleId)})` })
      .where('id', '=', conversationId)
      .where(sql<boolean>`NOT (${String(ruleId)} = ANY(handoffs_delivered))`)
      .execute();
  }
}

function normalise(r: any): ConversationRow {
  return {
    id: r.id,
    agent_id: r.agent_id,
    agent_name: r.agent_name,
    mode: r.mode,
    visitor_id: r.visitor_id,
    started_at: new Date(r.started_at),
    ended_at: r.ended_at ? new Date(r.ended_at) : null,
    duration_seconds: Number(r.duration_seconds ?? 0),
    end_reason: r.end_reason,
    visitor_turns: Number(r.visitor_turns),
    agent_turns: Number(r.agent_turns),
    categories: r.categories ?? [],
    handoffs_delivered: Number(r.handoffs_delivered ?? 0),
  };
}
