/**
 * The offline brain builder: the facts a visitor asks about (hours, prices, contacts, services,
 * areas, policies, what the business is), each with its source, picked out of the knowledge by
 * patterns, and the agent's instructions written around them. With LLM_URL a language model writes
 * the instructions instead (brain/llm-writer.ts), from the same material.
 */
import { parseBlocks } from './blocks.js';
import { CLOSED, EMAIL, PRICE, TIME, hasAddress, hasHours, hasPhone } from './patterns.js';

export type FactTopic = 'about' | 'hours' | 'prices' | 'contact' | 'services' | 'areas' | 'policies';
export const FACT_TOPICS: FactTopic[] = ['about', 'hours', 'prices', 'contact', 'services', 'areas', 'policies'];

export interface FactSource {
  kind: 'page' | 'section' | 'system_prompt';
  title: string;
  url?: string;
}

export interface Fact {
  topic: FactTopic;
  text: string;
  source: FactSource;
}

export interface SiteInfo {
  name?: string;
  description?: string;
  homepage?: string;
}

export interface KnowledgeDocument {
  kind: 'page' | 'section' | 'system_prompt';
  title: string;
  url?: string;
  markdown: string;
  isPrimary: boolean;
}

/** What a build produces, whoever writes it. */
export interface BrainInput {
  agentName: string;
  site: SiteInfo;
  documents: KnowledgeDocument[];
  systemPrompt: string | null;
}

export interface BrainOutput {
  instructions: string;
  facts: Fact[];
}

export interface InstructionsWriter {
  readonly name: string;
  write(input: BrainInput, signal?: AbortSignal): Promise<BrainOutput>;
}

const PER_TOPIC: Record<FactTopic, number> = { about: 3, hours: 12, prices: 40, contact: 8, services: 20, areas: 6, policies: 12 };
const SERVICES_PAGE = /service|product|menu|treatment|what-?we-?do|catering|offer|shop|pricing|prices|packages|cakes/i;
const ABOUT_PAGE = /about|story|who-?we-?are|team/i;
const AREAS =
  /\b(we (serve|cover|deliver to|travel to)|service areas?|areas? (we|served|covered)|deliver(y|ies)? (to|within|in)|within \d+ (miles|km|kilometres|kilometers))\b/i;
const POLICIES =
  /\b(cancel(l?ation)?|refunds?|returns?|deposit|policy|guarantee|warranty|notice|in advance|book(ing)? ahead|minimum order|we accept|payment)\b/i;
const LEGAL_PAGE = /privacy|terms|legal|cookie|imprint|impressum|disclaimer/i;

/** Abbreviations a sentence does not end on ("Dr. Cole", "St. Mary's", "approx. 20"). */
const ABBREVIATION = /\b(dr|mr|mrs|ms|prof|st|no|nos|approx|incl|excl|vs|etc|e\.g|i\.e|ca|co|ltd|inc|jr|sr|mt|ave|rd)\.$/i;

export function sentences(text: string): string[] {
  const parts = text.split(/(?<=[.!?])\s+(?=[A-Z0-9"“(])/);
  const out: string[] = [];
  for (const part of parts) {
    if (out.length && ABBREVIATION.test(out[out.length - 1]!)) out[out.length - 1] += ` ${part}`;
    else out.push(part);
  }
  return out.map((s) => s.trim()).filter(Boolean);
}

export function compileFacts(documents: KnowledgeDocument[], site: SiteInfo): Fact[] {
  const facts: Fact[] = [];
  const seen = new Set<string>();
  const count: Record<string, number> = {};
  const add = (topic: FactTopic, text: string, source: FactSource) => {
    const clean = text.replace(/\s+/g, ' ').trim();
    const key = `${topic}:${clean.toLowerCase()}`;
    if (!clean || clean.length > 400 || seen.has(key) || (count[topic] ?? 0) >= PER_TOPIC[topic]) return;
    seen.add(key);
    count[topic] = (count[topic] ?? 0) + 1;
    facts.push({ topic, text: clean, source });
  };
  const homepage = documents.find((d) => d.url && site.homepage && d.url === site.homepage);
  if (site.description) add('about', site.description, homepage ? sourceOf(homepage) : { kind: 'page', title: site.name ?? 'Homepage', url: site.homepage });

  // Primary pages first: their facts win the per-topic places.
  const ordered = [...documents].sort((a, b) => Number(b.isPrimary) - Number(a.isPrimary));
  for (const doc of ordered) {
    const source = sourceOf(doc);
    const where = `${doc.url ?? ''} ${doc.title}`;
    if (doc.kind === 'page' && LEGAL_PAGE.test(where)) continue;
    const servicesPage = SERVICES_PAGE.test(where);
    let firstParagraph = true;
    for (const block of parseBlocks(doc.markdown)) {
      const heading = block.headings[block.headings.length - 1] ?? '';
      const hoursHeading = /hours|opening|open/i.test(heading);
      if (block.kind === 'heading') {
        if (
          servicesPage &&
          (block.level ?? 9) >= 2 &&
          (block.level ?? 9) <= 3 &&
          !block.text.endsWith('?') &&
          !/contact|details|faq|question/i.test(block.text)
        )
          add('services', block.text, source);
        continue;
      }
      if (block.kind === 'table') {
        for (const row of block.rows ?? []) {
          const line = rowText(block.headers ?? [], row);
          if (row.some((cell) => PRICE.test(cell))) add('prices', line, source);
          else if (row.some((cell) => hasHours(cell) || (hoursHeading && TIME.test(cell)))) add('hours', line, source);
        }
        continue;
      }
      const units = block.kind === 'list' ? (block.items ?? []) : sentences(block.text);
      for (const unit of units) {
        if (hasHours(unit) || (hoursHeading && (TIME.test(unit) || CLOSED.test(unit)))) add('hours', unit, source);
        else if (PRICE.test(unit)) add('prices', unit, source);
        if (hasPhone(unit) || EMAIL.test(unit) || hasAddress(unit)) add('contact', unit, source);
        if (AREAS.test(unit)) add('areas', unit, source);
        if (POLICIES.test(unit) && !PRICE.test(unit) && unit.length > 25) add('policies', unit, source);
      }
      if (block.kind === 'paragraph' && firstParagraph && doc.kind === 'page' && ABOUT_PAGE.test(where))
        add('about', sentences(block.text).slice(0, 2).join(' '), source);
      if (block.kind === 'paragraph') firstParagraph = false;
    }
  }
  return facts;
}

function sourceOf(doc: KnowledgeDocument): FactSource {
  return { kind: doc.kind, title: doc.title, ...(doc.url ? { url: doc.url } : {}) };
}

/** A table row as one line: "Sourdough loaf: $6.50 (Baked daily)". */
export function rowText(headers: string[], row: string[]): string {
  const [first, ...rest] = row;
  const others = rest.filter(Boolean);
  if (!others.length) return first ?? '';
  const [main, ...notes] = others;
  return `${first}: ${main}${notes.length ? ` (${notes.join(', ')})` : ''}`;
}

const TOPIC_TITLES: Record<FactTopic, string> = {
  about: 'About the business',
  hours: 'Opening hours',
  prices: 'Prices',
  contact: 'Contact details',
  services: 'Services and products',
  areas: 'Areas served',
  policies: 'Policies',
};

export function writeInstructions(input: BrainInput, facts: Fact[]): string {
  const business = input.site.name || 'the business';
  const lines = [
    `You are ${input.agentName}, the virtual assistant of ${business}${input.site.homepage ? ` (${input.site.homepage})` : ''}. You talk with visitors of the website and answer their questions about ${business}.`,
    'Answer in one or two short, friendly sentences, as a person would say them. Use only what you know below and in your knowledge; when you do not know something, say so honestly and offer to pass the question on. Never make up prices, times, names or promises.',
  ];
  if (input.systemPrompt?.trim()) lines.push('', "The owner's instructions:", input.systemPrompt.trim());
  lines.push('', 'What you know about the business (with the page each fact comes from):');
  for (const topic of FACT_TOPICS) {
    const ofTopic = facts.filter((f) => f.topic === topic);
    if (!ofTopic.length) continue;
    lines.push('', `${TOPIC_TITLES[topic]}:`);
    for (const fact of ofTopic) lines.push(`- ${fact.text} (source: ${fact.source.url ?? fact.source.title})`);
  }
  if (!facts.length) lines.push('', '(No facts were found; answer from the knowledge base only.)');
  return lines.join('\n');
}

export const offlineWriter: InstructionsWriter = {
  name: 'offline',
  async write(input) {
    const facts = compileFacts(input.documents, input.site);
    return { instructions: writeInstructions(input, facts), facts };
  },
};
