/**
 * Alert-rule conditions and their evaluation against an ended conversation. Every condition given
 * must hold (contract); a rule without conditions fires for every conversation. Pure functions
 * apart from the detail finder, so `test` (a sample or a past conversation) and the ended hook
 * evaluate exactly alike.
 */
import type { TranscriptTurn } from '../conversation/types.js';

export interface AlertConditions {
  /** Any of these words or phrases in what the visitor said. */
  keywords?: string[];
  /** The conversation lasted at least this long. */
  min_duration_seconds?: number;
  /** The visitor spoke (or typed) at least this many times. */
  min_visitor_turns?: number;
  /** This detail (e.g. `email`, `phone`, `name`) was found in the conversation. */
  detail_collected?: string;
}

/** What the conditions look at. */
export interface ConversationFacts {
  transcript: TranscriptTurn[];
  durationSeconds: number;
  visitorTurns: number;
  /** Values the website passed at the start (`{{visitor.<name>}}`). */
  visitor: Record<string, string>;
}

/** Finds a named detail in a conversation (handoff's extractors when wired; built-in otherwise). */
export type DetailFinder = (conversation: ConversationFacts, name: string) => Promise<string | undefined>;

export interface ConditionCheck {
  condition: 'keywords' | 'min_duration_seconds' | 'min_visitor_turns' | 'detail_collected';
  passed: boolean;
  /** Why, in a sentence. */
  explanation: string;
}

export interface Evaluation {
  fires: boolean;
  checks: ConditionCheck[];
  /** The keyword that matched and the visitor's words around it. */
  matched?: { keyword: string; excerpt: string };
  /** The detail's value, when `detail_collected` held. */
  detail?: { name: string; value: string };
}

/** Lower case without accents, so "Rückerstattung" matches "ruckerstattung" and "REFUND" "refund". */
export function fold(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * A keyword matches whole words, allowing common English endings ("refund" matches "refunds" and
 * "refunded", not "refundable-ish" fragments inside other words such as "artist" for "art").
 */
export function keywordPattern(keyword: string): RegExp {
  const words = fold(keyword).trim().split(/\s+/).map(escapeRegExp).join('\\s+');
  return new RegExp(`(?<![\\p{L}\\p{N}])${words}(?:s|es|ed|d|ing|er|ers)?(?![\\p{L}\\p{N}])`, 'u');
}

/** The first visitor turn containing any keyword: the keyword and an excerpt of that turn. */
export function findKeyword(transcript: TranscriptTurn[], keywords: string[]): { keyword: string; excerpt: string } | undefined {
  const patterns = keywords.map((k) => [k, keywordPattern(k)] as const);
  for (const turn of transcript) {
    if (turn.role !== 'visitor') continue;
    const folded = fold(turn.text);
    for (const [keyword, pattern] of patterns) if (pattern.test(folded)) return { keyword, excerpt: excerpt(turn.text, 200) };
  }
  return undefined;
}

export function excerpt(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1).trimEnd()}…`;
}

export async function evaluate(when: AlertConditions, conversation: ConversationFacts, findDetail: DetailFinder): Promise<Evaluation> {
  const checks: ConditionCheck[] = [];
  const result: Evaluation = { fires: true, checks };
  if (when.keywords && when.keywords.length) {
    const match = findKeyword(conversation.transcript, when.keywords);
    if (match) result.matched = match;
    checks.push({
      condition: 'keywords',
      passed: !!match,
      explanation: match ? `The visitor said "${match.keyword}": "${match.excerpt}"` : `The visitor never said any of: ${when.keywords.join(', ')}`,
    });
  }
  if (when.min_duration_seconds !== undefined) {
    const passed = conversation.durationSeconds >= when.min_duration_seconds;
    checks.push({
      condition: 'min_duration_seconds',
      passed,
      explanation: `The conversation lasted ${formatDuration(conversation.durationSeconds)} (${passed ? 'at least' : 'less than'} ${formatDuration(when.min_duration_seconds)})`,
    });
  }
  if (when.min_visitor_turns !== undefined) {
    const passed = conversation.visitorTurns >= when.min_visitor_turns;
    checks.push({
      condition: 'min_visitor_turns',
      passed,
      explanation: `The visitor spoke ${conversation.visitorTurns} time${conversation.visitorTurns === 1 ? '' : 's'} (${passed ? 'at least' : 'fewer than'} ${when.min_visitor_turns})`,
    });
  }
  if (when.detail_collected) {
    const value = await findDetail(conversation, when.detail_collected);
    if (value) result.detail = { name: when.detail_collected, value };
    checks.push({
      condition: 'detail_collected',
      passed: !!value,
      explanation: value ? `The visitor gave their ${when.detail_collected}: ${value}` : `No ${when.detail_collected} was found in the conversation`,
    });
  }
  result.fires = checks.every((c) => c.passed);
  return result;
}

export function formatDuration(seconds: number): string {
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  return s % 60 ? `${m} min ${s % 60} s` : `${m} min`;
}
