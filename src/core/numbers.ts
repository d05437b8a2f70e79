/**
 * Numbers as people write or say them: digits (with thousands separators, k/thousand/million) and
 * English number words ("two hundred and fifty", "a dozen"). Shared by the handoff's detail
 * extraction and the alert-rule builder, which both read what a person wrote.
 */

const WORDS: Record<string, number> = {
  zero: 0,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  thirteen: 13,
  fourteen: 14,
  fifteen: 15,
  sixteen: 16,
  seventeen: 17,
  eighteen: 18,
  nineteen: 19,
  twenty: 20,
  thirty: 30,
  forty: 40,
  fifty: 50,
  sixty: 60,
  seventy: 70,
  eighty: 80,
  ninety: 90,
  a: 1,
  an: 1,
  couple: 2,
  dozen: 12,
};
const SCALE: Record<string, number> = { hundred: 100, thousand: 1000, k: 1000, grand: 1000, million: 1_000_000, m: 1_000_000 };

/** The first number in a text: digits (with thousands separators, k/thousand/million) or English number words. */
export function parseNumber(text: string): number | undefined {
  return findNumbers(text)[0]?.value;
}

export interface FoundNumber {
  value: number;
  index: number;
  currency: boolean;
}

export function findNumbers(text: string): FoundNumber[] {
  const found: FoundNumber[] = [];
  const digits = /([$€£¥])?\s?(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?\s*(k|thousand|grand|million|m\b)?\s*(dollars|euros|pounds|usd|eur|gbp|bucks)?/gi;
  for (const m of text.matchAll(digits)) {
    let value = Number(m[2]!.replace(/,/g, '') + (m[3] ? `.${m[3]}` : ''));
    if (m[4]) value *= SCALE[m[4].toLowerCase()] ?? 1;
    found.push({ value, index: m.index!, currency: !!(m[1] || m[5]) });
  }
  // Number words: "two hundred and fifty", "five thousand", "twenty five".
  const tokens = [...text.toLowerCase().matchAll(/[a-z]+/g)];
  for (let i = 0; i < tokens.length; i++) {
    const word = tokens[i]![0];
    if (!(word in WORDS) || word === 'a' || word === 'an') {
      if (!((word === 'a' || word === 'an') && tokens[i + 1] && tokens[i + 1]![0] in SCALE && tokens[i + 1]![0] !== 'm' && tokens[i + 1]![0] !== 'k')) continue;
    }
    let total = 0;
    let current = 0;
    let j = i;
    let used = false;
    for (; j < tokens.length; j++) {
      const w = tokens[j]![0];
      if (w in WORDS && !(used && (w === 'a' || w === 'an'))) {
        current += WORDS[w]!;
        used = true;
      } else if (w in SCALE && w !== 'm' && w !== 'k' && used) {
        const scale = SCALE[w]!;
        if (scale === 100) current = (current || 1) * 100;
        else {
          total += (current || 1) * scale;
          current = 0;
        }
      } else if (w === 'and' && used && tokens[j + 1] && tokens[j + 1]![0] in WORDS) {
      } else break;
    }
    if (used) {
      const after = text.toLowerCase().slice(tokens[j - 1]!.index! + tokens[j - 1]![0].length, tokens[j - 1]!.index! + tokens[j - 1]![0].length + 10);
      found.push({ value: total + current, index: tokens[i]!.index!, currency: /^\s*(dollars|euros|pounds|bucks)/.test(after) });
      i = j - 1;
    }
  }
  return found.sort((a, b) => a.index - b.index);
}
