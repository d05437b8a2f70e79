/**
 * The CMU pronouncing dictionary (135,000 words → ARPAbet phones), shared by the offline engine's
 * word timings and the text lip-sync. A failed load is tried again by the next caller, never kept.
 *
 * The package is one ES module of 4.7 MB exporting an object literal. Imported, it stays in the
 * heap for the process's life as 270,000 strings, a 135,000-property object and the module's
 * source text (about 20 MB), which every full garbage collection marks again: in a real-time shard
 * that doubled the pause of each collection. So its file is read as text and packed into one string
 * of sorted lines and one array of offsets: two objects for the collector, looked up by binary
 * search. Reading the file (not importing it) also leaves no module half-evaluated to race with
 * (Node's require(esm) once threw on that and broke speech for good).
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { once } from '../core/once.js';

/** Word (lower case; "word(2)" for a variant) and phones, one entry per line of the package's file. */
const ENTRY = /^\s*"((?:[^"\\]|\\.)*)":\s*"([^"]*)",?\s*$/gm;
const TAB = 9;

export class Pronunciations {
  private constructor(
    /** "word\tphones" lines joined by "\n", in code-unit order of the word. */
    private readonly text: string,
    /** Where each line starts in `text`. */
    private readonly starts: Uint32Array,
  ) {}

  /** Packs the package's source (`export const dictionary = { "word": "PH ON ES", … }`). */
  static parse(source: string): Pronunciations {
    const lines: string[] = [];
    for (const [, word, phones] of source.matchAll(ENTRY)) lines.push(`${word.includes('\\') ? (JSON.parse(`"${word}"`) as string) : word}\t${phones}`);
    // A tab sorts before any character of a word, so sorting the lines sorts them by word.
    lines.sort();
    const starts = new Uint32Array(lines.length);
    for (let i = 0, at = 0; i < lines.length; at += lines[i].length + 1, i++) starts[i] = at;
    return new Pronunciations(lines.join('\n'), starts);
  }

  get size(): number {
    return this.starts.length;
  }

  /** The phones of a lower-case word ("HH AH0 L OW1"), or undefined if the dictionary lacks it. */
  phones(word: string): string | undefined {
    let low = 0;
    let high = this.starts.length - 1;
    while (low <= high) {
      const mid = (low + high) >>> 1;
      const order = this.compare(word, this.starts[mid]);
      if (order === 0) {
        const from = this.starts[mid] + word.length + 1;
        const end = this.text.indexOf('\n', from);
        return this.text.slice(from, end < 0 ? undefined : end);
      }
      if (order < 0) high = mid - 1;
      else low = mid + 1;
    }
    return undefined;
  }

  /** `word` against the word of the line at `start`, in code-unit order, without a substring. */
  private compare(word: string, start: number): number {
    for (let k = 0; ; k++) {
      const c = this.text.charCodeAt(start + k);
      if (c === TAB) return k === word.length ? 0 : 1;
      if (k === word.length) return -1;
      const w = word.charCodeAt(k);
      if (w !== c) return w - c;
    }
  }
}

const dictionary = once<Pronunciations>(async () => {
  const file = fileURLToPath(import.meta.resolve('cmu-pronouncing-dictionary'));
  const packed = Pronunciations.parse(await readFile(file, 'utf8'));
  if (packed.size < 100_000) throw new Error(`the pronouncing dictionary read ${packed.size} words from ${file}; its format changed`);
  return packed;
});

/** The dictionary, loading it if needed (about 0.3 s the first time). */
export function loadPronunciations(): Promise<Pronunciations> {
  return dictionary.get();
}

/** The dictionary if it has loaded, else undefined (callers then use spelling rules). */
export function pronunciationsIfLoaded(): Pronunciations | undefined {
  return dictionary.peek();
}
