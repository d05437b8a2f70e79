/**
 * Which knowledge units answer a question, and how well. MiniSearch proposes candidates; each is
 * then judged by coverage (the share of the question's content words, weighted by how rare they
 * are, that the unit or its headings contain) and, for questions about hours, prices, phone,
 * e-mail or address, by whether the unit holds that kind of fact at all. A question whose best
 * candidate falls short is not answered: the engine says it does not know.
 */
import { EMAIL, PRICE, TIME, CLOSED, hasAddress, hasHours, hasPhone, POSTCODE } from '../knowledge/patterns.js';
import type { KnowledgeIndex, Unit } from './knowledge-index.js';
import type { Intent, Question } from './text.js';
import { similarity } from './embeddings.js';
import { sentences } from '../knowledge/compile.js';
import { MEASURE_IN_TEXT, terms as terms_ } from './text.js';

export interface Candidate {
  unit: Unit;
  score: number;
  /** Share of the question's content (rarity-weighted) found in the unit or its headings. */
  coverage: number;
  /** The unit holds the kind of fact the question's intent asks for. */
  evidence: boolean;
  intentsMet: Intent[];
  /** Cosine similarity of the unit's vector to the question's (0 without embeddings). */
  similarity: number;
  /** The question's object (its last content word: "bathroom" in "can you fit a new bathroom?") is in the unit or its headings. */
  objectMet: boolean;
}

/** The question's vector and the similarity at which meaning alone answers (optional embeddings). */
export interface SemanticQuery {
  vector: Float32Array;
  minSimilarity: number;
}

/** Units proposed by meaning, at most. */
const SEMANTIC_CANDIDATES = 20;
/** Units less similar than this are not proposed by meaning at all. */
const SEMANTIC_FLOOR = 0.3;

/** Coverage a candidate needs to be said as an answer. */
export const MIN_COVERAGE = 0.6;

const HOURS_CONTEXT = /\b(hours?|opening|open|times?)\b/i;

export function evidenceFor(intent: Intent, unit: Unit): boolean {
  const text = unit.text;
  switch (intent) {
    case 'hours': {
      // "$7.00" is a price, not seven o'clock.
      const timed = text.replace(new RegExp(PRICE.source, 'gi'), ' ');
      return hasHours(timed) || ((TIME.test(timed) || CLOSED.test(timed)) && HOURS_CONTEXT.test(unit.context));
    }
    case 'price':
      // A price, or what prices are ("prices include VAT", "quotes are free").
      return PRICE.test(text) || /\b(free|prices?|fees?|vat|tax(es)?)\b/i.test(text);
    case 'phone':
      return hasPhone(text);
    case 'email':
      return EMAIL.test(text);
    case 'address':
      return (
        unit.identity === 'town' || hasAddress(text) || (POSTCODE.test(text) && /\b(street|road|find us|located|address)\b/i.test(text + ' ' + unit.context))
      );
  }
}

function idf(index: KnowledgeIndex, term: string): number {
  return Math.log(1 + index.units.length / (1 + (index.df.get(term) ?? 0)));
}

export function rank(index: KnowledgeIndex, question: Question, followUp: string[] = [], limit = 40, semantic?: SemanticQuery): Candidate[] {
  const { terms, intents } = question;
  const queryTerms = [...new Set([...question.allTerms, ...followUp])];
  const hits = new Map<number, Set<string>>();
  if (queryTerms.length) {
    for (const result of index.search.search(queryTerms.join(' ')).slice(0, 60)) hits.set(result.id as number, new Set(result.queryTerms));
  }
  // A question that is only an intent ("what are your hours?") may share no word with its answer.
  if (intents.size && !terms.length) {
    for (const unit of index.units) if (!hits.has(unit.id) && [...intents].some((i) => evidenceFor(i, unit))) hits.set(unit.id, new Set());
  }
  // Meaning: the units nearest the question join the candidates ("fix bikes" → "repair bicycles").
  const similarities = new Map<number, number>();
  if (semantic && index.vectors) {
    const near: Array<[number, number]> = [];
    index.vectors.forEach((vector, id) => {
      if (!vector) return;
      const s = similarity(semantic.vector, vector);
      similarities.set(id, s);
      if (s >= SEMANTIC_FLOOR) near.push([id, s]);
    });
    near.sort((a, b) => b[1] - a[1]);
    for (const [id] of near.slice(0, SEMANTIC_CANDIDATES)) if (!hits.has(id)) hits.set(id, new Set());
  }
  if (!hits.size) return [];
  const total = terms.reduce((sum, t) => sum + idf(index, t), 0);
  const candidates: Candidate[] = [];
  // The business's name answers only a question about a name ("what is the bakery called?").
  const asksName = terms.includes('name') || terms.includes('call');
  // What the question is about: its last content word, the object of its verb ("fit a new bathroom",
  // "a free plan"). A unit that shares only the verb or an adjective is about something else.
  const object = terms.length >= 2 ? terms[terms.length - 1] : undefined;
  for (const [id, matchedQuery] of hits) {
    const unit = index.units[id]!;
    if (unit.identity === 'business' && !asksName) continue;
    let covered = 0;
    let inText = 0;
    let inContext = 0;
    for (const term of terms) {
      const weight = idf(index, term);
      const exactText = unit.textTerms.has(term);
      if (unit.contextTerms.has(term)) inContext += weight;
      if (exactText || unit.contextTerms.has(term) || matchedQuery.has(term)) covered += weight;
      if (exactText || (matchedQuery.has(term) && !unit.contextTerms.has(term))) inText += weight;
    }
    // A FAQ whose whole question is inside the visitor's ("is there a limit on invoices?" in "is there
    // a limit on how many invoices I can send?") answers it, whatever other words the visitor used.
    const faqQuestion = unit.kind === 'faq' && unit.context === unit.heading;
    const faqInside =
      faqQuestion && unit.contextTerms.size >= 2 && [...unit.contextTerms].every((t) => queryTerms.includes(t) || question.saidTerms.includes(t));
    if (faqInside) covered = Math.max(covered, (MIN_COVERAGE + 0.1) * total);
    const sim = similarities.get(id) ?? 0;
    // A unit close enough in meaning covers the question as well as one that shares its words.
    const lexical = total ? covered / total : 1;
    const coverage = semantic && sim >= semantic.minSimilarity ? Math.max(lexical, MIN_COVERAGE + (sim - semantic.minSimilarity)) : lexical;
    const textCoverage = total ? inText / total : 0;
    const intentsMet = [...intents].filter((i) => evidenceFor(i, unit));
    const evidence = !intents.size || intentsMet.length > 0;
    let score = coverage + 0.35 * textCoverage + 0.3 * sim + (unit.primary ? 0.05 : -0.05);
    if (intents.size) score += evidence ? 0.3 : -0.5;
    if (followUp.length) score += 0.05 * followUp.filter((t) => unit.textTerms.has(t) || unit.contextTerms.has(t)).length;
    if (unit.kind === 'answer') score += 0.15;
    // The owner's word wins over what a page says about the same thing.
    if (unit.kind === 'fact') score += 0.3;
    // A FAQ answer is the answer when its question is the visitor's (its question is its context).
    if (unit.kind === 'faq') score += 0.2 * (total ? inContext / total : 0);
    // A price row named by the question ("how much is the Team plan?"): its first cell is what was asked.
    if (unit.kind === 'row' && unit.cells?.[0]) {
      const named = terms_(unit.cells[0]);
      if (named.length && named.every((t) => terms.includes(t))) score += 0.3;
    }
    // Of two units that cover the question alike, the one more about it (fewer other words).
    if (unit.textTerms.size) score += 0.1 * (terms.filter((t) => unit.textTerms.has(t)).length / unit.textTerms.size);
    // "How long does it take?" is answered by a unit that says how long.
    if (question.measure && MEASURE_IN_TEXT[question.measure].test(unit.text)) score += 0.25;
    // "What is the bakery called?": the business's name, not a sentence that happens to say "named".
    if (unit.identity === 'business') score += 0.5;
    // A price question is answered by the price said with what was asked ("Wedding cakes: from
    // $350"), not by another price in the same unit ("delivery is $20").
    if (intents.has('price') && total) score += 0.3 * priceNear(index, unit, terms, total) - 0.15;
    if (unit.kind === 'prompt') score -= 0.05;
    // The town answers "where are you?" only when no page gives the street address.
    if (unit.identity === 'town' && intents.has('address')) score -= 0.2;
    // An old background page (last year's prices, a past season's hours) yields to newer pages.
    if (unit.stale) score -= 0.3;
    if (!terms.length && intents.has('hours')) {
      // "What are your hours?": the sentence or list that says the hours outright.
      if (HOURS_CONTEXT.test(unit.text)) score += 0.15;
      if (unit.kind === 'list' && HOURS_CONTEXT.test(unit.context)) score += 0.12;
      if (unit.kind === 'item') score -= 0.1;
    }
    // The footer's "Contact details" block answers only when the pages themselves do not.
    if (unit.heading === 'Contact details') score -= 0.08;
    if (
      !terms.length &&
      (intents.has('phone') || intents.has('email') || intents.has('address')) &&
      /\b(call|phone|email|find us|address|located)\b/i.test(unit.text)
    )
      score += 0.1;
    // A FAQ asking the visitor's question (inside it, or the same but for the object's wording:
    // "bring to my first appointment?" for "…first visit?") is about the same thing.
    const sameFaq = faqInside || (faqQuestion && terms.length >= 3 && terms.slice(0, -1).every((t) => unit.contextTerms.has(t)));
    const objectMet =
      !object ||
      sameFaq ||
      unit.textTerms.has(object) ||
      unit.contextTerms.has(object) ||
      matchedQuery.has(object) ||
      (semantic !== undefined && sim >= semantic.minSimilarity);
    candidates.push({ unit, score, coverage, evidence, intentsMet, similarity: sim, objectMet });
  }
  candidates.sort((a, b) => b.score - a.score || a.unit.id - b.unit.id);
  return candidates.slice(0, limit);
}

/** An amount of money (not "free of charge"): what a price question asks for. */
const AMOUNT = /[$€£¥₹]\s?\d|\d\s?([€£$]|\b(usd|eur|gbp|chf|dollars?|euros?|pounds?)\b)/i;

/** The best share of the question's terms said in one sentence (or row) of the unit that holds a price. */
function priceNear(index: KnowledgeIndex, unit: Unit, terms: string[], total: number): number {
  let best = 0;
  const parts = unit.kind === 'row' ? [unit.text] : sentences(unit.text);
  for (const part of parts) {
    if (!AMOUNT.test(part)) continue;
    const said = new Set([...terms_(part), ...(unit.kind === 'row' ? unit.contextTerms : [])]);
    const share = terms.reduce((sum, t) => sum + (said.has(t) ? idf(index, t) : 0), 0) / total;
    best = Math.max(best, share);
  }
  return best;
}

/** Whether a candidate may be said as the answer. */
export function answers(candidate: Candidate | undefined, question: Question): boolean {
  if (!candidate) return false;
  if (!question.terms.length && !question.intents.size) return false;
  if (question.intents.size && !candidate.evidence) return false;
  // "How long…?" is not answered by a unit that says no duration.
  if (question.measure && !MEASURE_IN_TEXT[question.measure].test(candidate.unit.text)) return false;
  // Hours and prices change: an old page's are not said as today's.
  if (candidate.unit.stale && (question.intents.has('hours') || question.intents.has('price'))) return false;
  // A unit without the question's object answers another question ("a new boiler is fitted in a day"
  // is not "can you fit a new bathroom?").
  if (!candidate.objectMet) return false;
  return candidate.coverage >= MIN_COVERAGE;
}
