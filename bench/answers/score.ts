/**
 * The answers benchmark's scorer: what one reply of the agent counts as. For a question the site
 * answers: `right` (answered, with every expected fact and none of an outdated page's), `unknown`
 * (an honest "I don't know"), or `wrong` (anything else said as an answer: a missing or stale fact,
 * or a question echoed back). For a question the site does not answer: `honest` or `wrong`.
 * An echo is a reply that asks a question other than the agent's own offers to help, or that repeats
 * the visitor's question: an answer must never be a question from the knowledge.
 */
import type { Answerable } from './questions.js';

export interface BenchReply {
  text: string;
  /** The engine's own verdict: false when it said it does not know. */
  answered: boolean;
}

export type Verdict = 'right' | 'unknown' | 'honest' | 'wrong';

/** The agent's own questions back to the visitor (offers to help, asking for a detail). */
const OWN_QUESTIONS =
  /^(hi! )?(what (else )?would you like to know|how can i help( you)?( today)?|is there anything else( i can help you with)?|could you ask me in another way|may i have your|by the way, may i have your|before you go, may i have your|what can i do for you)\b/i;

/** Case and spacing aside ("8am" is "8 am"). */
const compact = (text: string) => text.toLowerCase().replace(/\s+/g, '');
const normal = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();

export function echoes(question: string, reply: string): boolean {
  const q = normal(question);
  if (q.length > 8 && normal(reply).includes(q)) return true;
  return reply
    .split(/(?<=[.!?])\s+/)
    .map((s) => s.trim())
    .some((s) => s.endsWith('?') && !OWN_QUESTIONS.test(s));
}

export function judgeAnswerable(item: Answerable, reply: BenchReply): { verdict: Verdict; why?: string } {
  if (!reply.answered) return { verdict: 'unknown' };
  if (echoes(item.question, reply.text)) return { verdict: 'wrong', why: 'echoed a question' };
  const said = compact(reply.text);
  const stale = (item.not ?? []).filter((f) => said.includes(compact(f)));
  if (stale.length) return { verdict: 'wrong', why: `said the outdated ${stale.join(', ')}` };
  const missing = item.expect.filter((f) => !said.includes(compact(f)));
  if (missing.length) return { verdict: 'wrong', why: `missing ${missing.join(', ')}` };
  return { verdict: 'right' };
}

export function judgeUnanswerable(question: string, reply: BenchReply): { verdict: Verdict; why?: string } {
  if (!reply.answered && !echoes(question, reply.text)) return { verdict: 'honest' };
  return { verdict: 'wrong', why: reply.answered ? 'answered a question the site does not answer' : 'echoed a question' };
}

export interface Tally {
  answerable: number;
  right: number;
  unknown: number;
  wrongAnswerable: number;
  unanswerable: number;
  honest: number;
  wrongUnanswerable: number;
}

export function emptyTally(): Tally {
  return { answerable: 0, right: 0, unknown: 0, wrongAnswerable: 0, unanswerable: 0, honest: 0, wrongUnanswerable: 0 };
}

export function addVerdict(tally: Tally, kind: 'answerable' | 'unanswerable', verdict: Verdict): void {
  if (kind === 'answerable') {
    tally.answerable++;
    if (verdict === 'right') tally.right++;
    else if (verdict === 'unknown') tally.unknown++;
    else tally.wrongAnswerable++;
  } else {
    tally.unanswerable++;
    if (verdict === 'honest') tally.honest++;
    else tally.wrongUnanswerable++;
  }
}

const pct = (n: number, of: number) => (of ? `${((100 * n) / of).toFixed(1)}%` : '–');

/** One Markdown table row: right %, honest %, wrong % of all questions. */
export function tallyRow(name: string, t: Tally): string {
  const wrong = t.wrongAnswerable + t.wrongUnanswerable;
  return `| ${name} | ${t.answerable} | ${t.right} (${pct(t.right, t.answerable)}) | ${t.unknown} | ${t.wrongAnswerable} | ${t.unanswerable} | ${t.honest} (${pct(t.honest, t.unanswerable)}) | ${t.wrongUnanswerable} | ${wrong} (${pct(wrong, t.answerable + t.unanswerable)}) |`;
}

export const TALLY_HEADER = [
  '| site | answerable | right | "I don\'t know" | wrong | unanswerable | honest "I don\'t know" | wrong | wrong, all questions |',
  '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
];
