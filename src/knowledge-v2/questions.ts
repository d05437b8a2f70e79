/**
 * The built-in schemas (offline): what a business of a kind must be able to answer. Every schema
 * starts with the common questions (hours, prices, services, contact, booking, cancellation or
 * refund policy); a business type chosen from the site's words adds its own. Question keys are
 * stable, so generating the schema again keeps the ids and states of the questions that remain.
 */

export interface SchemaQuestion {
  key: string;
  question: string;
  topic: string;
}

const COMMON: SchemaQuestion[] = [
  { key: 'hours', question: 'What are your opening hours?', topic: 'hours' },
  { key: 'prices', question: 'How much do your products or services cost?', topic: 'prices' },
  { key: 'services', question: 'What services or products do you offer?', topic: 'services' },
  { key: 'contact', question: 'How can customers contact you (phone, email, address)?', topic: 'contact' },
  { key: 'booking', question: 'How do customers book or order?', topic: 'booking' },
  { key: 'cancellation', question: 'What is your cancellation or refund policy?', topic: 'policies' },
  { key: 'location', question: 'Where are you located?', topic: 'contact' },
  { key: 'payment', question: 'Which payment methods do you accept?', topic: 'policies' },
];

interface BusinessType {
  type: string;
  /** Words of the site that point to this kind of business (stems, matched as word starts). */
  words: string[];
  questions: SchemaQuestion[];
}

export const BUSINESS_TYPES: BusinessType[] = [
  {
    type: 'bakery',
    words: ['bakery', 'bakeries', 'bake', 'bread', 'sourdough', 'pastry', 'pastries', 'croissant', 'cake'],
    questions: [
      { key: 'dietary', question: 'Do you have gluten-free or vegan options?', topic: 'services' },
      { key: 'custom_orders', question: 'Do you make custom cakes or take special orders?', topic: 'services' },
      { key: 'delivery', question: 'Do you deliver, and where?', topic: 'areas' },
    ],
  },
  {
    type: 'restaurant',
    words: ['restaurant', 'menu', 'dinner', 'lunch', 'cuisine', 'chef', 'reservation', 'dining'],
    questions: [
      { key: 'dietary', question: 'Do you have vegetarian, vegan or allergy-friendly dishes?', topic: 'services' },
      { key: 'reservations', question: 'Do you take reservations for groups?', topic: 'booking' },
      { key: 'delivery', question: 'Do you offer takeaway or delivery?', topic: 'areas' },
    ],
  },
  {
    type: 'plumber',
    words: ['plumber', 'plumbing', 'boiler', 'leak', 'drain', 'pipe', 'heating'],
    questions: [
      { key: 'emergency', question: 'Do you offer emergency call-outs?', topic: 'services' },
      { key: 'areas', question: 'Which areas do you cover?', topic: 'areas' },
      { key: 'guarantee', question: 'Do you guarantee your work?', topic: 'policies' },
    ],
  },
  {
    type: 'dental clinic',
    words: ['dental', 'dentist', 'teeth', 'tooth', 'orthodont', 'hygienist'],
    questions: [
      { key: 'new_patients', question: 'Are you accepting new patients?', topic: 'services' },
      { key: 'insurance', question: 'Which insurance plans do you accept?', topic: 'policies' },
      { key: 'emergency', question: 'Do you see dental emergencies?', topic: 'services' },
    ],
  },
  {
    type: 'law firm',
    words: ['lawyer', 'attorney', 'solicitor', 'legal advice', 'law firm', 'litigation', 'counsel'],
    questions: [
      { key: 'consultation', question: 'Do you offer a first consultation, and what does it cost?', topic: 'prices' },
      { key: 'practice_areas', question: 'Which areas of law do you practise?', topic: 'services' },
    ],
  },
  {
    type: 'software',
    words: ['software', 'saas', 'app', 'platform', 'api', 'integration', 'subscription', 'dashboard'],
    questions: [
      { key: 'trial', question: 'Is there a free trial?', topic: 'prices' },
      { key: 'support', question: 'How do customers get support?', topic: 'contact' },
      { key: 'integrations', question: 'Which tools does it integrate with?', topic: 'services' },
    ],
  },
  {
    type: 'hair salon',
    words: ['salon', 'haircut', 'hairdresser', 'barber', 'colour', 'stylist'],
    questions: [{ key: 'walk_ins', question: 'Do you take walk-ins?', topic: 'booking' }],
  },
];

/** The kind of business the words name most often (null when none stands out). */
export function businessTypeOf(text: string): string | null {
  const lower = ` ${text.toLowerCase()} `;
  let best: { type: string; score: number } | undefined;
  for (const kind of BUSINESS_TYPES) {
    let score = 0;
    for (const word of kind.words) {
      const matches = lower.match(new RegExp(`\\b${word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`, 'g'));
      score += Math.min(matches?.length ?? 0, 10);
    }
    if (score >= 2 && (!best || score > best.score)) best = { type: kind.type, score };
  }
  return best?.type ?? null;
}

/** The schema of a business type: the common questions, then the type's own. */
export function schemaFor(businessType: string | null): SchemaQuestion[] {
  const extra = BUSINESS_TYPES.find((b) => b.type === businessType)?.questions ?? [];
  const seen = new Set<string>();
  return [...COMMON, ...extra].filter((q) => !seen.has(q.key) && seen.add(q.key));
}

/** A key for a question a language model proposed: its words, short, as a slug. */
export function keyOf(question: string): string {
  return (
    question
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '_')
      .replace(/^_+|_+$/g, '')
      .slice(0, 60) || 'question'
  );
}

/** Question keys the common set has (a model's schema keeps them, so every schema asks them). */
export const COMMON_KEYS = COMMON.map((q) => q.key);
export const COMMON_QUESTIONS = COMMON;

/** Base ISO 639-1 language of a page: its `lang` attribute, else a guess from common words. */
export function languageOf(htmlLang: string | null | undefined, text: string): string | null {
  const declared = htmlLang?.trim().toLowerCase().split(/[-_]/)[0];
  if (declared && /^[a-z]{2}$/.test(declared)) return declared;
  const words = text.toLowerCase().split(/[^\p{L}]+/u);
  const counts: Record<string, number> = {};
  const markers: Record<string, string[]> = {
    en: ['the', 'and', 'you', 'our', 'with'],
    de: ['und', 'der', 'die', 'wir', 'mit'],
    fr: ['les', 'et', 'nous', 'vous', 'avec'],
    es: ['los', 'y', 'nuestro', 'con', 'para'],
    pt: ['os', 'e', 'nosso', 'com', 'para'],
    it: ['il', 'e', 'nostro', 'con', 'per'],
  };
  for (const word of words) for (const [lang, list] of Object.entries(markers)) if (list.includes(word)) counts[lang] = (counts[lang] ?? 0) + 1;
  const [lang, n] = Object.entries(counts).sort((a, b) => b[1] - a[1])[0] ?? [];
  return lang && (n ?? 0) >= 3 ? lang : null;
}
