/**
 * Knowledge v2's storage helpers, shared by the knowledge service (page and section deletion make
 * orphans, gap answers become facts, the snapshot feeds facts to the answering engines) and the v2
 * service. Facts keep their sources; a page or section fact the owner overruled (changed, removed,
 * corrected) leaves its words in `overruled`, so the agent never says them and extraction never
 * brings them back.
 */
import { sql, type Transaction } from 'kysely';
import type { Db } from '../../core/db/database.js';
import type { Database, FactSourceRow } from '../../core/db/schema.js';

export type FactSource = FactSourceRow;
export type AnyDb = Db | Transaction<Database>;

export const OWNER_KINDS = new Set(['owner', 'correction', 'gap']);
export const READ_KINDS = new Set(['page', 'kb_section']);
/** Overruled texts kept per agent at most (the oldest are forgotten first). */
const MAX_OVERRULED = 2000;

export interface Behavior {
  unknown_answer: string | null;
  tone: 'friendly' | 'formal' | 'casual';
  answer_length: 'short' | 'medium' | 'long';
  never_discuss: string[];
  handover: string | null;
}

export const DEFAULT_BEHAVIOR: Behavior = { unknown_answer: null, tone: 'friendly', answer_length: 'short', never_discuss: [], handover: null };

/** A fact as the answering engines see it. */
export interface KnownFact {
  id: number;
  questionId: number | null;
  /** The schema question it answers, when any (the context it is found by). */
  question: string | null;
  text: string;
  /** From the owner (owner, correction or gap source): said before what a page says. */
  owner: boolean;
  /** The owner's answer to a knowledge gap (said with source `gap_answer`, as before v2). */
  gap: boolean;
}

/** Text compared as the owner means it: case, spacing and end punctuation do not count. */
export function sameText(text: string): string {
  return text
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/[.!?;:,]+$/, '')
    .trim();
}

export function isOwned(sources: FactSource[]): boolean {
  return sources.some((s) => OWNER_KINDS.has(s.kind));
}

export async function ensureSettings(db: AnyDb, agentId: number): Promise<void> {
  await db
    .insertInto('knowledge_settings')
    .values({ agent_id: agentId })
    .onConflict((oc) => oc.column('agent_id').doNothing())
    .execute();
}

export async function settingsOf(db: AnyDb, agentId: number) {
  const row = await db.selectFrom('knowledge_settings').selectAll().where('agent_id', '=', agentId).executeTakeFirst();
  return {
    behavior: { ...DEFAULT_BEHAVIOR, ...((row?.behavior ?? {}) as Partial<Behavior>) } as Behavior,
    dynamicInstructions: row?.dynamic_instructions ?? '',
    businessType: row?.business_type ?? null,
    overruled: (row?.overruled ?? []) as string[],
  };
}

/** Remembers words of the pages the owner overruled (they are not said or extracted again). */
export async function overrule(db: AnyDb, agentId: number, texts: Array<string | null | undefined>): Promise<void> {
  const add = texts.filter((t): t is string => !!t && !!t.trim()).map(sameText);
  if (!add.length) return;
  await ensureSettings(db, agentId);
  const { overruled } = await settingsOf(db, agentId);
  const next = [...new Set([...overruled, ...add])].slice(-MAX_OVERRULED);
  await db
    .updateTable('knowledge_settings')
    .set({ overruled: JSON.stringify(next), updated_at: new Date() })
    .where('agent_id', '=', agentId)
    .execute();
}

/**
 * A page or section is gone: its source leaves every fact; a fact left with no source at all is an
 * orphan (kept until the owner keeps or drops it).
 */
export async function dropSources(db: AnyDb, agentId: number, kind: 'page' | 'kb_section', refs: Array<string | number> | 'all'): Promise<number> {
  const rows = await db.selectFrom('knowledge_facts').select(['id', 'sources']).where('agent_id', '=', agentId).where('orphan', '=', false).execute();
  const wanted = refs === 'all' ? undefined : new Set(refs.map(String));
  let orphaned = 0;
  for (const row of rows) {
    const sources = row.sources as FactSource[];
    const kept = sources.filter((s) => !(s.kind === kind && (!wanted || wanted.has(String(s.ref)))));
    if (kept.length === sources.length) continue;
    const orphan = kept.length === 0;
    if (orphan) orphaned++;
    await db
      .updateTable('knowledge_facts')
      .set({ sources: JSON.stringify(orphan ? sources.map((s) => ({ ...s, gone: true })) : kept), orphan, updated_at: new Date() })
      .where('id', '=', row.id)
      .execute();
  }
  return orphaned;
}

/** The owner's answer to a knowledge gap is also a fact, with source gap (one per gap, replaced). */
export async function upsertGapFact(db: AnyDb, agentId: number, gapId: number, answer: string): Promise<void> {
  const existing = await db
    .selectFrom('knowledge_facts')
    .select('id')
    .where('agent_id', '=', agentId)
    .where(sql<boolean>`sources @> ${JSON.stringify([{ kind: 'gap', ref: gapId }])}::jsonb`)
    .executeTakeFirst();
  if (existing) await db.updateTable('knowledge_facts').set({ text: answer, updated_at: new Date() }).where('id', '=', existing.id).execute();
  else
    await db
      .insertInto('knowledge_facts')
      .values({ agent_id: agentId, text: answer, sources: JSON.stringify([{ kind: 'gap', ref: gapId }]) })
      .execute();
}

/** What the answering engines need of version 2: facts, overruled words, behavior, dynamic instructions. */
export async function engineView(db: Db, agentId: number) {
  const [facts, questions, gaps, settings] = await Promise.all([
    db
      .selectFrom('knowledge_facts')
      .select(['id', 'question_id', 'text', 'sources'])
      .where('agent_id', '=', agentId)
      .where('orphan', '=', false)
      .orderBy('id')
      .execute(),
    db.selectFrom('knowledge_questions').select(['id', 'question']).where('agent_id', '=', agentId).execute(),
    db.selectFrom('knowledge_answers').select(['gap_id', 'question']).where('agent_id', '=', agentId).where('gap_id', 'is not', null).execute(),
    settingsOf(db, agentId),
  ]);
  const questionText = new Map(questions.map((q) => [q.id, q.question]));
  const gapQuestion = new Map(gaps.map((g) => [String(g.gap_id), g.question]));
  // A fact is found by the question it answers: its schema question, else the gap's question.
  const questionOf = (f: (typeof facts)[number]) =>
    (f.question_id ? questionText.get(f.question_id) : undefined) ??
    (f.sources as FactSource[]).map((s) => (s.kind === 'gap' ? gapQuestion.get(String(s.ref)) : undefined)).find(Boolean) ??
    null;
  const knownFacts: KnownFact[] = facts.map((f) => ({
    id: f.id,
    questionId: f.question_id,
    question: questionOf(f),
    text: f.text,
    owner: isOwned(f.sources as FactSource[]),
    gap: (f.sources as FactSource[]).some((s) => s.kind === 'gap'),
  }));
  return { knownFacts, overruled: settings.overruled, behavior: settings.behavior, dynamicInstructions: settings.dynamicInstructions };
}

/** Fills `{{visitor.<name>}}` from the visitor values; a name without a value renders empty. */
export function renderDynamic(instructions: string, values: Record<string, string>): string {
  return instructions.replace(/\{\{\s*visitor\.([A-Za-z0-9_.-]+)\s*\}\}/g, (_m, name: string) => (Object.hasOwn(values, name) ? values[name]! : ''));
}

/** The visitor value names the instructions use, once each, in order. */
export function dynamicVariables(instructions: string): string[] {
  const names: string[] = [];
  for (const match of instructions.matchAll(/\{\{\s*visitor\.([A-Za-z0-9_.-]+)\s*\}\}/g)) if (!names.includes(match[1]!)) names.push(match[1]!);
  return names;
}

/** Behavior as sentences of the instructions. */
export function behaviorLines(behavior: Behavior): string[] {
  const lines: string[] = [];
  if (behavior.tone !== DEFAULT_BEHAVIOR.tone) lines.push(`Your tone is ${behavior.tone}.`);
  if (behavior.answer_length !== DEFAULT_BEHAVIOR.answer_length)
    lines.push(behavior.answer_length === 'long' ? 'You may answer in a few sentences when the question needs it.' : 'Answer in two or three sentences.');
  if (behavior.never_discuss.length) lines.push(`Never discuss: ${behavior.never_discuss.join(', ')}.`);
  if (behavior.handover) lines.push(`When to hand the visitor over to a person: ${behavior.handover}`);
  if (behavior.unknown_answer) lines.push(`When you cannot answer, say: "${behavior.unknown_answer}"`);
  return lines;
}

/**
 * A duplicated agent gets the v2 knowledge too: questions (same keys and states), facts (page
 * sources pointing at the copy's pages; a gap answer, whose gap stays with the original, becomes
 * the owner's), behavior, dynamic instructions and overruled words. Previews and reviews are not copied.
 */
export async function copyV2(trx: Transaction<Database>, sourceId: number, targetId: number): Promise<void> {
  await sql`INSERT INTO knowledge_settings (agent_id, behavior, dynamic_instructions, business_type, overruled)
    SELECT ${targetId}, behavior, dynamic_instructions, business_type, overruled FROM knowledge_settings WHERE agent_id = ${sourceId}
    ON CONFLICT (agent_id) DO NOTHING`.execute(trx);
  await sql`INSERT INTO knowledge_questions (agent_id, key, question, topic, state, position)
    SELECT ${targetId}, key, question, topic, state, position FROM knowledge_questions WHERE agent_id = ${sourceId} ORDER BY id
    ON CONFLICT (agent_id, key) DO NOTHING`.execute(trx);
  const [oldQuestions, newQuestions, oldPages, newPages, facts] = await Promise.all([
    trx.selectFrom('knowledge_questions').select(['id', 'key']).where('agent_id', '=', sourceId).execute(),
    trx.selectFrom('knowledge_questions').select(['id', 'key']).where('agent_id', '=', targetId).execute(),
    trx.selectFrom('knowledge_pages').select(['id', 'url']).where('agent_id', '=', sourceId).execute(),
    trx.selectFrom('knowledge_pages').select(['id', 'url']).where('agent_id', '=', targetId).execute(),
    trx.selectFrom('knowledge_facts').selectAll().where('agent_id', '=', sourceId).orderBy('id').execute(),
  ]);
  const questionKey = new Map(oldQuestions.map((q) => [q.id, q.key]));
  const questionId = new Map(newQuestions.map((q) => [q.key, q.id]));
  const pageUrl = new Map(oldPages.map((p) => [String(p.id), p.url]));
  const pageId = new Map(newPages.map((p) => [p.url, p.id]));
  for (const fact of facts) {
    const sources = (fact.sources as FactSource[]).map((s): FactSource => {
      if (s.kind === 'page') return { ...s, ref: pageId.get(pageUrl.get(String(s.ref)) ?? '') ?? s.ref };
      if (s.kind === 'gap') return { kind: 'owner', ref: null };
      return s;
    });
    const key = fact.question_id === null ? undefined : questionKey.get(fact.question_id);
    await trx
      .insertInto('knowledge_facts')
      .values({
        agent_id: targetId,
        question_id: key ? (questionId.get(key) ?? null) : null,
        text: fact.text,
        sources: JSON.stringify(sources),
        confidence: fact.confidence,
        origin: fact.origin,
        orphan: fact.orphan,
      })
      .execute();
  }
}
