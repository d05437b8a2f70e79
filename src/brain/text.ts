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
  yourselves hi hello hey take make made use buy sell sold offer offered provide see look find stuff thing things
  kind sort way today tonight currently still already maybe possible possibly able anybody somebody someone
  come comes coming happen happens happened whenever anytime taking takes took making makes bringing brings getting using
  uses looking finding buying offers offering providing provides seeing work works working many`.split(/\s+/),
);

/** Stems folded into one, so two wordings of one thing meet. */
const FOLD: Record<string, string> = {
  pai: 'payment',
  paid: 'payment',
  deliveri: 'deliv',
  ship: 'deliv',
  shipment: 'deliv',
  pet: 'dog',
  dogg: 'dog',
  puppi: 'dog',
  wi: 'wifi',
  internet: 'wifi',
  coeliac: 'gluten',
  celiac: 'gluten',
  glutenfre: 'gluten',
  kid: 'child',
  children: 'child',
  restroom: 'toilet',
  bathroom: 'toilet',
  washroom: 'toilet',
  career: 'job',
  vacanc: 'job',
  hire: 'job',
  hir: 'job',
  voucher: 'gift',
  reserv: 'book',
  booking: 'book',
  appoint: 'book',
  appointment: 'book',
  wheelchair: 'access',
  accessibl: 'access',
  mail: 'email',
  cancellat: 'cancel',
  install: 'fit',
  installs: 'fit',
  installed: 'fit',
  installing: 'fit',
  installation: 'fit',
  installer: 'fit',
  further: 'far',
  allow: 'welcom',
  permit: 'welcom',
  bring: 'welcom',
  monthli: 'month',
  hourli: 'hour',
  annual: 'year',
  yearli: 'year',
  identif: 'id',
  hous: 'home',
  ahead: 'advanc',
  earli: 'advanc',
  notic: 'advanc',
  teeth: 'tooth',
  refit: 'fit',
  unlimit: 'limit',
  move: 'import',
  migrat: 'import',
  exclud: 'includ',
  incl: 'includ',
  inc: 'includ',
  owner: 'found',
  own: 'found',
  founder: 'found',
  establish: 'found',
  e: '',
  telephon: 'phone',
  tel: 'phone',
  mobil: 'phone',
};

/** "a will", "my will" is the document, not the future tense. */
const WILL_NOUN = /\b(a|my|the|your|our|his|her|their|single|mirror|new|living) will\b/gi;

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
  return normalise(text)
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);
}

export function stem(word: string): string {
  if (/^\d/.test(word)) return word;
  const stemmed = stemmer(word);
  return FOLD[stemmed] ?? FOLD[word] ?? stemmed;
}

/** The content terms of a text: stemmed, without stop words. */
export function terms(text: string): string[] {
  const out: string[] = [];
  for (const word of words(text.replace(WILL_NOUN, '$1 wills'))) {
    if (STOP.has(word) || (word.length < 2 && !/\d/.test(word))) continue;
    const term = stem(word);
    if (term) out.push(term);
  }
  return out;
}

export type Intent = 'hours' | 'price' | 'phone' | 'email' | 'address';

const INTENTS: Array<[Intent, RegExp, string[]]> = [
  [
    'hours',
    /\b(open|opening|opens|close(?! (my|your|the|an?|our|this)\b)|closing|closes|closed|hours?|what time|timings?|shut)\b/,
    ['open', 'close', 'closed', 'hour', 'time', 'timing', 'shut'],
  ],
  [
    'price',
    /\b(how much|prices?|pricing|costs?|costing|charges?|fees?|rates?|expensive|cheap|afford|pay for|tariffs?)\b/,
    ['price', 'pricing', 'cost', 'costing', 'charg', 'charge', 'fee', 'rate', 'expens', 'cheap', 'afford', 'tariff'],
  ],
  [
    'phone',
    /\b(phone|telephone|call (you|u|the)|ring you|phone number|your number|contact number|mobile(?! apps?))\b/,
    ['phone', 'call', 'ring', 'number', 'contact'],
  ],
  ['email', /\b(email|e-mail)\b/, ['email', 'address', 'contact']],
  [
    'address',
    /\b(where (are|is) (you|the \w+|your)|address|located|location|find you|directions|get there|get to you|situated|whereabouts)\b/,
    ['address', 'locat', 'location', 'direct', 'direction', 'situat', 'whereabout'],
  ],
];

/** "When did the bakery open?", "since when are you open": the business's start, not its hours. */
const PAST_OPENING = /\b(did|when was)\b.*\bopen(ed)?\b|\bopened\b|\bsince when\b|\bfirst open/;

/** What a "how long / how far / how often" question is answered with. */
export type Measure = 'duration' | 'distance' | 'frequency' | 'year';

const MEASURES: Array<[Measure, RegExp]> = [
  ['year', /\bwhen (did|was|were)\b|\bsince when\b|\bwhat year\b|\bhow old\b/],
  ['duration', /\bhow (long|fast|quickly|soon)\b|\bhow far (in advance|ahead)\b/],
  ['distance', /\bhow far\b(?! (in advance|ahead))/],
  ['frequency', /\bhow often\b/],
];

/** The measure said in a text ("90 minutes", "20 miles", "every six months"). */
export const MEASURE_IN_TEXT: Record<Measure, RegExp> = {
  duration:
    /\b(\d+|one|two|three|four|five|six|seven|eight|nine|ten|twelve|a few|an?)\s*(-\s*)?(to \d+ )?((working|business) )?(minutes?|mins?|hours?|days?|weeks?|months?|years?)\b|\bsame[- ]day\b|\bin one day\b/i,
  distance: /\b\d+\s*(miles?|km|kilometres?|kilometers?|minutes'? (walk|drive))\b/i,
  year: /\b(19|20)\d\d\b/,
  frequency: /\bevery\b|\b(once|twice|\d+ times) (a|per)\b|\b(daily|weekly|monthly|yearly|annually|hourly)\b/i,
};

export interface Question {
  /** Content terms: what the question is about. */
  terms: string[];
  /** "How long…", "how far…", "how often…": the kind of measure the answer states. */
  measure?: Measure;
  /** The kinds of fact that answer it. */
  intents: Set<Intent>;
  /** Every term, intent words included (for retrieval). */
  allTerms: string[];
  /** Every term as the visitor said it, shape words ("how long", "the bakery") included. */
  saidTerms: string[];
}

/**
 * Words that only shape the question: "how long", "how far", "how often", "how fast" ask for a
 * duration, distance, frequency or speed, which the answer says as a number, not as that word; "the
 * bakery", "your practice" is the business itself, as "you" is.
 */
const SHAPE_WORDS =
  /\bhow (long|far(?! (in advance|ahead))|often|fast|quickly|soon)\b|\b(the|this|your|ur) (business|company|firm|practice|practise|clinic|shop|store|bakery|cafe|restaurant|salon|studio|agency|office|place)\b(?! (hours|times|number|email|address|phone|name|called))/g;

export function analyseQuestion(text: string): Question {
  const normal = normalise(text);
  const asked = normal.replace(SHAPE_WORDS, (match) => (match.startsWith('how ') ? 'how' : ''));
  const intents = new Set<Intent>();
  const intentWords = new Set<string>();
  for (const [intent, pattern, stems] of INTENTS) {
    if (pattern.test(normal) && !(intent === 'hours' && PAST_OPENING.test(normal))) {
      intents.add(intent);
      for (const s of stems) intentWords.add(stem(s));
    }
  }
  // "e-mail address" is the e-mail intent, not a street address.
  if (intents.has('email') && !/\b(where|located|street|directions)\b/.test(normal)) intents.delete('address');
  const all = terms(asked);
  const measure = MEASURES.find(([, pattern]) => pattern.test(normal))?.[0];
  return {
    terms: [...new Set(all.filter((t) => !intentWords.has(t)))],
    intents,
    allTerms: [...new Set(all)],
    saidTerms: [...new Set(terms(text))],
    ...(measure && { measure }),
  };
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
