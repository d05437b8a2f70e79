/**
 * Which of the agent's languages a visitor's turn is in. Recognisers that detect the language say
 * so; typed text (and recognisers that do not) goes through `tinyld`, restricted to the agent's
 * languages, and a switch needs some evidence: a short or ambiguous text keeps the current language.
 */
import { detectAll } from 'tinyld';

/** Below this many letters a text says too little about its language ("ok", "yes", a name). */
const MIN_LETTERS = 12;
/**
 * tinyld's score the winner needs, and how many times the runner-up's, before the language changes
 * (its scores are low on short sentences: 0.14 for a clear "Quanto costa quello blu?").
 */
const MIN_SCORE = 0.1;
const MIN_RATIO = 1.5;

/**
 * The language of `text` among `languages` (ISO 639-1, first the current one), or `current` when
 * the evidence is weak. `reported` is the recogniser's own detection, trusted when it is one of them.
 */
export function visitorLanguage(text: string, languages: string[], current: string, reported?: string): string {
  const base = (code: string | undefined) => code?.toLowerCase().split(/[-_]/)[0];
  const candidates = [...new Set(languages.map((l) => base(l)!))];
  if (candidates.length < 2) return current;
  const said = base(reported);
  if (said && candidates.includes(said)) return said;
  const letters = text.replace(/[^\p{L}]/gu, '').length;
  // Scripts without spaces pack a word in one or two letters.
  const dense = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Devanagari}]/u.test(text);
  if (letters < (dense ? 4 : MIN_LETTERS)) return current;
  const scores = detectAll(text, { only: candidates }).filter((r) => candidates.includes(r.lang));
  if (!scores.length) return current;
  const [best, next] = scores;
  if (best.lang === current) return current;
  if (best.accuracy < MIN_SCORE || (next && best.accuracy < next.accuracy * MIN_RATIO)) return current;
  return best.lang;
}
