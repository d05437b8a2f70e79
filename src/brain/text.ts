/**
 * Words as the offline brain compares them: lower case, accents off, English stop words and
 * generic verbs dropped, Porter-stemmed (the `stemmer` package), and a few everyday synonyms folded
 * together ("payment"/"pay", "delivery"/"deliver", "pets"/"dogs"). Question intents (hours, price,
 * phone, e-mail, address) are recognised here too: their words say what kind of fact answers.
 */
import { stemmer } from 'stemmer';

const STOP = new Set(
  `a about above after again all also am an and any anyone anything are aren around as at be because been before being
  below between both but by can cannot could couldn did didn do does doesn doing don down during each either else even
  ever every few for from further get gets getting give go goes going got had has hasn have haven having he her here hers
  him his how i if im in into is isn it its itself ive just know let like lot lots may me might mine more most much must
  my myself need needs no nor not now of off ok okay on once one only or other our ours out over own please pls really
  right say she should so some something such tell than thank thanks that thats the their theirs them then there
  theres these they this those through thus to too under until up upon us very want wanna was wasn we were weren what
  whats when where which while who whom whose why will with won would wouldn yeah yes yet you your youre yours yourself
  yourselves hi hello hey bring take make made use buy sell sold offer offered provide see look find stuff thing things
  kind sort way today tonight currently still already maybe possible possibly able anybody somebody someone`.split(/\s+/),
);

/** Stems folded into one, so two wordings of one thing meet. */
const FOLD: Record<string, string> = {
  pai: 'payment', paid: 'payment', deliveri: 'deliv', ship: 'deliv', shipment: 'deliv', pet: 'dog', dogg: 'dog', puppi: 'dog',
  wi: 'wifi', internet: 'wifi', coeliac: 'gluten', celiac: 'gluten', glutenfre: 'gluten', kid: 'child', children: 'child',
  restroom: 'toilet', bathroom: 'toilet', washroom: 'toilet', career: 'job', vacanc: 'job', hire: 'job', hir: 'job',
  voucher: 'gift', reserv: 'book', booking: 'book', appoint: 'book', appointment: 'book', wheelchair: 'access', accessibl: 'access',
  mail: 'email', refund: 'cancel', cancellat: 'cancel', e: '', telephon: 'phone', tel: 'phone', mobil: 'phone',
};

export function normalise(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[’‘`]/g, "'")
    .replace(/\be-mail/g, 'email')
    .replace(/\bwi-?fi\b/g, 'wifi')
    .replace(/'(s|re|ve|ll|d|m)\b/g, '')
    .replace(/n't\b/g, ' not');
}

export function words(text: string): string[] {
  return normalise(text).split(/[^\p{L}\p{N}]+/u).filter(Boolean);
}

export function stem(word: string): string {
  if (/^\d/.test(word)) return word;
  const stemmed = stemmer(word);
  return FOLD[stemmed] ?? FOLD[word] ?? stemmed;
}

/** The content terms of a text: stemmed, without stop words. */
export function terms(text: string): string[] {
  const out: string[] = [];
  for (const word of words(text)) {
    if (STOP.has(word) || word.length < 2 && !/\d/.test(word)) continue;
    const term = stem(word);
    if (term) out.push(term);
  }
  return out;
}

export type Intent = 'hours' | 'price' | 'phone' | 'email' | 'address';

const INTENTS: Array<[Intent, RegExp, string[]]> = [
  ['hours', /\b(open|opening|opens|close|closing|closes|closed|hours?|what time|timings?|shut)\b/, ['open', 'close', 'closed', 'hour', 'time', 'timing', 'shut']],
  ['price', /\b(how much|prices?|pricing|costs?|costing|charges?|fees?|rates?|expensive|cheap|afford|pay for|tariffs?)\b/, ['price', 'pricing', 'cost', 'costing', 'charg', 'charge', 'fee', 'rate', 'expens', 'cheap', 'afford', 'tariff']],
  ['phone', /\b(phone|telephone|call (you|u|the)|ring you|phone number|your number|contact number|mobile)\b/, ['phone', 'call', 'ring', 'number', 'contact']],
  ['email', /\b(email|e-mail)\b/, ['email', 'address', 'contact']],
  ['address', /\b(where (are|is) (you|the shop|the store|your)|address|located|location|find you|directions|get there|get to you|situated|whereabouts)\b/, ['address', 'locat', 'location', 'direct', 'direction', 'situat', 'whereabout']],
];

export interface Question {
  /** Content terms: what the question is about. */
  terms: string[];
  /** The kinds of fact that answer it. */
  intents: Set<Intent>;
  /** Every term, intent words included (for retrieval). */
  allTerms: string[];
}

export function analyseQuestion(text: string): Question {
  const normal = normalise(text);
  const intents = new Set<Intent>();
  const intentWords = new Set<string>();
  for (const [intent, pattern, stems] of INTENTS) {
    if (pattern.test(normal)) {
      intents.add(intent);
      for (const s of stems) intentWords.add(stem(s));
    }
  }
  // "e-mail address" is the e-mail intent, not a street address.
  if (intents.has('email') && !/\b(where|located|street|directions)\b/.test(normal)) intents.delete('address');
  const all = terms(text);
  return { terms: [...new Set(all.filter((t) => !intentWords.has(t)))], intents, allTerms: [...new Set(all)] };
}

const WEEK = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];
const DAY_WORD = String.raw`(mon(?:day)?|tue(?:s(?:day)?)?|wed(?:nesday)?|thu(?:r(?:s(?:day)?)?)?|fri(?:day)?|sat(?:urday)?|sun(?:day)?)`;
const DAY_RANGE = new RegExp(String.raw`\b${DAY_WORD}s?\.?\s*(?:[–—-]|to|through|thru|until|till)\s*${DAY_WORD}s?\b`, 'gi');
const dayIndex = (word: string) => WEEK.findIndex((d) => d.startsWith(word.toLowerCase().slice(0, 3)));

/**
 * The days a text covers without naming them ("Tuesday – Friday" covers Wednesday, "weekends" covers
 * Saturday), as stemmed terms: "are you open on Wednesday?" meets "Tue–Fri 7:00–18:00".
 */
export function dayTerms(text: string): string[] {
  const days = new Set<string>();
  for (const match of text.matchAll(DAY_RANGE)) {
    const from = dayIndex(match[1]!);
    const to = dayIndex(match[2]!);
    if (from < 0 || to < 0) continue;
    for (let i = from; ; i = (i + 1) % 7) {
      days.add(WEEK[i]!);
      if (i === to || days.size === 7) break;
    }
  }
  const normal = normalise(text);
  if (/\bweekdays?\b/.test(normal)) WEEK.slice(0, 5).forEach((d) => days.add(d));
  if (/\bweekends?\b/.test(normal)) ['saturday', 'sunday'].forEach((d) => days.add(d));
  if (/\b(daily|every ?day|7 days a week|seven days a week)\b/.test(normal)) WEEK.forEach((d) => days.add(d));
  return [...days].map(stem);
}
