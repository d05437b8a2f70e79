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
    case 'hours':
      return hasHours(text) || ((TIME.test(text) || CLOSED.test(text)) && HOURS_CONTEXT.test(unit.context));
    case 'price':
      return PRICE.test(text) || /\bfree\b/i.test(text);
    case 'phone':
      return hasPhone(text);
    case 'email':
      return EMAIL.test(text);
    case 'address':
      return hasAddress(text) || (POSTCODE.test(text) && /\b(street|road|find us|located|address)\b/i.test(text + ' ' + unit.context));
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
  for (const [id, matchedQuery] of hits) {
    const unit = index.units[id]!;
    let covered = 0;
    let inText = 0;
    for (const term of terms) {
      const weight = idf(index, term);
      const exactText = unit.textTerms.has(term);
      if (exactText || unit.contextTerms.has(term) || matchedQuery.has(term)) covered += weight;
      if (exactText || (matchedQuery.has(term) && !unit.contextTerms.has(term))) inText += weight;
    }
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
    if (unit.kind === 'faq') score += 0.1;
    if (unit.kind === 'prompt') score -= 0.05;
    if (!terms.length && intents.has('hours')) {
      // "What are your hours?": the sentence or list that says the hours outright.
      if (HOURS_CONTEXT.test(unit.text)) score += 0.15;
      if (unit.kind === 'list' && HOURS_CONTEXT.test(unit.context)) score += 0.12;
      if (unit.kind === 'item') score -= 0.1;
    }
    // The footer's "Contact details" block answers only when the pages themselves do not.
    if (unit.heading === 'Contact details') score -= 0.08;
    if (!terms.length && (intents.has('phone') || intents.has('email') || intents.has('address')) && /\b(call|phone|email|find us|address|located)\b/i.test(unit.text)) score += 0.1;
    candidates.push({ unit, score, coverage, evidence, intentsMet, similarity: sim });
  }
  candidates.sort((a, b) => b.score - a.score || a.unit.id - b.unit.id);
  return candidates.slice(0, limit);
}

/** Whether a candidate may be said as the answer. */
export function answers(candidate: Candidate | undefined, question: Question): boolean {
  if (!candidate) return false;
  if (!question.terms.length && !question.intents.size) return false;
  if (question.intents.size && !candidate.evidence) return false;
  return candidate.coverage >= MIN_COVERAGE;
}
