/**
 * Incremental sentence splitter: text arrives in pieces (LLM tokens), sentences leave as soon as
 * they are certainly complete, so the first one can be spoken while the rest is still being
 * written. A boundary is sentence punctuation followed by white space (or a line break); known
 * abbreviations, initials and decimals do not end a sentence. Very long sentences are cut at a
 * clause (comma, semicolon, dash) so that no single piece keeps the listener waiting.
 */

const ABBREVIATIONS = new Set([
  'mr',
  'mrs',
  'ms',
  'dr',
  'prof',
  'sr',
  'jr',
  'st',
  'mt',
  'vs',
  'etc',
  'inc',
  'ltd',
  'co',
  'corp',
  'dept',
  'no',
  'e.g',
  'i.e',
  'approx',
  'fig',
  'jan',
  'feb',
  'mar',
  'apr',
  'jun',
  'jul',
  'aug',
  'sep',
  'sept',
  'oct',
  'nov',
  'dec',
  'sra',
  'srta',
  'mme',
  'mlle',
  'hr',
  'fr',
  'ca',
  'bzw',
  'usw',
  'z.b',
  'u.a',
]);

const TERMINATORS = '.!?…。！？';
const CLOSERS = '"\'”’)]»」』';

export interface SplitterOptions {
  /** A sentence longer than this is cut at the last clause boundary before it. */
  maxChars?: number;
  /**
   * Let the very first piece end at a clause (comma, colon, semicolon, dash) once it has this many
   * characters: engines that synthesise a whole piece before returning audio then start speaking
   * sooner. 0 disables.
   */
  firstClauseChars?: number;
}

export class SentenceSplitter {
  private buffer = '';
  private readonly maxChars: number;
  private firstClauseChars: number;

  constructor(options: SplitterOptions = {}) {
    this.maxChars = options.maxChars ?? 220;
    this.firstClauseChars = options.firstClauseChars ?? 0;
  }

  /** Adds text; returns the sentences it completed. */
  push(text: string): string[] {
    this.buffer += text;
    return this.drain(false);
  }

  /** No more text: whatever is left is the last sentence. */
  end(): string[] {
    return this.drain(true);
  }

  private drain(final: boolean): string[] {
    const out: string[] = [];
    for (;;) {
      const cut = this.boundary(final);
      if (cut < 0) break;
      const sentence = normalise(this.buffer.slice(0, cut));
      this.buffer = this.buffer.slice(cut);
      this.firstClauseChars = 0;
      if (sentence) out.push(sentence);
    }
    if (final) {
      const rest = normalise(this.buffer);
      this.buffer = '';
      if (rest) out.push(rest);
    }
    return out;
  }

  /** Index just past the first complete sentence in the buffer, or -1. */
  private boundary(final: boolean): number {
    if (this.firstClauseChars) {
      const min = this.firstClauseChars;
      const m = /[,;:]\s|\s[–—]\s/.exec(this.buffer.slice(min));
      if (m) {
        const clause = min + m.index + m[0].length;
        const end = this.sentenceEnd(final);
        if (end < 0 || end > clause) return clause;
      }
    }
    const cut = this.sentenceEnd(final);
    if ((cut < 0 || cut > this.maxChars) && this.buffer.length > this.maxChars) return this.clauseCut();
    return cut;
  }

  private sentenceEnd(final: boolean): number {
    const b = this.buffer;
    for (let i = 0; i < b.length; i++) {
      const ch = b[i];
      if (ch === '\n' && b.slice(0, i).trim()) return i + 1;
      if (!TERMINATORS.includes(ch)) continue;
      let end = i + 1;
      while (end < b.length && (TERMINATORS.includes(b[end]) || CLOSERS.includes(b[end]))) end++;
      if (end >= b.length) {
        // Could be "3." of "3.5" or "Mr." of "Mr. Smith": wait for the next character unless the text is over.
        if (final && !this.isAbbreviation(i)) return end;
        return -1;
      }
      if ('。！？'.includes(ch)) return end;
      if (!/\s/.test(b[end])) continue; // 3.14, e.g, example.com
      if (ch === '.' && this.isAbbreviation(i)) continue;
      // "word. lowercase" is rarely a sentence end (e.g. "approx. five")
      const next = b.slice(end).trimStart()[0];
      if (ch === '.' && next && /\p{Ll}/u.test(next)) continue;
      return end;
    }
    return -1;
  }

  private clauseCut(): number {
    const b = this.buffer;
    {
      const window = b.slice(0, this.maxChars);
      const clause = Math.max(
        window.lastIndexOf(', '),
        window.lastIndexOf('; '),
        window.lastIndexOf(' – '),
        window.lastIndexOf(' — '),
        window.lastIndexOf(': '),
      );
      if (clause > 20) return clause + 1;
      const space = window.lastIndexOf(' ');
      return space > 20 ? space + 1 : this.maxChars;
    }
  }

  private isAbbreviation(dot: number): boolean {
    const before = this.buffer.slice(0, dot);
    const word = /([\p{L}.]+)$/u.exec(before)?.[1]?.toLowerCase() ?? '';
    if (!word) return false;
    if (ABBREVIATIONS.has(word)) return true;
    // Initials: "J." or "U.S."
    return /^(\p{L}\.)*\p{Lu}$/u.test(before.slice(before.length - word.length)) && word.replace(/\./g, '').length <= 2;
  }
}

function normalise(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** Splits a whole text at once. */
export function splitSentences(text: string, options?: SplitterOptions): string[] {
  const s = new SentenceSplitter(options);
  return [...s.push(text), ...s.end()];
}

/** The words of a sentence as spoken (punctuation stripped), for word timings. */
export function wordsOf(sentence: string): string[] {
  return sentence
    .split(/\s+/)
    .map((w) => w.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, ''))
    .filter(Boolean);
}
