/**
 * Reports on conversations (interface "Usage and reports", contract "Reports"): the list with its
 * filters, stats, one conversation with its transcript and latency waterfall, per-agent and
 * account totals, and the exports. Conversations are read through the conversation capability's
 * queries, agents and the account through hooks; reports own no table.
 */
import { validationItem, ValidationFailed } from '../core/errors.js';
import type { ConversationFilter, ConversationQueries, ConversationRow, ConversationTotals, LatencyPercentiles, TurnRow } from '../conversation/queries.js';
import { csvRow } from './csv.js';
import { dateBounds } from './schemas.js';
import { reportsErrors } from './errors.js';

/** What the reports need of other capabilities (wired in app.ts). */
export interface ReportsHooks {
  account(accountId: number): Promise<{ id: number; name: string; plan: 'free' | 'paid' }>;
  agents(accountId: number): Promise<Array<{ id: number; name: string }>>;
}

/** The query fields shared by the list, the stats and the export (already checked by the schema). */
export interface FilterQuery {
  date_from?: string;
  date_to?: string;
  agent_id?: number;
  visitor_id?: string;
  min_duration_seconds?: number;
  q?: string;
  notif_category?: string;
}

/** Turns the detail answer carries; longer transcripts are complete in the transcript export. */
export const DETAIL_TURNS = 2000;
const EXPORT_BATCH = 500;
export const CSV_COLUMNS = [
  'conversation_id',
  'session_id',
  'agent_id',
  'agent_name',
  'mode',
  'visitor_id',
  'started_at',
  'ended_at',
  'duration_seconds',
  'end_reason',
  'visitor_turns',
  'agent_turns',
  'notif_categories',
  'handoffs_delivered',
] as const;

const EMPTY: ConversationTotals = {
  conversations: 0,
  running: 0,
  seconds: 0,
  visitorTurns: 0,
  agentTurns: 0,
  handoffsDelivered: 0,
  answers: 0,
  answered: 0,
  first: null,
  last: null,
};
const minutes = (seconds: number) => Math.round((seconds / 60) * 100) / 100;
const round = (n: number, places = 3) => Math.round(n * 10 ** places) / 10 ** places;
const iso = (d: Date | null) => (d ? d.toISOString() : null);

export class ReportsService {
  constructor(
    private readonly conversations: ConversationQueries,
    private readonly hooks: ReportsHooks,
  ) {}

  /** The query as a filter; date_from after date_to is a 422 (each alone was checked by the schema). */
  filter(accountId: number, query: FilterQuery): ConversationFilter {
    const from = query.date_from === undefined ? undefined : dateBounds(query.date_from);
    const to = query.date_to === undefined ? undefined : dateBounds(query.date_to);
    if (from && to && from.start >= to.endExclusive) {
      throw new ValidationFailed([validationItem(['query', 'date_to'], 'Value error, date_to must not be before date_from', query.date_to)]);
    }
    return {
      accountId,
      from: from?.start,
      // The day after 9999-12-31 is written +010000-01-01, which neither the queries nor PostgreSQL read: no conversation starts that late, so it is no bound.
      before: to && to.endExclusive.getUTCFullYear() <= 9999 ? to.endExclusive : undefined,
      agentId: query.agent_id,
      visitorId: query.visitor_id,
      minDurationSeconds: query.min_duration_seconds,
      words: query.q,
      category: query.notif_category,
    };
  }

  async list(accountId: number, query: FilterQuery & { limit: number; offset: number }) {
    const { rows, total } = await this.conversations.page(this.filter(accountId, query), query.limit, query.offset);
    return { items: rows.map(item), total, limit: query.limit, offset: query.offset };
  }

  async stats(accountId: number, query: FilterQuery) {
    const filter = this.filter(accountId, query);
    const { days, gaps, latency } = await this.conversations.statsWithLatency(filter);
    const totals = days.reduce<ConversationTotals>(
      (sum, d) => ({
        conversations: sum.conversations + d.conversations,
        running: sum.running + d.running,
        seconds: sum.seconds + d.seconds,
        visitorTurns: sum.visitorTurns + d.visitorTurns,
        agentTurns: sum.agentTurns + d.agentTurns,
        handoffsDelivered: sum.handoffsDelivered + d.handoffsDelivered,
        answers: sum.answers + d.answers,
        answered: sum.answered + d.answered,
        first: null,
        last: null,
      }),
      { ...EMPTY },
    );
    return {
      ...totalsOf(totals),
      voice_to_voice_ms: voiceToVoice(latency.total),
      running: totals.running,
      agent_turns: totals.agentTurns,
      handoffs_delivered: totals.handoffsDelivered,
      gaps_found: gaps,
      per_day: everyDay(days).map((d) => ({ ...d, voice_to_voice_ms: voiceToVoice(latency.days.get(d.date)) })),
    };
  }

  async conversation(accountId: number, conversationId: string) {
    const row = await this.require(accountId, conversationId);
    const turns = await this.conversations.turns(row.id, DETAIL_TURNS + 1);
    const shown = turns.slice(0, DETAIL_TURNS);
    const waterfalls = shown.map((t) => waterfallOf(t)).filter((w): w is Record<string, number | null> => w !== null);
    return {
      ...item(row),
      transcript: shown.map(transcriptTurn),
      transcript_truncated: turns.length > DETAIL_TURNS,
      latency: {
        answers: waterfalls.length,
        first_audio_ms: percentiles(waterfalls.map((w) => w.first_audio)),
        heard_ms: percentiles(waterfalls.map((w) => w.heard)),
      },
    };
  }

  async agents(accountId: number) {
    const monthStart = startOfMonth(new Date());
    const [all, month, current] = await Promise.all([
      this.conversations.perAgent({ accountId }),
      this.conversations.perAgent({ accountId, from: monthStart }),
      this.hooks.agents(accountId),
    ]);
    const byMonth = new Map(month.map((a) => [a.agentId, a]));
    const currentNames = new Map(current.map((a) => [a.id, a.name]));
    const empty = EMPTY;
    const rows = [
      ...all.map((a) => ({ id: a.agentId, name: currentNames.get(a.agentId) ?? a.agentName, totals: a as ConversationTotals })),
      ...current.filter((a) => !all.some((x) => x.agentId === a.id)).map((a) => ({ id: a.id, name: a.name, totals: empty })),
    ].sort((a, b) => a.id - b.id);
    return {
      agents: rows.map((a) => ({
        agent_id: a.id,
        agent_name: a.name,
        exists: currentNames.has(a.id),
        ...totalsOf(a.totals),
        running: a.totals.running,
        handoffs_delivered: a.totals.handoffsDelivered,
        this_month: totalsOf(byMonth.get(a.id) ?? empty),
        last_conversation_at: iso(a.totals.last),
      })),
    };
  }

  async account(accountId: number) {
    const now = new Date();
    const [account, agents, all, month] = await Promise.all([
      this.hooks.account(accountId),
      this.hooks.agents(accountId),
      this.conversations.totals({ accountId }),
      this.conversations.totals({ accountId, from: startOfMonth(now) }),
    ]);
    return {
      account_id: account.id,
      name: account.name,
      plan: account.plan,
      agents: agents.length,
      ...totalsOf(all),
      running: all.running,
      handoffs_delivered: all.handoffsDelivered,
      this_month: { month: now.toISOString().slice(0, 7), ...totalsOf(month) },
      first_conversation_at: iso(all.first),
      last_conversation_at: iso(all.last),
    };
  }

  /** The list as CSV lines (the header first), read in keyset batches: memory stays flat. */
  async *csv(filter: ConversationFilter): AsyncGenerator<string> {
    yield csvRow(CSV_COLUMNS);
    for await (const rows of this.conversations.walk(filter, EXPORT_BATCH)) {
      yield rows
        .map((r) => {
          const i = item(r);
          return csvRow(CSV_COLUMNS.map((c) => (c === 'notif_categories' ? i.notif_categories.join(';') : i[c])));
        })
        .join('');
    }
  }

  /** Checks the conversation is the account's before an export starts (a 404 cannot follow a 200). */
  async require(accountId: number, conversationId: string): Promise<ConversationRow> {
    const row = UUID.test(conversationId) ? await this.conversations.one(accountId, conversationId) : undefined;
    if (!row) throw reportsErrors.conversation_not_found(`No conversation ${conversationId} in this account`);
    return row;
  }

  /** One conversation as readable text: a heading, then one paragraph per turn. */
  async *transcriptText(row: ConversationRow): AsyncGenerator<string> {
    const lines = [
      `Conversation ${row.id}`,
      `Agent: ${row.agent_name} (${row.agent_id}), ${row.mode} mode`,
      `Visitor: ${row.visitor_id ?? 'anonymous'}`,
      `Started: ${row.started_at.toISOString()}`,
      `Ended: ${row.ended_at ? `${row.ended_at.toISOString()} (${row.end_reason ?? 'ended'})` : 'still running'}`,
      `Duration: ${formatDuration(row.duration_seconds)}, ${row.visitor_turns} visitor turn${row.visitor_turns === 1 ? '' : 's'}`,
    ];
    yield `${lines.join('\n')}\n\n`;
    let afterId = 0;
    for (;;) {
      const turns = await this.conversations.turns(row.id, EXPORT_BATCH, afterId);
      if (turns.length) {
        yield turns
          .map((t) => {
            const offset = formatDuration(Math.max(0, (t.at.getTime() - row.started_at.getTime()) / 1000));
            const who = t.role === 'visitor' ? 'Visitor' : row.agent_name;
            // Continuation lines are indented so a turn's own line breaks cannot pass for a new speaker.
            return `[${offset}] ${who}: ${t.text.replace(/\r\n?|\n/g, '\n    ')}\n`;
          })
          .join('');
        afterId = turns[turns.length - 1]!.id;
      }
      if (turns.length < EXPORT_BATCH) return;
    }
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function item(r: ConversationRow) {
  return {
    conversation_id: r.id,
    session_id: r.id,
    agent_id: r.agent_id,
    agent_name: r.agent_name,
    mode: r.mode,
    visitor_id: r.visitor_id,
    started_at: r.started_at.toISOString(),
    ended_at: iso(r.ended_at),
    duration_seconds: round(r.duration_seconds),
    end_reason: r.ended_at ? r.end_reason : null,
    visitor_turns: r.visitor_turns,
    agent_turns: r.agent_turns,
    notif_categories: r.categories,
    handoffs_delivered: r.handoffs_delivered,
  };
}

type Sums = Pick<ConversationTotals, 'conversations' | 'seconds' | 'visitorTurns' | 'answers' | 'answered'>;

function totalsOf(t: Sums) {
  return {
    conversations: t.conversations,
    minutes: minutes(t.seconds),
    average_duration_seconds: t.conversations ? round(t.seconds / t.conversations, 1) : 0,
    visitor_turns: t.visitorTurns,
    answers: t.answers,
    answered: t.answered,
    // Of the answers given, the share the agent knew (not an "I don't know" that raised a gap).
    answer_rate: t.answers ? round(t.answered / t.answers, 4) : null,
  };
}

/** The stats' voice-to-voice figure: null when no answer was measured. */
function voiceToVoice(p: LatencyPercentiles | undefined) {
  return p && p.answers > 0 ? { p50: p.p50, p95: p.p95 } : null;
}

/** The days from the first to the last, those without conversations as zeroes. */
function everyDay(days: Array<Sums & { day: string }>) {
  if (!days.length) return [];
  const byDay = new Map(days.map((d) => [d.day, d]));
  const out = [];
  const last = Date.parse(`${days[days.length - 1]!.day}T00:00:00Z`);
  for (let t = Date.parse(`${days[0]!.day}T00:00:00Z`); t <= last; t += 86_400_000) {
    const date = new Date(t).toISOString().slice(0, 10);
    const d = byDay.get(date);
    out.push({ date, ...totalsOf(d ?? EMPTY) });
  }
  return out;
}

function transcriptTurn(t: TurnRow) {
  const d = t.details;
  return {
    role: t.role,
    text: t.text,
    at: t.at.toISOString(),
    language: t.language,
    source: typeof d.source === 'string' ? d.source : null,
    latency_ms: waterfallOf(t),
    answered: typeof d.answered === 'boolean' ? d.answered : null,
    gap_id: typeof d.gap_id === 'number' ? d.gap_id : null,
  };
}

function waterfallOf(t: TurnRow): Record<string, number | null> | null {
  const w = t.details.latency_ms;
  if (!w || typeof w !== 'object' || Array.isArray(w)) return null;
  return Object.fromEntries(Object.entries(w as Record<string, unknown>).map(([k, v]) => [k, typeof v === 'number' ? v : null]));
}

function percentiles(values: Array<number | null | undefined>) {
  const sorted = values.filter((v): v is number => typeof v === 'number').sort((a, b) => a - b);
  if (!sorted.length) return { median: null, p95: null, max: null };
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;
  return { median: at(0.5), p95: at(0.95), max: sorted[sorted.length - 1]! };
}

function startOfMonth(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
}

function formatDuration(seconds: number): string {
  const s = Math.floor(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const pad = (n: number) => String(n).padStart(2, '0');
  return h ? `${h}:${pad(m)}:${pad(s % 60)}` : `${pad(m)}:${pad(s % 60)}`;
}
