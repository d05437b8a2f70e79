/**
 * Queries and answers of the reports routes (interface "Usage and reports", contract "Reports").
 * The same zod schemas validate requests (FastAPI-shaped 422s) and feed the OpenAPI document.
 */
import { z } from 'zod';

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,6})?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/**
 * A date_from/date_to value as an instant range: a date (UTC) covers its whole day, a date-time
 * (no zone: UTC) is that instant. Undefined when the text is neither, or names a day that does not exist.
 */
export function dateBounds(text: string): { start: Date; endExclusive: Date } | undefined {
  const date = DATE.exec(text);
  const match = date ?? DATE_TIME.exec(text);
  if (!match) return undefined;
  const [, y, m, d, hh = '00', mm = '00', ss = '00'] = match;
  const day = new Date(Date.UTC(Number(y), Number(m) - 1, Number(d)));
  if (day.getUTCFullYear() !== Number(y) || day.getUTCMonth() !== Number(m) - 1 || day.getUTCDate() !== Number(d)) return undefined;
  if (Number(y) < 1970 || Number(y) > 9999) return undefined;
  if (date) return { start: day, endExclusive: new Date(day.getTime() + 86_400_000) };
  if (Number(hh) > 23 || Number(mm) > 59 || Number(ss) > 59) return undefined;
  const zone = match[8] ? (match[8].toUpperCase() === 'Z' ? 'Z' : match[8].replace(/^([+-]\d{2}):?(\d{2})$/, '$1:$2')) : 'Z';
  const instant = new Date(`${y}-${m}-${d}T${hh}:${mm}:${ss}${match[7] ?? ''}${zone}`);
  if (Number.isNaN(instant.getTime())) return undefined;
  return { start: instant, endExclusive: new Date(instant.getTime() + 1) };
}

const DateOrTime = z
  .string()
  .max(40)
  .refine((v) => dateBounds(v) !== undefined, { message: 'Value error, expected an ISO 8601 date (2026-11-23) or date-time (2026-11-23T14:30:00Z)' });

export const VISITOR_ID_PATTERN = '^[A-Za-z0-9._:@-]{1,128}$';
const INT32_MAX = 2_147_483_647;

/** The filters the list, the stats and the export share. */
export const ReportFilters = {
  date_from: DateOrTime.optional().describe('ISO 8601 date (UTC, the whole day included) or date-time: conversations started at or after it'),
  date_to: DateOrTime.optional().describe('ISO 8601 date (UTC, the whole day included) or date-time: conversations started at or before it'),
  agent_id: z.coerce.number().int().min(1).max(INT32_MAX).optional().describe("One of the account's agents"),
  visitor_id: z
    .string()
    .regex(new RegExp(VISITOR_ID_PATTERN), { message: `String should match pattern '${VISITOR_ID_PATTERN}'` })
    .optional()
    .describe('The visitor (the widget keeps one per browser and site; a site may pass its own)'),
  min_duration_seconds: z.coerce
    .number()
    .int()
    .min(0)
    .max(INT32_MAX)
    .optional()
    .describe('Conversations that lasted at least this long (a running one: so far)'),
  q: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe(
      'Words of the transcript (all must appear, in any turn; "a phrase" in quotes, -word to exclude, or). Words are matched whole, case-insensitively',
    ),
};

export const ConversationsQuery = z.object({
  ...ReportFilters,
  notif_category: z.string().min(1).max(100).optional().describe('Conversations that raised a notification of this category'),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  offset: z.coerce.number().int().min(0).max(INT32_MAX).default(0),
});
export const StatsQuery = z.object(ReportFilters);
export const ConversationParams = z.object({ conversation_id: z.string().max(100).describe('The conversation id (= the session id)') });

// ------------------------------------------------------------------ answers

export const ConversationItem = z
  .object({
    conversation_id: z.string(),
    session_id: z.string().describe('The same as conversation_id'),
    agent_id: z.number().int(),
    agent_name: z.string().describe('The name the agent had when the conversation began'),
    mode: z.enum(['conversation', 'render']),
    visitor_id: z.string().nullable(),
    started_at: z.string(),
    ended_at: z.string().nullable().describe('null while running'),
    duration_seconds: z.number().describe('Seconds, to the millisecond; a running conversation: so far'),
    end_reason: z.string().nullable().describe("Why it ended (the session's end_reason); null while running"),
    visitor_turns: z.number().int(),
    agent_turns: z.number().int(),
    notif_categories: z.array(z.string()).describe('Categories of the notifications it raised'),
    handoffs_delivered: z.number().int().describe('Data handoffs delivered for it'),
  })
  .meta({ id: 'ConversationItem' });

export const ConversationsResponse = z.object({ items: z.array(ConversationItem), total: z.number().int(), limit: z.number().int(), offset: z.number().int() });

const Waterfall = z
  .record(z.string(), z.number().nullable())
  .describe(
    "Milliseconds from the end of the visitor's turn to each step, cumulative: end_of_turn, recognised, first_text, first_audio, heard; prepared when the answer was begun before the turn ended (preemptive generation, may be negative), filler when a thinking sound played",
  );

export const TranscriptTurn = z.object({
  role: z.enum(['visitor', 'agent']),
  text: z.string(),
  at: z.string(),
  language: z.string().nullable(),
  source: z.string().nullable().describe('How the turn arrived: voice, typed, api, answer, welcome, command, goodbye'),
  latency_ms: Waterfall.nullable().describe('Agent answers: the latency waterfall; null for other turns'),
  answered: z.boolean().nullable().describe('Agent answers: whether the agent knew the answer'),
  gap_id: z.number().int().nullable().describe('Agent answers: the knowledge gap the question raised'),
});

const Percentiles = z.object({ median: z.number().nullable(), p95: z.number().nullable(), max: z.number().nullable() });

export const ConversationDetail = ConversationItem.extend({
  transcript: z.array(TranscriptTurn),
  transcript_truncated: z.boolean().describe('true when the conversation has more turns than the answer carries (the transcript export has them all)'),
  latency: z.object({
    answers: z.number().int().describe('Agent answers with a waterfall'),
    first_audio_ms: Percentiles.describe("From the end of the visitor's turn to the first audio of the answer"),
    heard_ms: Percentiles.describe('… to the visitor hearing it'),
  }),
}).meta({ id: 'ConversationDetail' });

const Totals = {
  conversations: z.number().int(),
  minutes: z.number().describe('Minutes, two decimals'),
  average_duration_seconds: z.number().describe('0 when there are no conversations'),
  visitor_turns: z.number().int(),
  answers: z
    .number()
    .int()
    .describe(
      "Answers the agents gave to visitors' questions (agent turns the answering engine produced; welcomes, goodbyes and the business's own words are not answers)",
    ),
  answered: z
    .number()
    .int()
    .describe(
      'Of those, the answers the agent knew (the engine found the answer in its knowledge, or it was small talk); the others said it did not know and raised a knowledge gap',
    ),
  answer_rate: z.number().min(0).max(1).nullable().describe('answered / answers, 0 to 1 (four decimals); null when no answer was given'),
};

const VoiceToVoice = z
  .object({
    p50: z.number().int().nullable().describe('Median, ms'),
    p95: z.number().int().nullable().describe('95th percentile, ms'),
  })
  .nullable()
  .describe(
    "Voice-to-voice latency of the measured answers, ms: from the end of the visitor's speech (a typed turn: its arrival) to the first audio of the answer leaving the server (the waterfall's first_audio, as in a conversation's latency.first_audio_ms). Percentiles by nearest rank over every measured answer (the value at rank ceil(p x n) of the sorted latencies), given as the middle of that latency's histogram bucket: within 10 ms below 1.5 s, 50 ms below 5 s, 500 ms below 30 s; null when no answer was measured",
  );

export const StatsResponse = z.object({
  ...Totals,
  running: z.number().int().describe('Still running'),
  agent_turns: z.number().int(),
  handoffs_delivered: z.number().int(),
  voice_to_voice_ms: VoiceToVoice,
  gaps_found: z.number().int().describe('Distinct knowledge gaps (questions the agents could not answer) raised in these conversations'),
  per_day: z
    .array(
      z.object({
        date: z.string().describe('YYYY-MM-DD (UTC)'),
        ...Totals,
        voice_to_voice_ms: VoiceToVoice.describe("The day's voice-to-voice percentiles over the day's measured answers; null when none was measured"),
      }),
    )
    .describe("One entry per UTC day (of the conversation's start) from the first to the last conversation that matches, days without any included"),
});

export const AgentReport = z.object({
  agent_id: z.number().int(),
  agent_name: z.string(),
  exists: z.boolean().describe('false for an agent deleted since'),
  ...Totals,
  running: z.number().int(),
  handoffs_delivered: z.number().int(),
  this_month: z.object(Totals),
  last_conversation_at: z.string().nullable(),
});
export const AgentsReportResponse = z.object({ agents: z.array(AgentReport) });

export const AccountReportResponse = z.object({
  account_id: z.number().int(),
  name: z.string(),
  plan: z.enum(['free', 'paid']),
  agents: z.number().int().describe('Agents the account has now'),
  ...Totals,
  running: z.number().int(),
  handoffs_delivered: z.number().int(),
  this_month: z.object({ month: z.string(), ...Totals }),
  first_conversation_at: z.string().nullable(),
  last_conversation_at: z.string().nullable(),
});
