/**
 * The offline extractors: details found in what the visitor said without a language model.
 * Each kind has its extractor (e-mail, phone numbers through libphonenumber-js, names, dates and
 * times through chrono-node, numbers and amounts, yes/no, free text matched to the detail's
 * description). The visitor's answer right after the agent asked for the detail is read first;
 * otherwise every visitor turn, the latest mention winning (visitors correct themselves).
 */
import * as chrono from 'chrono-node';
import { findPhoneNumbersInText, type CountryCode } from 'libphonenumber-js';
import { terms } from '../../brain/text.js';
import { findNumbers } from '../../core/numbers.js';
import { capitalise, formatWhen, normaliseValue, phoneAsSaid, yesOrNo } from './kinds.js';
import { kindOf, type DetailKind, type DetailSpec } from './spec.js';

export interface Turn {
  role: 'visitor' | 'agent';
  text: string;
}

export interface ExtractContext {
  /** "Now" for relative dates ("tomorrow"): when the conversation took place. */
  reference: Date;
  /** Country for phone numbers written without +country code. */
  country?: CountryCode;
}

/** Words that say the agent is asking for a detail of this kind. */
const KIND_WORDS: Record<DetailKind, string[]> = {
  email: ['email', 'mail', 'address'],
  phone: ['phone', 'number', 'call', 'reach', 'mobile'],
  name: ['name', 'call'],
  date: ['when', 'date', 'day', 'time', 'suit', 'suits', 'convenient'],
  number: ['how', 'many', 'much', 'number', 'budget'],
  yes_no: [],
  text: [],
};

export function extractOffline(transcript: Turn[], details: DetailSpec[], context: ExtractContext): Record<string, string> {
  const found: Record<string, string> = {};
  for (const detail of details) {
    const value = extractOne(transcript, detail, context);
    if (value) found[detail.name] = value;
  }
  return found;
}

export function extractOne(transcript: Turn[], detail: DetailSpec, context: ExtractContext): string {
  const kind = kindOf(detail);
  const answers = answersTo(transcript, detail, kind);
  // The visitor's answers to the agent's question about this detail, latest first.
  for (const answer of answers.reverse()) {
    const value = fromAnswer(kind, answer, detail, context);
    if (value) return value;
  }
  const visitorTurns = transcript.filter((t) => t.role === 'visitor').map((t) => t.text);
  for (const text of visitorTurns.reverse()) {
    const value = fromMention(kind, text, detail, context);
    if (value) return value;
  }
  return '';
}

/** Words that stand for one another when a detail counts people. */
const PEOPLE = ['guest', 'peopl', 'person', 'adult', 'attende', 'particip', 'visitor', 'seat'];

/** The label words of a detail: its name's parts and its description's content words. */
function labelTerms(detail: DetailSpec): Set<string> {
  const label = new Set([...terms(detail.name.replace(/_/g, ' ')), ...terms(detail.description)]);
  if (PEOPLE.some((p) => label.has(p)) || label.has('headcount') || label.has('parti')) for (const p of PEOPLE) label.add(p);
  return label;
}

/** Visitor turns that follow an agent question about this detail. */
function answersTo(transcript: Turn[], detail: DetailSpec, kind: DetailKind): string[] {
  const label = labelTerms(detail);
  const kindWords = new Set(KIND_WORDS[kind]);
  const out: string[] = [];
  for (let i = 1; i < transcript.length; i++) {
    const turn = transcript[i]!;
    const previous = transcript[i - 1]!;
    if (turn.role !== 'visitor' || previous.role !== 'agent' || !previous.text.includes('?')) continue;
    // The last question of the agent's turn is the one being answered.
    const question =
      previous.text
        .split(/(?<=[.!?])\s+/)
        .filter((s) => s.includes('?'))
        .pop() ?? previous.text;
    const questionTerms = terms(question);
    const rawWords = question.toLowerCase().split(/[^a-z]+/);
    const asked =
      questionTerms.some((t) => label.has(t)) || (kindWords.size > 0 && rawWords.filter((w) => kindWords.has(w)).length >= (kind === 'number' ? 2 : 1));
    if (asked) out.push(turn.text);
  }
  return out;
}

function fromAnswer(kind: DetailKind, answer: string, detail: DetailSpec, context: ExtractContext): string {
  switch (kind) {
    case 'name': {
      const stated = statedName(answer);
      if (stated) return stated;
      // A short answer to "what's your name?" is the name itself.
      const bare = answer
        .replace(/^(sure|yes|yeah|ok|okay|hi|hello|well)[,.!]?\s+/i, '')
        .replace(/^(it'?s|i'?m|i am|this is|just)\s+/i, '')
        .replace(/[.!?]+$/, '')
        .trim();
      const words = bare.split(/\s+/);
      if (words.length >= 1 && words.length <= 3 && words.every((w) => /^[\p{L}][\p{L}'-]*$/u.test(w) && !NOT_NAMES.has(w.toLowerCase())))
        return capitalise(bare);
      return '';
    }
    case 'yes_no':
      return yesOrNo(answer) ?? '';
    case 'number': {
      const [first] = findNumbers(answer);
      return first ? String(first.value) : '';
    }
    case 'text':
      return answer.trim().slice(0, 1000);
    default:
      return fromMention(kind, answer, detail, context);
  }
}

function fromMention(kind: DetailKind, text: string, detail: DetailSpec, context: ExtractContext): string {
  switch (kind) {
    case 'email':
      return lastEmail(text);
    case 'phone': {
      const spoken = digitsFromWords(text);
      for (const candidate of [text, spoken]) {
        const numbers = findPhoneNumbersInText(candidate, context.country ?? 'US');
        if (numbers.length) return numbers[numbers.length - 1]!.number.number;
      }
      // Not a number libphonenumber accepts: kept as said, delivered marked unverified.
      return mentionsPhone(text) ? phoneAsSaid(text) : '';
    }
    case 'name':
      return statedName(text) ?? '';
    case 'date': {
      const results = chrono.parse(text, context.reference, { forwardDate: true });
      return results.length ? formatWhen(results[results.length - 1]!) : '';
    }
    case 'number':
      return numberNear(text, detail);
    case 'yes_no':
      return yesNoMention(text, detail);
    default:
      return textMention(text, detail);
  }
}

/** A turn that speaks of a phone number ("my phone is …", "call me on …"), or is mostly the number itself. */
function mentionsPhone(text: string): boolean {
  return /\b(phone|mobile|cell|number|call|reach|text me|whatsapp)\b/i.test(text) || text.replace(/[\d\s+().-]/g, '').length <= 3;
}

function lastEmail(text: string): string {
  // Spoken forms too: "jane dot doe at example dot com".
  const spoken = text.replace(/\s+(?:at)\s+(?=[\w-]+(?:\s+dot\s+|\.)\w)/gi, '@').replace(/\s+dot\s+/gi, '.');
  for (const candidate of [text, spoken]) {
    const matches = [...candidate.matchAll(/[\w.!#$%&'*+/=?^`{|}~-]+@[\w-]+(?:\.[\w-]+)*\.[a-z]{2,}/gi)];
    for (const m of matches.reverse()) {
      const email = normaliseValue('email', m[0], { reference: new Date() });
      if (email) return email;
    }
  }
  return '';
}

const NOT_NAMES = new Set(
  `a an the and but or so just not no yes yeah sure okay ok looking calling interested trying wondering here happy fine good great well
  sorry afraid from with about for in on at to of my your our this that it is am are was were be been going gonna want wanted need
  hoping thinking asking new back done ready available free busy open`.split(/\s+/),
);

/** "my name is Jane Doe", "I'm Jane", "this is Jane", "call me Jane", "name's Jane". */
export function statedName(text: string): string | undefined {
  const patterns = [
    /\bmy name(?:'s| is)\s+([\p{L}][\p{L}'-]*(?:\s+[\p{L}][\p{L}'-]*){0,2})/iu,
    /\b(?:call me|name's)\s+([\p{L}][\p{L}'-]*(?:\s+[\p{L}][\p{L}'-]*){0,2})/iu,
    /\b(?:[Ii]['’]m|[Ii] am|[Tt]his is|[Ii]t['’]s)\s+(\p{Lu}[\p{L}'-]*(?:\s+\p{Lu}[\p{L}'-]*){0,2})/u,
  ];
  let best: { index: number; name: string } | undefined;
  for (const pattern of patterns) {
    const global = new RegExp(pattern.source, pattern.flags + 'g');
    for (const m of text.matchAll(global)) {
      const words = m[1]!.split(/\s+/);
      const kept: string[] = [];
      for (const w of words) {
        if (NOT_NAMES.has(w.toLowerCase())) break;
        kept.push(w);
      }
      if (kept.length && (!best || m.index! >= best.index)) best = { index: m.index!, name: capitalise(kept.join(' ')) };
    }
  }
  return best?.name;
}

const DIGIT_WORDS: Record<string, string> = {
  zero: '0',
  oh: '0',
  o: '0',
  one: '1',
  two: '2',
  three: '3',
  four: '4',
  five: '5',
  six: '6',
  seven: '7',
  eight: '8',
  nine: '9',
};

/** "five five five, one two three four" → "555 1234" (speech recognisers often write digits as words). */
function digitsFromWords(text: string): string {
  return text
    .replace(/\b(double|triple)\s+(\w+)/gi, (_m, how: string, w: string) => {
      const d = DIGIT_WORDS[w.toLowerCase()];
      return d ? d.repeat(how.toLowerCase() === 'double' ? 2 : 3) : _m;
    })
    .replace(/\b(zero|oh|o|one|two|three|four|five|six|seven|eight|nine)\b[\s,-]*/gi, (_m, w: string) => DIGIT_WORDS[w.toLowerCase()]!)
    .replace(/\bplus\s*(?=\d)/gi, '+');
}

/** Details that are sums of money (a currency sign or word then counts for the number). */
const MONEY = /\b(budget|amount|price|cost|spend|fee|pay|salary|income|deposit|value)\b/i;

/** The number said nearest to a word of the detail's label ("a budget of 5,000", "we are 4 people"). */
function numberNear(text: string, detail: DetailSpec): string {
  const label = labelTerms(detail);
  const money = MONEY.test(`${detail.name.replace(/_/g, ' ')} ${detail.description}`);
  const sentences = text.split(/(?<=[.!?;])\s+/);
  for (const sentence of sentences.reverse()) {
    // Where the label's words are in the sentence (by character position).
    const anchors = [...sentence.matchAll(/[\p{L}\p{N}']+/gu)].filter((m) => terms(m[0]).some((t) => label.has(t))).map((m) => m.index!);
    if (!anchors.length) continue;
    const numbers = findNumbers(sentence).filter((n) => String(Math.trunc(n.value)).length < 7 || n.currency);
    if (!numbers.length) continue;
    const distance = (n: { index: number; currency: boolean }) => Math.min(...anchors.map((at) => Math.abs(at - n.index))) + (n.currency === money ? 0 : 1000);
    const best = numbers.reduce((a, b) => (distance(b) < distance(a) ? b : a));
    return String(best.value);
  }
  return '';
}

/** A sentence about the detail that says yes or no ("I'd like the newsletter" / "no newsletter, please"). */
function yesNoMention(text: string, detail: DetailSpec): string {
  const label = labelTerms(detail);
  for (const sentence of text.split(/(?<=[.!?;])\s+/).reverse()) {
    if (!terms(sentence).some((t) => label.has(t))) continue;
    if (/\b(no|not|don't|do not|never|without|rather not|no thanks)\b/i.test(sentence)) return 'no';
    if (/\b(yes|please|i'd like|i would like|i want|sign me up|sure|definitely|i'm interested|interested)\b/i.test(sentence)) return 'yes';
  }
  return '';
}

/** The visitor's sentence that best matches the detail's description (at least one content word shared). */
function textMention(text: string, detail: DetailSpec): string {
  const label = labelTerms(detail);
  let best: { score: number; sentence: string } | undefined;
  for (const sentence of text.split(/(?<=[.!?])\s+/)) {
    const sentenceTerms = new Set(terms(sentence));
    let score = 0;
    for (const t of label) if (sentenceTerms.has(t)) score++;
    if (score > 0 && (!best || score >= best.score)) best = { score, sentence: sentence.trim() };
  }
  return best ? best.sentence.slice(0, 1000) : '';
}
