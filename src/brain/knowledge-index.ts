/**
 * An agent's knowledge as a searchable index of small units (a sentence, a list item, a whole short
 * list, a table row, a FAQ answer, an owner's answer), each with its headings and source. MiniSearch
 * (BM25, with one-letter typos forgiven in longer words) finds candidates; the offline engine then judges whether a
 * candidate really answers. Indexes live in a bounded LRU per agent, keyed on the knowledge version,
 * the system prompt and the agent's name, so any change is picked up by the next answer (on any node).
 *
 * A question in the text is never a unit (it is what a visitor asks, not an answer): a question
 * heading, or a paragraph that opens with a question, gives the text after it a `faq` unit. Who
 * the agent is (identity.ts) becomes `identity` units. A page dated two years or more before the
 * site's newest dated page (an old blog post's prices) is `stale`: the engine prefers newer pages.
 */
import { LRUCache } from 'lru-cache';
import crypto from 'node:crypto';
import MiniSearch from 'minisearch';
import { parseBlocks, type Block } from '../knowledge/blocks.js';
import { sentences, rowText } from '../knowledge/compile.js';
import type { KnowledgeSnapshot } from '../knowledge/service.js';
import type { AnswerSource } from './engine.js';
import { dayTerms, terms } from './text.js';
import { identityOf, type Identity } from './identity.js';
import { sameText } from '../knowledge/v2/store.js';

export type UnitKind = 'sentence' | 'item' | 'list' | 'row' | 'faq' | 'answer' | 'prompt' | 'identity' | 'fact';

export interface Unit {
  id: number;
  kind: UnitKind;
  /** What would be said (plain text). */
  text: string;
  /** The headings above it and the page title. */
  context: string;
  heading: string;
  textTerms: Set<string>;
  contextTerms: Set<string>;
  source: AnswerSource;
  primary: boolean;
  /** For list units: the items; for rows: headers and cells. */
  items?: string[];
  headers?: string[];
  cells?: string[];
  /** The sentence after this one in its paragraph (to complete a short answer). */
  next?: string;
  /** The sentence before, said first when this one opens with a pronoun ("He speaks Spanish."). */
  previous?: string;
  /** From a page dated well before the site's newest (newer pages may contradict it). */
  stale?: boolean;
  /** For identity units: what the unit says (the business's name, its town, the agent). */
  identity?: 'business' | 'town' | 'agent';
}

/** Words a visitor uses for the business's name ("what is the bakery called?"). */
const NAME_CONTEXT = 'name called business company firm practice clinic office shop store place product app brand website site';
const TOWN_CONTEXT = 'town city area located based where';
const AGENT_CONTEXT = 'your name who assistant';

const INSTRUCTION = /^(you|you're|be|answer|keep|use|speak|respond|reply|talk|act|greet)\b/i;

const isQuestion = (text: string) => /\?["”’)]?\s*$/.test(text.trim());

/** A page's date: a year said as when it was posted, published or updated, or in its title. */
function pageYear(page: { title: string; content: string }): number | undefined {
  const said = /\b(?:posted|published|updated|written|last updated|last modified)\b[^\n]{0,40}?\b((?:19|20)\d\d)\b/i.exec(page.content);
  const titled = /\b((?:19|20)\d\d)\b/.exec(page.title);
  const year = Number(said?.[1] ?? titled?.[1]);
  return Number.isFinite(year) && year > 0 ? year : undefined;
}

export interface KnowledgeIndex {
  key: string;
  units: Unit[];
  search: MiniSearch<{ id: number; text: string; context: string }>;
  /** Units each term appears in (text or context). */
  df: Map<string, number>;
  snapshot: KnowledgeSnapshot;
  /** Who the agent is and whose it is (identity.ts). */
  identity?: Identity;
  /** Unit vectors by unit id, when an embeddings endpoint is configured and has answered. */
  vectors?: Array<Float32Array | undefined>;
}

export function buildIndex(snapshot: KnowledgeSnapshot, systemPrompt: string | null, key: string, agentName?: string): KnowledgeIndex {
  const units: Unit[] = [];
  // Words of the pages the owner overruled (knowledge v2: changed, removed, corrected) are not said.
  const overruled = new Set(snapshot.overruled ?? []);
  const add = (unit: Omit<Unit, 'id' | 'textTerms' | 'contextTerms'>) => {
    // A question is never an answer: said back, it would echo the visitor.
    if (!unit.text.trim() || (unit.kind !== 'answer' && unit.kind !== 'fact' && isQuestion(unit.text))) return;
    if (overruled.size && unit.kind !== 'fact' && overruled.has(sameText(unit.text))) return;
    units.push({ ...unit, id: units.length, textTerms: new Set([...terms(unit.text), ...dayTerms(unit.text)]), contextTerms: new Set(terms(unit.context)) });
  };
  const addBlocks = (blocks: Block[], title: string, source: AnswerSource, primary: boolean, stale = false) => {
    let previous: Block | undefined;
    for (const block of blocks) {
      const heading = block.headings[block.headings.length - 1] ?? '';
      const context = [title, ...block.headings].filter(Boolean).join(' · ');
      // The first block right under a question heading is that question's answer (FAQ pages).
      const answersHeading = isQuestion(heading) && previous?.kind === 'heading' && previous.text === heading;
      if (block.kind === 'paragraph') {
        const parts = sentences(block.text);
        if (answersHeading) add({ kind: 'faq', text: parts.slice(0, 3).join(' '), context: heading, heading, source, primary, stale });
        // "Burst pipe or no heating? Our engineers are on call…": the question is the context of what follows.
        const asked = parts.filter(isQuestion);
        const told = parts.filter((p) => !isQuestion(p));
        if (asked.length && told.length && isQuestion(parts[0]!)) {
          add({ kind: 'faq', text: told.slice(0, 3).join(' '), context: `${context} · ${asked.join(' ')}`, heading: asked[0]!, source, primary, stale });
        }
        const sentenceContext = asked.length ? `${context} · ${asked.join(' ')}` : context;
        told.forEach((sentence, i) =>
          add({ kind: 'sentence', text: sentence, context: sentenceContext, heading, source, primary, next: told[i + 1], previous: told[i - 1], stale }),
        );
      } else if (block.kind === 'list') {
        const items = block.items ?? [];
        for (const item of items) add({ kind: 'item', text: item, context, heading, source, primary, stale });
        if (items.length > 1 && items.length <= 10)
          add({ kind: answersHeading ? 'faq' : 'list', text: items.join('; '), context, heading, source, primary, items, stale });
      } else if (block.kind === 'table') {
        for (const row of block.rows ?? [])
          add({
            kind: 'row',
            text: rowText(block.headers ?? [], row),
            context: `${context} · ${(block.headers ?? []).join(' ')}`,
            heading,
            source,
            primary,
            headers: block.headers,
            cells: row,
            stale,
          });
      }
      previous = block;
    }
  };
  const identity = identityOf(snapshot, systemPrompt, agentName);
  const said: AnswerSource = { kind: 'system_prompt', title: 'Instructions' };
  if (identity.business)
    add({ kind: 'identity', identity: 'business', text: `We're ${identity.business}.`, context: NAME_CONTEXT, heading: '', source: said, primary: true });
  if (identity.town)
    add({ kind: 'identity', identity: 'town', text: `We're in ${identity.town}.`, context: TOWN_CONTEXT, heading: '', source: said, primary: true });
  add({
    kind: 'identity',
    identity: 'agent',
    text: `I'm ${identity.agentName}, the virtual assistant of ${identity.business ?? 'this website'}.`,
    context: AGENT_CONTEXT,
    heading: '',
    source: said,
    primary: true,
  });
  // Knowledge v2's facts from the owner (answers, ops, corrections, gap answers): ranked first.
  // Facts read from a page or section are already there as that page's own units.
  for (const fact of snapshot.knownFacts ?? []) {
    if (!fact.owner) continue;
    add({
      kind: 'fact',
      text: fact.text,
      context: fact.question ?? '',
      heading: fact.question ?? '',
      source: fact.gap ? { kind: 'gap_answer', title: fact.question ?? 'Answer' } : { kind: 'owner', title: fact.question ?? 'The owner' },
      primary: true,
    });
  }
  for (const answer of snapshot.answers) {
    add({
      kind: 'answer',
      text: answer.answer,
      context: answer.question,
      heading: answer.question,
      source: { kind: 'gap_answer', title: answer.question },
      primary: true,
    });
  }
  for (const section of snapshot.sections) {
    addBlocks(parseBlocks(section.content), section.title, { kind: 'section', title: section.title }, true);
  }
  const years = new Map(snapshot.pages.map((page) => [page.id, pageYear(page)]));
  const newest = Math.max(0, ...[...years.values()].filter((y): y is number => y !== undefined));
  for (const page of snapshot.pages) {
    const year = years.get(page.id);
    const stale = year !== undefined && year <= newest - 2;
    addBlocks(parseBlocks(page.content), page.title, { kind: 'page', title: page.title || page.url, url: page.url }, page.isPrimary, stale);
  }
  if (systemPrompt?.trim()) {
    for (const block of parseBlocks(systemPrompt)) {
      if (block.kind === 'heading') continue;
      for (const sentence of block.kind === 'list' ? (block.items ?? []) : sentences(block.text)) {
        // "You are Ava…", "Be warm": instructions to the agent, not facts to tell a visitor.
        if (INSTRUCTION.test(sentence)) continue;
        add({ kind: 'prompt', text: sentence, context: '', heading: '', source: { kind: 'system_prompt', title: 'Instructions' }, primary: true });
      }
    }
  }

  const df = new Map<string, number>();
  for (const unit of units) for (const term of new Set([...unit.textTerms, ...unit.contextTerms])) df.set(term, (df.get(term) ?? 0) + 1);
  const search = new MiniSearch<{ id: number; text: string; context: string }>({
    fields: ['text', 'context'],
    // Terms are already stemmed and filtered (text.ts): MiniSearch only splits on spaces.
    tokenize: (text) => text.split(' ').filter(Boolean),
    processTerm: (term) => term,
    searchOptions: { boost: { text: 2 }, fuzzy: (term) => (term.length >= 6 ? 1 : 0), combineWith: 'OR' },
  });
  search.addAll(units.map((u) => ({ id: u.id, text: [...u.textTerms].join(' '), context: [...u.contextTerms].join(' ') })));
  return { key, units, search, df, snapshot, identity };
}

/** Per-agent indexes, most recently used kept, at most `capacity` of them. */
export class IndexCache {
  private readonly entries: LRUCache<number, KnowledgeIndex>;

  constructor(capacity = 100) {
    this.entries = new LRUCache({ max: capacity });
  }

  static key(version: number, systemPrompt: string | null, agentName = ''): string {
    return `${version}:${crypto
      .createHash('sha1')
      .update(`${agentName}\u0000${systemPrompt ?? ''}`)
      .digest('base64url')
      .slice(0, 12)}`;
  }

  get(agentId: number, key: string): KnowledgeIndex | undefined {
    const entry = this.entries.get(agentId);
    return entry && entry.key === key ? entry : undefined;
  }

  set(agentId: number, index: KnowledgeIndex): void {
    this.entries.set(agentId, index);
  }

  drop(agentId: number): void {
    this.entries.delete(agentId);
  }

  get size(): number {
    return this.entries.size;
  }
}
