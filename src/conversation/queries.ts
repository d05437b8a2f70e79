/**
 * The read side of the conversation records, for the reports (src/reports): filtered pages,
 * aggregates, one conversation with its turns, and a keyset walk for exports. Reports never read
 * these tables themselves; app.ts hands them this object.
 *
 * A running conversation's duration is the time since it began (its record has none yet), so a
 * "minimum duration" filter and the minutes agree with what the list shows.
 *
 * Aggregates (stats, totals, per agent) whose filter is only an agent and dates read the per-day
 * rollup of ended conversations (conversation_days, kept by a trigger in the same transaction as
 * every write to a conversation; migration 0015) for the whole UTC days, and add the rows of the
 * running conversations (the open-conversations index) and of a day a date-time bound cuts. Any
 * other filter scans the matches, once.
 */
import { sql, type Expression, type SelectQueryBuilder } from 'kysely';
import type { Db } from '../core/db/database.js';
import type { Database } from '../core/db/schema.js';
import { LATENCY_BUCKETS, histogramPercentile, latencyBucket } from './latency-buckets.js';

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
  /** Answers the agents gave (agent turns with the engine's `answered` flag), and those they knew. */
  answers: number;
  answered: number;
  first: Date | null;
  last: Date | null;
}

export interface AgentTotals extends ConversationTotals {
  agentId: number;
  agentName: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** An ended conversation's recorded duration (or its end minus its start); a running one's so far. */
const DURATION = sql<number>`COALESCE(duration_seconds, GREATEST(0, EXTRACT(EPOCH FROM (COALESCE(ended_at, now()) - started_at))))`;
const DAY = sql<string>`((started_at AT TIME ZONE 'UTC')::date)`;
const DAY_MS = 86_400_000;

/**
 * How an aggregate may read the rollup, or undefined for a scan: the whole UTC days inside the
 * dates (`from`, `before` as days) come from the rollup; `scanned` are the conditions whose rows
 * are read instead: the running conversations, and the ended ones in a cut day at either end (a
 * date-time bound: dateBounds makes `before` the instant after date_to).
 */
interface RollupPlan {
  from?: string;
  before?: string;
  scanned: Array<ReturnType<typeof startConditions>>;
}

function rollupPlan(filter: ConversationFilter): RollupPlan | undefined {
  if (filter.visitorId !== undefined || filter.minDurationSeconds !== undefined || filter.words !== undefined || filter.category !== undefined)
    return undefined;
  const ceilFrom = filter.from && new Date(Math.ceil(filter.from.getTime() / DAY_MS) * DAY_MS);
  const floorBefore = filter.before && new Date(Math.floor(filter.before.getTime() / DAY_MS) * DAY_MS);
  // No whole day inside (at most two cut ones): the scan is short.
  if (ceilFrom && floorBefore && ceilFrom >= floorBefore) return undefined;
  const scanned = [sql`ended_at IS NULL AND ${startConditions(filter)}`];
  if (ceilFrom && ceilFrom > filter.from!) scanned.push(sql`ended_at IS NOT NULL AND ${startConditions({ ...filter, before: ceilFrom })}`);
  if (floorBefore && floorBefore < filter.before!) scanned.push(sql`ended_at IS NOT NULL AND ${startConditions({ ...filter, from: floorBefore })}`);
  return { from: ceilFrom?.toISOString().slice(0, 10), before: floorBefore?.toISOString().slice(0, 10), scanned };
}

/** The filter's account, agent and dates as conditions on conversations (what the rollup path allows). */
function startConditions(filter: ConversationFilter, table = 'conversations') {
  const t = sql.table(table);
  return sql.join(
    [
      sql`${t}.account_id = ${filter.accountId}`,
      ...(filter.agentId !== undefined ? [sql`${t}.agent_id = ${filter.agentId}`] : []),
      ...(filter.from ? [sql`${t}.started_at >= ${filter.from}`] : []),
      ...(filter.before ? [sql`${t}.started_at < ${filter.before}`] : []),
    ],
    sql` AND `,
  );
}

/** The plan's whole days on a rollup table. */
function dayConditions(filter: ConversationFilter, plan: RollupPlan) {
  return sql.join(
    [
      sql`account_id = ${filter.accountId}`,
      ...(filter.agentId !== undefined ? [sql`agent_id = ${filter.agentId}`] : []),
      ...(plan.from ? [sql`day >= ${plan.from}::date`] : []),
      ...(plan.before ? [sql`day < ${plan.before}::date`] : []),
    ],
    sql` AND `,
  );
}

/** Sums of the rollup's days and of the rows the plan scans, by `key`, in the totals' columns. */
function rollupAndScanned(filter: ConversationFilter, plan: RollupPlan, key: 'day' | 'agent_id' | 'none') {
  const rollupKey = key === 'day' ? sql`day` : key === 'agent_id' ? sql`agent_id` : sql`NULL::int`;
  const rowKey = key === 'day' ? DAY : key === 'agent_id' ? sql`agent_id` : sql`NULL::int`;
  // One branch per condition, so that each reads its own index range (the open conversations, a cut day).
  const scanned = plan.scanned.map(
    (where) => sql`
      SELECT ${rowKey}, COUNT(*), COUNT(*) FILTER (WHERE ended_at IS NULL), SUM(${DURATION})::float8, SUM(visitor_turns), SUM(agent_turns), SUM(cardinality(handoffs_delivered)),
             SUM(answers), SUM(answered)
      FROM conversations WHERE ${where} GROUP BY 1`,
  );
  return sql`
    SELECT ${rollupKey} AS k, SUM(conversations)::bigint AS conversations, 0::bigint AS running, SUM(seconds)::float8 AS seconds,
           SUM(visitor_turns)::bigint AS visitor_turns, SUM(agent_turns)::bigint AS agent_turns, SUM(handoffs_delivered)::bigint AS handoffs,
           SUM(answers)::bigint AS answers, SUM(answered)::bigint AS answered
    FROM conversation_days WHERE ${dayConditions(filter, plan)} GROUP BY 1
    UNION ALL ${sql.join(scanned, sql` UNION ALL `)}`;
}

/** The distinct gaps of the rollup's days and of the rows the plan scans. */
function rollupAndScannedGaps(filter: ConversationFilter, plan: RollupPlan) {
  return sql`
    SELECT COUNT(DISTINCT g) FROM (
      SELECT gap_id AS g FROM conversation_day_gaps WHERE ${dayConditions(filter, plan)}
      UNION ALL ${sql.join(
        plan.scanned.map((where) => sql`SELECT unnest(gap_ids) FROM conversations WHERE ${where}`),
        sql` UNION ALL `,
      )}
    ) gaps`;
}

/**
 * The measured answers' latencies as (day, bucket, answers) rows for the scanned conversations
 * (running ones, cut days, or every match when the rollup cannot be read), or the rollup's
 * histogram arrays for its whole days (`hist`, one row per agent and day).
 */
function latencyScan(where: Expression<unknown> | ReturnType<typeof sql>) {
  return sql`SELECT ${DAY}::text AS day, answer_ms_bucket(v) AS bucket, COUNT(*) AS n FROM conversations CROSS JOIN LATERAL unnest(answer_ms) AS v WHERE ${where} GROUP BY 1, 2`;
}

export interface LatencyPercentiles {
  /** Measured answers (with a first audio). */
  answers: number;
  p50: number | null;
  p95: number | null;
}

function percentilesOf(histogram: number[]): LatencyPercentiles {
  const answers = histogram.reduce((sum, n) => sum + n, 0);
  return { answers, p50: histogramPercentile(histogram, answers, 50), p95: histogramPercentile(histogram, answers, 95) };
}

/** Each day's percentiles, and those of all the days' histograms summed. */
function percentilesByDay(histograms: Map<string, number[]>): { days: Map<string, LatencyPercentiles>; total: LatencyPercentiles } {
  const total = new Array<number>(LATENCY_BUCKETS).fill(0);
  const days = new Map<string, LatencyPercentiles>();
  for (const [day, h] of histograms) {
    h.forEach((n, b) => (total[b] += n));
    days.set(day, percentilesOf(h));
  }
  return { days, total: percentilesOf(total) };
}

const summed = sql`SUM(conversations) AS conversations, SUM(running) AS running, SUM(seconds) AS seconds, SUM(visitor_turns) AS visitor_turns, SUM(agent_turns) AS agent_turns, SUM(handoffs) AS handoffs, SUM(answers) AS answers, SUM(answered) AS answered`;

/** Whether `stats`, `totals` and `perAgent` may read the rollup (tests compare both ways). */
export interface AggregateOptions {
  rollup?: boolean;
}

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

const sumsSelect = [
  sql<string>`COUNT(*)`.as('conversations'),
  sql<string>`COUNT(*) FILTER (WHERE ended_at IS NULL)`.as('running'),
  sql<string | null>`SUM(${DURATION})`.as('seconds'),
  sql<string | null>`SUM(visitor_turns)`.as('visitor_turns'),
  sql<string | null>`SUM(agent_turns)`.as('agent_turns'),
  sql<string | null>`SUM(cardinality(handoffs_delivered))`.as('handoffs'),
  sql<string | null>`SUM(answers)`.as('answers'),
  sql<string | null>`SUM(answered)`.as('answered'),
] as const;
const totalsSelect = [...sumsSelect, sql<Date | null>`MIN(started_at)`.as('first'), sql<Date | null>`MAX(started_at)`.as('last')] as const;

interface TotalsRaw {
  conversations: string | number;
  running: string | number;
  seconds: string | number | null;
  visitor_turns: string | number | null;
  agent_turns: string | number | null;
  handoffs: string | number | null;
  answers: string | number | null;
  answered: string | number | null;
  first: Date | string | null;
  last: Date | string | null;
}

function totals(r: TotalsRaw): ConversationTotals {
  return {
    conversations: Number(r.conversations),
    running: Number(r.running),
    seconds: Number(r.seconds ?? 0),
    visitorTurns: Number(r.visitor_turns ?? 0),
    agentTurns: Number(r.agent_turns ?? 0),
    handoffsDelivered: Number(r.handoffs ?? 0),
    answers: Number(r.answers ?? 0),
    answered: Number(r.answered ?? 0),
    first: r.first ? new Date(r.first) : null,
    last: r.last ? new Date(r.last) : null,
  };
}

export class ConversationQueries {
  constructor(private readonly db: Db) {}

  private rows(filter: ConversationFilter) {
    return filtered(
      this.db
        .selectFrom('conversations')
        .select([
          'id',
          'agent_id',
          'agent_name',
          'mode',
          'visitor_id',
          'started_at',
          'ended_at',
          DURATION.as('duration_seconds'),
          'end_reason',
          'visitor_turns',
          'agent_turns',
          'categories',
          sql<number>`cardinality(handoffs_delivered)`.as('handoffs_delivered'),
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
    return rows.map((r) => ({
      id: Number(r.id),
      role: r.role,
      text: r.text,
      at: new Date(r.at),
      language: r.language,
      details: (r.details ?? {}) as Record<string, unknown>,
    }));
  }

  /** Totals over the matches. */
  async totals(filter: ConversationFilter, options: AggregateOptions = {}): Promise<ConversationTotals> {
    const plan = options.rollup === false ? undefined : rollupPlan(filter);
    if (!plan) return totals(await filtered(this.db.selectFrom('conversations').select([...totalsSelect]), filter).executeTakeFirstOrThrow());
    // The first and last starts are two seeks of the account's (or agent's) start index.
    const { rows } = await sql<TotalsRaw>`
      SELECT ${summed},
             (SELECT MIN(started_at) FROM conversations WHERE ${startConditions(filter)}) AS first,
             (SELECT MAX(started_at) FROM conversations WHERE ${startConditions(filter)}) AS last
      FROM (${rollupAndScanned(filter, plan, 'none')}) t`.execute(this.db);
    return totals(rows[0]!);
  }

  /**
   * What stats need, in one statement: totals per UTC day of the start, oldest first (days
   * without conversations are absent; summed, they are the totals), and the distinct knowledge
   * gaps the agents raised in the matches (questions they could not answer).
   */
  async stats(filter: ConversationFilter, options: AggregateOptions = {}): Promise<{ days: Array<ConversationTotals & { day: string }>; gaps: number }> {
    const plan = options.rollup === false ? undefined : rollupPlan(filter);
    let rows: Array<TotalsRaw & { day: string; gaps: string | number | null }>;
    if (plan) {
      ({ rows } = await sql<TotalsRaw & { day: string; gaps: string | null }>`
        SELECT k::text AS day, ${summed}, NULL::timestamptz AS first, NULL::timestamptz AS last,
               (${rollupAndScannedGaps(filter, plan)}) AS gaps
        FROM (${rollupAndScanned(filter, plan, 'day')}) t
        GROUP BY k HAVING SUM(conversations) > 0 ORDER BY k`.execute(this.db));
    } else {
      rows = await this.scanDays(filter, false);
    }
    return { days: rows.map((r) => ({ day: r.day, ...totals(r) })), gaps: Number(rows[0]?.gaps ?? 0) };
  }

  /**
   * `stats` and `latency` together. When the rollup cannot serve the filter, both come from one
   * pass over the matches (each day's latencies gathered as text beside its sums), instead of a
   * second pass that unnests every match's latencies in the database.
   */
  async statsWithLatency(
    filter: ConversationFilter,
    options: AggregateOptions = {},
  ): Promise<{ days: Array<ConversationTotals & { day: string }>; gaps: number; latency: Awaited<ReturnType<ConversationQueries['latency']>> }> {
    if (options.rollup !== false && rollupPlan(filter)) return { ...(await this.stats(filter, options)), latency: await this.latency(filter, options) };
    const rows = await this.scanDays(filter, true);
    const histograms = new Map<string, number[]>();
    for (const row of rows) {
      if (!row.answer_list) continue;
      const histogram = new Array<number>(LATENCY_BUCKETS).fill(0);
      for (const ms of row.answer_list.split(',')) histogram[latencyBucket(Number(ms))]! += 1;
      histograms.set(row.day, histogram);
    }
    return { days: rows.map((r) => ({ day: r.day, ...totals(r) })), gaps: Number(rows[0]?.gaps ?? 0), latency: percentilesByDay(histograms) };
  }

  /**
   * One pass over the matches: each day's sums and its conversations' gap ids (and, when asked,
   * answer latencies) as text (most rows have none and add nothing); the few days then give the
   * distinct gaps.
   */
  private async scanDays(filter: ConversationFilter, withAnswers: boolean) {
    const perDay = filtered(
      this.db
        .selectFrom('conversations')
        .select([
          DAY.as('day'),
          ...sumsSelect,
          sql<string | null>`string_agg(array_to_string(gap_ids, ','), ',') FILTER (WHERE cardinality(gap_ids) > 0)`.as('gap_list'),
          withAnswers
            ? sql<string | null>`string_agg(array_to_string(answer_ms, ','), ',') FILTER (WHERE cardinality(answer_ms) > 0)`.as('answer_list')
            : sql<null>`NULL`.as('answer_list'),
        ]),
      filter,
    ).groupBy(DAY);
    return this.db
      .with('d', () => perDay)
      .selectFrom('d')
      .select([
        sql<string>`day::text`.as('day'),
        'conversations',
        'running',
        'seconds',
        'visitor_turns',
        'agent_turns',
        'handoffs',
        'answers',
        'answered',
        sql<null>`NULL`.as('first'),
        sql<null>`NULL`.as('last'),
        sql<string>`(SELECT COUNT(DISTINCT g) FROM d, unnest(string_to_array(d.gap_list, ',')) AS g)`.as('gaps'),
        'answer_list',
      ])
      .orderBy('d.day')
      .execute();
  }

  /**
   * Voice-to-voice percentiles (p50, p95: nearest rank over the measured answers, to the resolution
   * of conversation/latency-buckets.ts) per UTC day of the start, and over all the matches. Whole
   * days read the rollup's histogram (one small array per agent and day); the rest (running
   * conversations, cut days, other filters) count the matching rows' `answer_ms` into buckets in
   * the database. The percentiles are taken here from the summed histograms.
   */
  async latency(filter: ConversationFilter, options: AggregateOptions = {}): Promise<{ days: Map<string, LatencyPercentiles>; total: LatencyPercentiles }> {
    const plan = options.rollup === false ? undefined : rollupPlan(filter);
    const histograms = new Map<string, number[]>();
    const add = (day: string, bucket: number, n: number) => {
      let h = histograms.get(day);
      if (!h) histograms.set(day, (h = new Array<number>(LATENCY_BUCKETS).fill(0)));
      h[Math.min(LATENCY_BUCKETS - 1, Math.max(0, bucket))] += n;
    };
    const scans: Array<ReturnType<typeof sql>> = [];
    if (plan) {
      const { rows } = await sql<{ day: string; hist: number[] }>`
        SELECT day::text AS day, answer_hist AS hist FROM conversation_days WHERE ${dayConditions(filter, plan)} AND cardinality(answer_hist) > 0`.execute(
        this.db,
      );
      for (const row of rows) row.hist.forEach((n, bucket) => n && add(row.day, bucket, n));
      scans.push(...plan.scanned.map((where) => latencyScan(where)));
    } else {
      const matches = filtered(
        this.db
          .selectFrom('conversations')
          .select([DAY.as('day'), 'answer_ms'])
          .where(sql<boolean>`cardinality(answer_ms) > 0`),
        filter,
      );
      scans.push(
        sql`SELECT m.day::text AS day, answer_ms_bucket(v) AS bucket, COUNT(*) AS n FROM (${matches}) m CROSS JOIN LATERAL unnest(m.answer_ms) AS v GROUP BY 1, 2`,
      );
    }
    for (const scan of scans) {
      const { rows } = await sql<{ day: string; bucket: number; n: string | number }>`${scan}`.execute(this.db);
      for (const row of rows) add(row.day, Number(row.bucket), Number(row.n));
    }
    return percentilesByDay(histograms);
  }

  /** Totals per agent (by the agent id; the name is the latest conversation's). */
  async perAgent(filter: ConversationFilter, options: AggregateOptions = {}): Promise<AgentTotals[]> {
    const plan = options.rollup === false ? undefined : rollupPlan(filter);
    if (!plan) {
      const rows = await filtered(
        this.db
          .selectFrom('conversations')
          .select(['agent_id', sql<string>`(array_agg(agent_name ORDER BY started_at DESC, id DESC))[1]`.as('agent_name'), ...totalsSelect]),
        filter,
      )
        .groupBy('agent_id')
        .orderBy('agent_id')
        .execute();
      return rows.map((r) => ({ agentId: r.agent_id, agentName: r.agent_name, ...totals(r) }));
    }
    // The agents' sums from the rollup; each one's name, first and last start from its start index.
    const { rows } = await sql<TotalsRaw & { agent_id: number; agent_name: string }>`
      SELECT a.*, l.agent_name, l.started_at AS last,
             (SELECT MIN(started_at) FROM conversations c WHERE ${startConditions(filter, 'c')} AND c.agent_id = a.agent_id) AS first
      FROM (SELECT k AS agent_id, ${summed} FROM (${rollupAndScanned(filter, plan, 'agent_id')}) t GROUP BY k HAVING SUM(conversations) > 0) a
      CROSS JOIN LATERAL (SELECT agent_name, started_at FROM conversations c WHERE ${startConditions(filter, 'c')} AND c.agent_id = a.agent_id
                          ORDER BY started_at DESC, id DESC LIMIT 1) l
      ORDER BY a.agent_id`.execute(this.db);
    return rows.map((r) => ({ agentId: Number(r.agent_id), agentName: r.agent_name, ...totals(r) }));
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
