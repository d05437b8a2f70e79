/**
 * Text to visemes: CMU pronouncing dictionary where the word is known, letter-to-sound rules where
 * it is not. The dictionary is large (4.7 MB), so it loads on first use, off the start-up path,
 * through the speech layer's one loader.
 */
import { PHONEME_VISEME, type Viseme } from './visemes.js';
import { loadPronunciations, pronunciationsIfLoaded } from '../../speech/pronunciations.js';

/** Starts loading the dictionary in the background; until it is there, letter rules are used. */
export async function preloadDictionary(): Promise<void> {
  await loadPronunciations();
}

// Ordered letter-to-sound rules: longest graphemes first.
const LETTER_RULES: Array<[string, Viseme[]]> = [
  ['tch', ['CH']],
  ['sch', ['SS', 'kk']],
  ['th', ['TH']],
  ['sh', ['CH']],
  ['ch', ['CH']],
  ['ph', ['FF']],
  ['wh', ['U']],
  ['ck', ['kk']],
  ['ng', ['nn']],
  ['qu', ['kk', 'U']],
  ['ee', ['I']],
  ['ea', ['I']],
  ['oo', ['U']],
  ['ou', ['aa', 'U']],
  ['ow', ['O']],
  ['oa', ['O']],
  ['ai', ['E']],
  ['ay', ['E']],
  ['oi', ['O', 'I']],
  ['au', ['O']],
  ['a', ['aa']],
  ['b', ['PP']],
  ['c', ['kk']],
  ['d', ['DD']],
  ['e', ['E']],
  ['f', ['FF']],
  ['g', ['kk']],
  ['h', ['kk']],
  ['i', ['I']],
  ['j', ['CH']],
  ['k', ['kk']],
  ['l', ['nn']],
  ['m', ['PP']],
  ['n', ['nn']],
  ['o', ['O']],
  ['p', ['PP']],
  ['q', ['kk']],
  ['r', ['RR']],
  ['s', ['SS']],
  ['t', ['DD']],
  ['u', ['U']],
  ['v', ['FF']],
  ['w', ['U']],
  ['x', ['kk', 'SS']],
  ['y', ['I']],
  ['z', ['SS']],
];

function letterToSound(word: string): Viseme[] {
  const out: Viseme[] = [];
  let i = 0;
  while (i < word.length) {
    const rule = LETTER_RULES.find(([g]) => word.startsWith(g, i));
    if (rule) {
      // A silent final 'e' (make, home) is not spoken.
      if (!(rule[0] === 'e' && i === word.length - 1 && word.length > 2)) out.push(...rule[1]);
      i += rule[0].length;
    } else {
      i += 1; // digits, apostrophes, letters outside a-z
    }
  }
  return out;
}

export function wordVisemes(word: string): Viseme[] {
  const clean = word.toLowerCase().replace(/[^a-z']/g, '');
  if (!clean) return [];
  const phones = pronunciationsIfLoaded()?.phones(clean);
  if (phones)
    return phones
      .split(' ')
      .map((p) => PHONEME_VISEME[p.replace(/\d/g, '')])
      .filter(Boolean);
  return letterToSound(clean.replace(/'/g, ''));
}

export function splitWords(text: string): string[] {
  return text.split(/[^\p{L}\p{N}']+/u).filter(Boolean);
}

/** Visemes for a whole text, words separated by a short closed-mouth rest. */
export function textVisemes(text: string): Viseme[] {
  const out: Viseme[] = [];
  for (const word of splitWords(text)) {
    if (out.length) out.push('sil');
    out.push(...wordVisemes(word));
  }
  return out;
}
