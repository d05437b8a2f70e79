/**
 * An agent's knowledge as a searchable index of small units (a sentence, a list item, a whole short
 * list, a table row, a FAQ answer, an owner's answer), each with its headings and source. MiniSearch
 * (BM25, with one-letter typos forgiven in longer words) finds candidates; the offline engine then judges whether a
 * candidate really answers. Indexes live in a bounded LRU per agent, keyed on the knowledge version
 * and the system prompt, so any change is picked up by the next answer (on any node).
 */
import crypto from 'node:crypto';
import MiniSearch from 'minisearch';
import { parseBlocks, type Block } from '../knowledge/blocks.js';
import { sentences, rowText } from '../knowledge/compile.js';
import type { KnowledgeSnapshot } from '../knowledge/service.js';
import type { AnswerSource } from './engine.js';
import { terms } from './text.js';
import { sameText } from '../knowledge/v2/store.js';

export type UnitKind = 'sentence' | 'item' | 'list' | 'row' | 'faq' | 'answer' | 'prompt' | 'fact';

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
}

export interface KnowledgeIndex {
  key: string;
  units: Unit[];
  search: MiniSearch<{ id: number; text: string; context: string }>;
  /** Units each term appears in (text or context). */
  df: Map<string, number>;
  snapshot: KnowledgeSnapshot;
  /** Unit vectors by unit id, when an embeddings endpoint is configured and has answered. */
  vectors?: Array<Float32Array | undefined>;
}

export function buildIndex(snapshot: KnowledgeSnapshot, systemPrompt: string | null, key: string): KnowledgeIndex {
  const units: Unit[] = [];
  // Words of the pages the owner overruled (knowledge v2: changed, removed, corrected) are not said.
  const overruled = new Set(snapshot.overruled ?? []);
  const add = (unit: Omit<Unit, 'id' | 'textTerms' | 'contextTerms'>) => {
    if (!unit.text.trim()) return;
    if (overruled.size && unit.kind !== 'fact' && overruled.has(sameText(unit.text))) return;
    units.push({ ...unit, id: units.length, textTerms: new Set(terms(unit.text)), contextTerms: new Set(terms(unit.context)) });
  };
  const addBlocks = (blocks: Block[], title: string, source: AnswerSource, primary: boolean) => {
    let previous: Block | undefined;
    for (const block of blocks) {
      const heading = block.headings[block.headings.length - 1] ?? '';
      const context = [title, ...block.headings].filter(Boolean).join(' · ');
      if (block.kind === 'paragraph') {
        const parts = sentences(block.text);
        // A paragraph right under a question heading is that question's answer (FAQ pages).
        if (heading.endsWith('?') && previous?.kind === 'heading' && previous.text === heading) {
          add({ kind: 'faq', text: parts.slice(0, 3).join(' '), context: heading, heading, source, primary });
        }
        parts.forEach((sentence, i) => add({ kind: 'sentence', text: sentence, context, heading, source, primary, next: parts[i + 1] }));
      } else if (block.kind === 'list') {
        const items = block.items ?? [];
        for (const item of items) add({ kind: 'item', text: item, context, heading, source, primary });
        if (items.length > 1 && items.length <= 10) add({ kind: 'list', text: items.join('; '), context, heading, source, primary, items });
      } else if (block.kind === 'table') {
        for (const row of block.rows ?? []) add({ kind: 'row', text: rowText(block.headers ?? [], row), context: `${context} · ${(block.headers ?? []).join(' ')}`, heading, source, primary, headers: block.headers, cells: row });
      }
      previous = block;
    }
  };
  // Knowledge v2's facts from the owner (answers, ops, corrections, gap answers): ranked first.
  // Facts read from a page or section are already there as that page's own units.
  for (const fact of snapshot.knownFacts ?? []) {
    if (!fact.owner) continue;
    add({ kind: 'fact', text: fact.text, context: fact.question ?? '', heading: fact.question ?? '', source: fact.gap ? { kind: 'gap_answer', title: fact.question ?? 'Answer' } : { kind: 'owner', title: fact.question ?? 'The owner' }, primary: true });
  }
  for (const answer of snapshot.answers) {
    add({ kind: 'answer', text: answer.answer, context: answer.question, heading: answer.question, source: { kind: 'gap_answer', title: answer.question }, primary: true });
  }
  for (const section of snapshot.sections) {
    addBlocks(parseBlocks(section.content), section.title, { kind: 'section', title: section.title }, true);
  }
  for (const page of snapshot.pages) {
    addBlocks(parseBlocks(page.content), page.title, { kind: 'page', title: page.title || page.url, url: page.url }, page.isPrimary);
  }
  if (systemPrompt?.trim()) {
    for (const block of parseBlocks(systemPrompt)) {
      if (block.kind === 'heading') continue;
      for (const sentence of block.kind === 'list' ? (block.items ?? []) : sentences(block.text)) {
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
  return { key, units, search, df, snapshot };
}

/** Per-agent indexes, most recently used kept, at most `capacity` of them. */
export class IndexCache {
  private readonly entries = new Map<number, KnowledgeIndex>();

  constructor(private readonly capacity = 100) {}

  static key(version: number, systemPrompt: string | null): string {
    return `${version}:${crypto.createHash('sha1').update(systemPrompt ?? '').digest('base64url').slice(0, 12)}`;
  }

  get(agentId: number, key: string): KnowledgeIndex | undefined {
    const entry = this.entries.get(agentId);
    if (!entry || entry.key !== key) return undefined;
    this.entries.delete(agentId);
    this.entries.set(agentId, entry);
    return entry;
  }

  set(agentId: number, index: KnowledgeIndex): void {
    this.entries.delete(agentId);
    this.entries.set(agentId, index);
    while (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
  }

  drop(agentId: number): void {
    this.entries.delete(agentId);
  }

  get size(): number {
    return this.entries.size;
  }
}
