/**
 * Knowledge version 2 (contract "Knowledge, version 2"): the schema of questions a business must
 * answer, the facts that answer them with their sources, completion, the owner's answers and edits
 * (atomic knowledge ops), review of disagreeing sources, consolidation, corrections previewed then
 * applied, behavior, dynamic instructions and orphans. Offline every step is real work (built-in
 * schemas per business type, extraction by retrieval over the pages, corrections matched to the
 * facts they mention); with LLM_URL the model does each step (model.ts), the offline rules are the
 * fallback. Every edit bumps the knowledge version, so the next conversation uses it, no rebuild.
 */
import crypto from 'node:crypto';
import { sql, type Transaction } from 'kysely';
import { z } from 'zod';
import type { Db } from '../core/db/database.js';
import type { Database } from '../core/db/schema.js';
import { ValidationFailed, validationItem } from '../core/errors.js';
import type { KnowledgeAgent, KnowledgeService } from '../knowledge/service.js';
import { loadExtractor } from '../knowledge/load-extractor.js';
import { decodeBody, ReaderError, ROBOTS_AGENT } from '../knowledge/reader/fetch.js';
import { CLOSED, PRICE, TIME, hasHours } from '../knowledge/patterns.js';
import { buildIndex } from '../brain/knowledge-index.js';
import { rank } from '../brain/retrieve.js';
import { analyseQuestion, terms, type Intent } from '../brain/text.js';
import { businessTypeOf, COMMON_QUESTIONS, keyOf, languageOf, schemaFor, type SchemaQuestion } from './questions.js';
import {
  DEFAULT_BEHAVIOR,
  READ_KINDS,
  behaviorLines,
  dynamicVariables,
  ensureSettings,
  isOwned,
  overrule,
  renderDynamic,
  sameText,
  settingsOf,
  type AnyDb,
  type Behavior,
  type FactSource,
} from '../knowledge/v2/store.js';
import type { KnowledgeModel } from './model.js';
import { knowledgeV2Errors } from './errors.js';

/** A correction preview lives this long (the contract: at least an hour). */
export const PREVIEW_HOURS = 24;
const MAX_FACTS_PER_AGENT = 2000;
/** Facts extracted per question at most. */
const FACTS_PER_QUESTION = 4;

/** What visitors would ask for each built-in question (retrieval finds the passages that answer it). */
const SEARCH_FOR: Record<string, string> = {
  hours: 'What are your opening hours?',
  prices: 'What are your prices? How much does it cost?',
  services: 'services products menu catering cakes treatments',
  contact: 'What is your phone number and email?',
  booking: 'book appointment order online reservation',
  cancellation: 'cancellation refund policy cancel',
  location: 'Where are you located? address',
  payment: 'payment methods cards cash accept',
  dietary: 'gluten-free vegan options',
  custom_orders: 'custom orders cakes special order',
  delivery: 'delivery deliver within miles',
  reservations: 'reservations groups booking',
  emergency: 'emergency call-out urgent',
  areas: 'areas we cover serve',
  guarantee: 'guarantee warranty',
  new_patients: 'new patients accepting register',
  insurance: 'insurance plans accept',
  consultation: 'first consultation free cost',
  practice_areas: 'areas of law practice',
  trial: 'free trial',
  support: 'support help contact',
  integrations: 'integrations integrate tools',
  walk_ins: 'walk-ins appointment',
};

type Row<T extends keyof Database> = import('kysely').Selectable<Database[T]>;

export interface BuildLogger {
  warn(object: object, message: string): void;
}

export class KnowledgeV2 {
  constructor(
    private readonly knowledge: KnowledgeService,
    private readonly model: KnowledgeModel | undefined,
    private readonly logger: BuildLogger,
  ) {}

  private get db(): Db {
    return this.knowledge.db;
  }

  /** Runs an edit in one transaction, bumps the knowledge version, tells the caches. */
  private async edit<T>(agent: KnowledgeAgent, work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
    const result = await this.db.transaction().execute(async (trx) => {
      await this.knowledge.ensureBrain(agent, trx);
      // One editor of an agent's knowledge at a time: an edit reads, checks, then writes.
      await trx.selectFrom('knowledge_brains').select('agent_id').where('agent_id', '=', agent.id).forUpdate().execute();
      const value = await work(trx);
      await this.knowledge.changed(agent, trx);
      return value;
    });
    this.knowledge.notify(agent.id);
    return result;
  }

  // ---------- probe ----------

  async probe(accountId: number, agentId: number, url: string | undefined) {
    const agent = await this.knowledge.agents.get(accountId, agentId);
    const target = url ?? agent.website_url ?? undefined;
    if (!target) throw new ValidationFailed([validationItem(['body', 'url'], 'Field required (the agent has no website_url)', null, 'missing')]);
    const answer = {
      url: target,
      reachable: false,
      language: null as string | null,
      business_type: null as string | null,
      page_count: 0,
      robots: null as null | { disallow: string[]; sitemaps: string[] },
    };
    const signal = AbortSignal.timeout(30_000);
    try {
      const home = await this.knowledge.reader.get(target, { anywhere: true, signal });
      answer.reachable = home.status >= 200 && home.status < 300;
      if (!answer.reachable) return answer;
      const html = decodeBody(home.body, home.contentType);
      const page = /html/.test(home.contentType) ? (await loadExtractor.get()).extractPage(html, home.url) : undefined;
      const text = page?.ok ? `${page.title} ${page.description} ${page.markdown}` : html.slice(0, 20_000);
      answer.language = languageOf(/<html[^>]*\blang\s*=\s*["']?([A-Za-z_-]+)/i.exec(html)?.[1], text);
      answer.business_type = businessTypeOf(text);
      answer.robots = await this.robots(new URL(home.url).origin, signal);
      try {
        answer.page_count = (await this.knowledge.reader.discover(home.url, signal)).totalFound;
      } catch {
        answer.page_count = 1;
      }
    } catch (error) {
      if (!(error instanceof ReaderError) && !(error instanceof Error && /abort|timeout/i.test(error.name))) throw error;
    }
    return answer;
  }

  /** The robots.txt rules that apply to the reader (its own group, else `*`), or null without one. */
  private async robots(origin: string, signal: AbortSignal): Promise<{ disallow: string[]; sitemaps: string[] } | null> {
    try {
      const response = await this.knowledge.reader.get(`${origin}/robots.txt`, { accept: 'text/plain,*/*;q=0.5', signal });
      if (response.status >= 400) return null;
      return robotsRules(decodeBody(response.body, response.contentType));
    } catch {
      return null;
    }
  }

  // ---------- build steps (run by builds.ts as a build job) ----------

  async schemaStep(agentId: number, signal: AbortSignal): Promise<void> {
    const agent = await this.knowledge.agents.byId(agentId);
    if (!agent) return;
    const snapshot = await this.knowledge.snapshot(agentId);
    let words = [
      agent.system_prompt ?? '',
      ...snapshot.pages.map((p) => `${p.title} ${p.content.slice(0, 5000)}`),
      ...snapshot.sections.map((s) => `${s.title} ${s.content}`),
    ].join('\n');
    if (agent.website_url) {
      try {
        const home = await this.knowledge.reader.get(agent.website_url, { anywhere: true, signal });
        if (home.status < 300 && /html/.test(home.contentType)) {
          const page = (await loadExtractor.get()).extractPage(decodeBody(home.body, home.contentType), home.url);
          if (page.ok) words = `${page.title} ${page.description} ${page.markdown}\n${words}`;
        }
      } catch (error) {
        this.logger.warn(
          { agent_id: agentId, err: (error as Error).message },
          'schema/generate: the website could not be read; the schema comes from what the agent already knows',
        );
      }
    }
    let businessType = businessTypeOf(words);
    let schema = schemaFor(businessType);
    if (this.model) {
      try {
        const proposed = await this.model.json(
          [
            "You design the questions a small business's website assistant must be able to answer for visitors.",
            'From the website text below, name the kind of business in a word or two and list the 8 to 14 questions visitors ask it most.',
            `Always include: ${COMMON_QUESTIONS.map((q) => q.question).join(' ')}`,
            'Answer JSON only: {"business_type": "…", "questions": [{"question": "…", "topic": "hours|prices|services|contact|booking|policies|areas|about"}]}.',
            `\nWebsite text:\n${words.slice(0, 12_000)}`,
          ].join('\n'),
          z.object({
            business_type: z.string().max(60).nullable().optional(),
            questions: z.array(z.object({ question: z.string().min(3).max(300), topic: z.string().max(40).default('about') })).max(40),
          }),
          signal,
        );
        businessType = proposed.business_type?.trim().toLowerCase() || businessType;
        const extra: SchemaQuestion[] = proposed.questions
          .filter((q) => !COMMON_QUESTIONS.some((c) => sameText(c.question) === sameText(q.question)))
          .map((q) => ({ key: keyOf(q.question), question: q.question.trim(), topic: q.topic }));
        // Every schema asks the common questions; the model's own come after them.
        const seen = new Set<string>();
        schema = [...COMMON_QUESTIONS, ...schemaFor(businessType).slice(COMMON_QUESTIONS.length), ...extra].filter((q) => !seen.has(q.key) && seen.add(q.key));
      } catch (error) {
        this.logger.warn({ agent_id: agentId, err: (error as Error).message }, 'the language model could not write the schema; the built-in schema was used');
      }
    }
    const owner = { id: agent.id, account_id: agent.account_id };
    await this.db.transaction().execute(async (trx) => {
      const existing = await trx.selectFrom('knowledge_questions').select(['id', 'key']).where('agent_id', '=', agentId).execute();
      const keys = new Set(schema.map((q) => q.key));
      const gone = existing.filter((q) => !keys.has(q.key)).map((q) => q.id);
      if (gone.length) await trx.deleteFrom('knowledge_questions').where('id', 'in', gone).execute();
      for (const [position, q] of schema.entries()) {
        const known = existing.find((e) => e.key === q.key);
        if (known) await trx.updateTable('knowledge_questions').set({ question: q.question, topic: q.topic, position }).where('id', '=', known.id).execute();
        else await trx.insertInto('knowledge_questions').values({ agent_id: agentId, key: q.key, question: q.question, topic: q.topic, position }).execute();
      }
      await ensureSettings(trx, agentId);
      await trx.updateTable('knowledge_settings').set({ business_type: businessType, updated_at: new Date() }).where('agent_id', '=', agentId).execute();
      await this.knowledge.changed(owner, trx);
    });
  }

  /**
   * Extraction: for each question, the passages of the pages and sections that answer it become
   * its facts (source page or kb_section). Facts whose only sources are pages are replaced; the
   * owner's facts stay, and words the owner overruled are never extracted again.
   */
  async extractStep(agentId: number, signal: AbortSignal): Promise<void> {
    const agent = await this.knowledge.agents.byId(agentId);
    if (!agent) return;
    const snapshot = await this.knowledge.snapshot(agentId);
    const questions = await this.db.selectFrom('knowledge_questions').selectAll().where('agent_id', '=', agentId).orderBy('position').orderBy('id').execute();
    const index = buildIndex({ ...snapshot, answers: [], knownFacts: [] }, null, 'extract');
    const pageIds = new Map(snapshot.pages.map((p) => [p.url, p.id]));
    const topics = new Map(snapshot.sections.map((s) => [s.title, s.topic]));
    const sourceOf = (source: { kind: string; title?: string; url?: string }): FactSource | undefined => {
      if (source.kind === 'page' && source.url && pageIds.has(source.url)) return { kind: 'page', ref: pageIds.get(source.url)!, url: source.url };
      if (source.kind === 'section' && source.title && topics.has(source.title)) return { kind: 'kb_section', ref: topics.get(source.title)! };
      return undefined;
    };

    // Per question, the passages retrieval finds (what the offline rules keep, and what the model reads).
    const passages = questions.map((q) => {
      const query = analyseQuestion(SEARCH_FOR[q.key] ?? q.question);
      const candidates = rank(index, query, [], 12).filter((c) => c.unit.kind !== 'list' && sourceOf(c.unit.source));
      return { question: q, query, candidates };
    });
    type Found = { questionId: number; text: string; source: FactSource; confidence: number; origin: string };
    let found: Found[] = [];
    for (const { question, query, candidates } of passages) {
      // Stricter than answering: a price must be a price ("free" is not), hours must be times.
      const good = candidates.filter((c) =>
        query.intents.size
          ? c.evidence && [...query.intents].some((i) => holds(i, c.unit.text)) && (c.coverage >= 0.3 || !query.terms.length)
          : c.coverage >= 0.5,
      );
      // Hours said with times first (a "closed on Sundays" line comes after the opening times).
      if (query.intents.has('hours')) good.sort((x, y) => Number(TIME.test(y.unit.text)) - Number(TIME.test(x.unit.text)));
      const seen = new Set<string>();
      for (const c of good) {
        if (seen.size >= FACTS_PER_QUESTION) break;
        const key = sameText(c.unit.text);
        if (seen.has(key)) continue;
        seen.add(key);
        found.push({
          questionId: question.id,
          text: c.unit.text,
          source: sourceOf(c.unit.source)!,
          confidence: round2(Math.min(1, Math.max(0.3, c.score / 1.6))),
          origin: c.unit.text,
        });
      }
    }
    if (this.model && questions.length) {
      try {
        const numbered: Array<{ n: number; questionId: number; text: string; source: FactSource }> = [];
        const lines: string[] = [];
        for (const { question, candidates } of passages) {
          lines.push(`\nQuestion ${question.id}: ${question.question}`);
          for (const c of candidates.slice(0, 6)) {
            const n = numbered.length + 1;
            numbered.push({ n, questionId: question.id, text: c.unit.text, source: sourceOf(c.unit.source)! });
            lines.push(`[${n}] ${c.unit.text}`);
          }
        }
        const answer = await this.model.json(
          [
            "For each question below, state the facts the numbered passages of a business's website give that answer it, in a short sentence each.",
            'Use only what a passage says; name the passage each fact comes from; leave a question out when no passage answers it.',
            'Answer JSON only: {"facts": [{"question_id": 1, "text": "…", "passage": 1}]}.',
            lines.join('\n'),
          ].join('\n'),
          z.object({
            facts: z.array(z.object({ question_id: z.coerce.number().int(), text: z.string().min(1).max(1000), passage: z.coerce.number().int() })).max(200),
          }),
          signal,
        );
        const byModel: Found[] = [];
        for (const fact of answer.facts) {
          const passage = numbered.find((p) => p.n === fact.passage);
          // A fact must come from a passage retrieved for its own question: the model cannot invent one.
          if (!passage || passage.questionId !== fact.question_id) continue;
          byModel.push({ questionId: passage.questionId, text: fact.text.trim(), source: passage.source, confidence: 0.9, origin: passage.text });
        }
        found = byModel;
      } catch (error) {
        this.logger.warn(
          { agent_id: agentId, err: (error as Error).message },
          'the language model could not extract the facts; the offline extraction was kept',
        );
      }
    }

    const overruled = new Set(snapshot.overruled);
    await this.db.transaction().execute(async (trx) => {
      const facts = await trx.selectFrom('knowledge_facts').selectAll().where('agent_id', '=', agentId).execute();
      const readOnly = facts.filter(
        (f) => !f.orphan && (f.sources as FactSource[]).length > 0 && (f.sources as FactSource[]).every((s) => READ_KINDS.has(s.kind)),
      );
      if (readOnly.length)
        await trx
          .deleteFrom('knowledge_facts')
          .where(
            'id',
            'in',
            readOnly.map((f) => f.id),
          )
          .execute();
      await trx.deleteFrom('knowledge_reviews').where('agent_id', '=', agentId).execute();
      const owned = facts.filter((f) => isOwned(f.sources as FactSource[]));
      const inserted: Array<{ id: number; questionId: number; text: string; source: FactSource }> = [];
      for (const fact of found) {
        if (overruled.has(sameText(fact.origin)) || overruled.has(sameText(fact.text))) continue;
        if (owned.some((o) => sameText(o.text) === sameText(fact.text) || (o.origin && sameText(o.origin) === sameText(fact.origin)))) continue;
        const row = await trx
          .insertInto('knowledge_facts')
          .values({
            agent_id: agentId,
            question_id: fact.questionId,
            text: fact.text.slice(0, 2000),
            sources: JSON.stringify([fact.source]),
            confidence: fact.confidence,
            origin: fact.origin.slice(0, 2000),
          })
          .returning('id')
          .executeTakeFirstOrThrow();
        inserted.push({ id: row.id, questionId: fact.questionId, text: fact.text, source: fact.source });
      }
      // Sources that disagree (the prices page says 6, a section says 7) wait for the owner's review.
      for (const [i, a] of inserted.entries()) {
        for (const b of inserted.slice(i + 1)) {
          if (a.questionId !== b.questionId || (a.source.kind === b.source.kind && String(a.source.ref) === String(b.source.ref))) continue;
          if (disagree(a.text, b.text))
            await trx
              .insertInto('knowledge_reviews')
              .values({ agent_id: agentId, question_id: a.questionId, fact_ids: sql<number[]>`${sql.val([a.id, b.id])}::integer[]` as never })
              .execute();
        }
      }
      await this.knowledge.changed({ id: agent.id, account_id: agent.account_id }, trx);
    });
  }

  async overruledOf(agentId: number): Promise<string[]> {
    return (await settingsOf(this.db, agentId)).overruled;
  }

  /** The facts (owner's first) and the behavior, as a part of the agent's instructions. */
  async addendum(agentId: number): Promise<string> {
    const facts = await this.db
      .selectFrom('knowledge_facts')
      .select(['text', 'sources'])
      .where('agent_id', '=', agentId)
      .where('orphan', '=', false)
      .orderBy('id')
      .limit(300)
      .execute();
    const { behavior } = await settingsOf(this.db, agentId);
    const lines: string[] = [];
    const owned = facts.filter((f) => isOwned(f.sources as FactSource[]));
    const read = facts.filter((f) => !isOwned(f.sources as FactSource[]));
    if (owned.length) lines.push('What the owner has told you (this wins over anything a page says):', ...owned.map((f) => `- ${f.text}`));
    if (read.length) lines.push(...(owned.length ? [''] : []), 'Facts from the website:', ...read.map((f) => `- ${f.text}`));
    const how = behaviorLines(behavior);
    if (how.length) lines.push(...(lines.length ? [''] : []), 'How you speak:', ...how.map((l) => `- ${l}`));
    return lines.join('\n');
  }

  // ---------- reading the brain ----------

  async brainView(accountId: number, agentId: number) {
    await this.knowledge.agents.get(accountId, agentId);
    const [questions, facts, reviews, settings, brain] = await Promise.all([
      this.questions(this.db, agentId),
      this.db.selectFrom('knowledge_facts').selectAll().where('agent_id', '=', agentId).orderBy('id').execute(),
      this.db.selectFrom('knowledge_reviews').selectAll().where('agent_id', '=', agentId).orderBy('id').execute(),
      settingsOf(this.db, agentId),
      this.knowledge.brain(agentId),
    ]);
    const answered = new Set(facts.map((f) => f.question_id).filter((id): id is number => id !== null));
    return {
      agent_id: agentId,
      business_type: settings.businessType,
      brain_status: brain?.status ?? 'none',
      questions: questions.map((q) => questionAnswer(q, answered)),
      facts: facts.map(factAnswer),
      review: reviews.map(reviewAnswer),
      completion: await this.completionOf(this.db, agentId),
    };
  }

  private questions(db: AnyDb, agentId: number) {
    return db.selectFrom('knowledge_questions').selectAll().where('agent_id', '=', agentId).orderBy('position').orderBy('id').execute();
  }

  async completion(accountId: number, agentId: number) {
    await this.knowledge.agents.get(accountId, agentId);
    return this.completionOf(this.db, agentId);
  }

  /** Needed questions, how many are answered, and the missing ones: those visitors asked first. */
  private async completionOf(db: AnyDb, agentId: number) {
    const [questions, facts, gaps] = await Promise.all([
      this.questions(db, agentId),
      db.selectFrom('knowledge_facts').select('question_id').where('agent_id', '=', agentId).where('question_id', 'is not', null).execute(),
      db.selectFrom('knowledge_gaps').select(['question', 'terms', 'times_asked']).where('agent_id', '=', agentId).where('status', '=', 'open').execute(),
    ]);
    const answered = new Set(facts.map((f) => f.question_id));
    const needed = questions.filter((q) => q.state === 'needed');
    const asked = (q: Row<'knowledge_questions'>) => {
      const analysed = analyseQuestion(SEARCH_FOR[q.key] ?? q.question);
      const own = new Set([...terms(q.question), ...analysed.terms]);
      let times = 0;
      for (const gap of gaps) {
        const intents = analyseQuestion(gap.question).intents;
        if ([...analysed.intents].some((i) => intents.has(i)) || gap.terms.some((t) => own.has(t))) times += gap.times_asked;
      }
      return times;
    };
    const missing = needed
      .filter((q) => !answered.has(q.id))
      .map((q) => ({ q, times: asked(q) }))
      .sort((a, b) => b.times - a.times || a.q.position - b.q.position || a.q.id - b.q.id)
      .map(({ q, times }) => ({ question_id: q.id, question: q.question, topic: q.topic, times_asked: times }));
    const done = needed.length - missing.length;
    return { total: needed.length, answered: done, percent: needed.length ? Math.round((100 * done) / needed.length) : 0, missing };
  }

  private async questionOf(db: AnyDb, agentId: number, questionId: number) {
    const row = await db.selectFrom('knowledge_questions').selectAll().where('agent_id', '=', agentId).where('id', '=', questionId).executeTakeFirst();
    if (!row) throw knowledgeV2Errors.question_not_found(`No question with id ${questionId} for this agent`);
    return row;
  }

  // ---------- the owner's edits ----------

  /** The owner's answer to a question: its fact with source owner (an earlier owner's answer replaced). */
  async answer(accountId: number, agentId: number, questionId: number, text: string) {
    const agent = await this.knowledge.agents.get(accountId, agentId);
    return this.edit(agent, async (trx) => {
      await this.questionOf(trx, agentId, questionId);
      const earlier = await trx
        .selectFrom('knowledge_facts')
        .select(['id', 'sources'])
        .where('agent_id', '=', agentId)
        .where('question_id', '=', questionId)
        .execute();
      const previous = earlier.filter((f) => (f.sources as FactSource[]).length === 1 && (f.sources as FactSource[])[0]!.kind === 'owner').map((f) => f.id);
      if (previous.length) await trx.deleteFrom('knowledge_facts').where('id', 'in', previous).execute();
      await this.limit(trx, agentId, 1);
      await trx
        .insertInto('knowledge_facts')
        .values({ agent_id: agentId, question_id: questionId, text: text.trim(), sources: JSON.stringify([{ kind: 'owner', ref: null }]) })
        .execute();
      return this.completionOf(trx, agentId);
    });
  }

  async setState(accountId: number, agentId: number, questionId: number, state: 'needed' | 'not_applicable' | 'skipped') {
    const agent = await this.knowledge.agents.get(accountId, agentId);
    return this.edit(agent, async (trx) => {
      await this.questionOf(trx, agentId, questionId);
      await trx.updateTable('knowledge_questions').set({ state }).where('id', '=', questionId).execute();
      return this.completionOf(trx, agentId);
    });
  }

  private async limit(trx: AnyDb, agentId: number, adding: number) {
    const count = await trx
      .selectFrom('knowledge_facts')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('agent_id', '=', agentId)
      .executeTakeFirstOrThrow();
    if (Number(count.n) + adding > MAX_FACTS_PER_AGENT)
      throw knowledgeV2Errors.fact_limit(`An agent holds at most ${MAX_FACTS_PER_AGENT} facts; remove or consolidate some first`);
  }

  /** Knowledge ops, atomically: every op is checked first; one bad op and nothing is applied. */
  async ops(accountId: number, agentId: number, ops: Op[]) {
    const agent = await this.knowledge.agents.get(accountId, agentId);
    return this.edit(agent, async (trx) => {
      const facts = new Map((await trx.selectFrom('knowledge_facts').selectAll().where('agent_id', '=', agentId).execute()).map((f) => [f.id, f]));
      const questionIds = new Set((await trx.selectFrom('knowledge_questions').select('id').where('agent_id', '=', agentId).execute()).map((q) => q.id));
      const removed = new Set<number>();
      const problems = [];
      for (const [i, op] of ops.entries()) {
        if (op.op === 'add') {
          if (op.question_id !== undefined && op.question_id !== null && !questionIds.has(toId(op.question_id)))
            problems.push(validationItem(['body', 'ops', i, 'question_id'], 'No question with this id for this agent', op.question_id));
        } else {
          const id = toId(op.fact_id);
          if (!facts.has(id)) problems.push(validationItem(['body', 'ops', i, 'fact_id'], 'No fact with this id for this agent', op.fact_id));
          else if (removed.has(id))
            problems.push(validationItem(['body', 'ops', i, 'fact_id'], 'This fact is removed by an earlier op of the batch', op.fact_id));
          if (op.op === 'remove') removed.add(id);
        }
      }
      if (problems.length) throw new ValidationFailed(problems);
      await this.limit(trx, agentId, ops.filter((o) => o.op === 'add').length);
      const results: Array<{ op: Op['op']; fact_id: number }> = [];
      for (const op of ops) {
        if (op.op === 'add') {
          const row = await trx
            .insertInto('knowledge_facts')
            .values({
              agent_id: agentId,
              question_id: op.question_id === undefined || op.question_id === null ? null : toId(op.question_id),
              text: op.text.trim(),
              sources: JSON.stringify([{ kind: 'owner', ref: null }]),
            })
            .returning('id')
            .executeTakeFirstOrThrow();
          results.push({ op: 'add', fact_id: row.id });
        } else if (op.op === 'change') {
          const fact = facts.get(toId(op.fact_id))!;
          await overrule(trx, agentId, overruledWords(fact));
          const sources = fact.sources as FactSource[];
          const next = sources.some((s) => s.kind === 'owner') ? sources : [...sources.filter((s) => !('gone' in s)), { kind: 'owner' as const, ref: null }];
          await trx
            .updateTable('knowledge_facts')
            .set({ text: op.text.trim(), sources: JSON.stringify(next), orphan: false, confidence: 1, updated_at: new Date() })
            .where('id', '=', fact.id)
            .execute();
          results.push({ op: 'change', fact_id: fact.id });
        } else {
          const fact = facts.get(toId(op.fact_id))!;
          await overrule(trx, agentId, overruledWords(fact));
          await trx.deleteFrom('knowledge_facts').where('id', '=', fact.id).execute();
          results.push({ op: 'remove', fact_id: fact.id });
        }
      }
      await this.pruneReviews(trx, agentId);
      return { results };
    });
  }

  /** Review items whose facts are gone (or down to one) are settled. */
  private async pruneReviews(trx: AnyDb, agentId: number) {
    const facts = new Set((await trx.selectFrom('knowledge_facts').select('id').where('agent_id', '=', agentId).execute()).map((f) => f.id));
    for (const review of await trx.selectFrom('knowledge_reviews').selectAll().where('agent_id', '=', agentId).execute()) {
      const left = review.fact_ids.filter((id) => facts.has(id));
      if (left.length < 2) await trx.deleteFrom('knowledge_reviews').where('id', '=', review.id).execute();
      else if (left.length !== review.fact_ids.length)
        await trx
          .updateTable('knowledge_reviews')
          .set({ fact_ids: sql<number[]>`${sql.val(left)}::integer[]` as never })
          .where('id', '=', review.id)
          .execute();
    }
  }

  /** Resolves a review: keep one of its facts (the others go), or replace them all with the owner's text. */
  async resolveReview(accountId: number, agentId: number, reviewId: number, choice: { factId?: number; text?: string }) {
    const agent = await this.knowledge.agents.get(accountId, agentId);
    return this.edit(agent, async (trx) => {
      const review = await trx.selectFrom('knowledge_reviews').selectAll().where('agent_id', '=', agentId).where('id', '=', reviewId).executeTakeFirst();
      if (!review) throw knowledgeV2Errors.review_not_found(`No review item with id ${reviewId} for this agent`);
      if (choice.factId !== undefined && !review.fact_ids.includes(choice.factId)) {
        throw new ValidationFailed([validationItem(['body', 'fact_id'], "The fact must be one of the review item's facts", choice.factId)]);
      }
      const facts = await trx.selectFrom('knowledge_facts').selectAll().where('id', 'in', review.fact_ids).execute();
      const dropped = facts.filter((f) => f.id !== choice.factId);
      for (const fact of dropped) await overrule(trx, agentId, overruledWords(fact));
      if (dropped.length)
        await trx
          .deleteFrom('knowledge_facts')
          .where(
            'id',
            'in',
            dropped.map((f) => f.id),
          )
          .execute();
      let kept: number;
      if (choice.factId !== undefined) {
        kept = choice.factId;
        const fact = facts.find((f) => f.id === kept)!;
        // The owner chose it: it is the owner's word now, kept when the pages are read again.
        const sources = fact.sources as FactSource[];
        if (!sources.some((s) => s.kind === 'owner'))
          await trx
            .updateTable('knowledge_facts')
            .set({ sources: JSON.stringify([...sources, { kind: 'owner', ref: null }]), confidence: 1, updated_at: new Date() })
            .where('id', '=', kept)
            .execute();
      } else {
        const row = await trx
          .insertInto('knowledge_facts')
          .values({ agent_id: agentId, question_id: review.question_id, text: choice.text!.trim(), sources: JSON.stringify([{ kind: 'owner', ref: null }]) })
          .returning('id')
          .executeTakeFirstOrThrow();
        kept = row.id;
      }
      await trx.deleteFrom('knowledge_reviews').where('id', '=', reviewId).execute();
      await this.pruneReviews(trx, agentId);
      const fact = await trx.selectFrom('knowledge_facts').selectAll().where('id', '=', kept).executeTakeFirstOrThrow();
      const reviews = await trx.selectFrom('knowledge_reviews').selectAll().where('agent_id', '=', agentId).orderBy('id').execute();
      return { resolved: reviewId, fact: factAnswer(fact), dropped: dropped.map((f) => f.id), review: reviews.map(reviewAnswer) };
    });
  }

  /** Merges facts saying the same thing (same question, same text but case, spacing, end punctuation). */
  async consolidate(accountId: number, agentId: number) {
    const agent = await this.knowledge.agents.get(accountId, agentId);
    return this.edit(agent, async (trx) => {
      const facts = await trx.selectFrom('knowledge_facts').selectAll().where('agent_id', '=', agentId).where('orphan', '=', false).orderBy('id').execute();
      const groups = new Map<string, typeof facts>();
      for (const fact of facts) {
        const key = `${fact.question_id ?? ''}\u0000${sameText(fact.text)}`;
        groups.set(key, [...(groups.get(key) ?? []), fact]);
      }
      const merged: Array<{ fact_id: number; merged_ids: number[] }> = [];
      for (const group of groups.values()) {
        if (group.length < 2) continue;
        const [keep, ...rest] = group;
        const sources: FactSource[] = [];
        for (const fact of group)
          for (const source of fact.sources as FactSource[])
            if (!sources.some((s) => s.kind === source.kind && String(s.ref) === String(source.ref))) sources.push(source);
        const confidence = Math.max(...group.map((f) => f.confidence));
        await trx
          .updateTable('knowledge_facts')
          .set({ sources: JSON.stringify(sources), confidence, updated_at: new Date() })
          .where('id', '=', keep!.id)
          .execute();
        await trx
          .deleteFrom('knowledge_facts')
          .where(
            'id',
            'in',
            rest.map((f) => f.id),
          )
          .execute();
        merged.push({ fact_id: keep!.id, merged_ids: rest.map((f) => f.id) });
      }
      await this.pruneReviews(trx, agentId);
      return { merged, facts_before: facts.length, facts_after: facts.length - merged.reduce((n, m) => n + m.merged_ids.length, 0) };
    });
  }

  // ---------- corrections ----------

  /** Previews what the owner's sentence changes; nothing is changed until it is applied. */
  async correction(accountId: number, agentId: number, text: string) {
    await this.knowledge.agents.get(accountId, agentId);
    const sentence = asSentence(text);
    const facts = await this.db.selectFrom('knowledge_facts').selectAll().where('agent_id', '=', agentId).where('orphan', '=', false).orderBy('id').execute();
    const matches = matchFacts(sentence, facts);
    let changes: Array<{ fact_id: number | null; before: string | null; after: string; question_id: number | null; matched?: string[] }>;
    const best = matches[0];
    changes = best
      ? [{ fact_id: best.fact.id, before: best.fact.text, after: sentence, question_id: best.fact.question_id, matched: best.words }]
      : [{ fact_id: null, before: null, after: sentence, question_id: await this.questionFor(agentId, sentence), matched: [] }];
    let engine: 'offline' | 'llm' = 'offline';
    if (this.model) {
      try {
        const shown = (matches.length ? matches.map((m) => m.fact) : facts).slice(0, 40);
        const answer = await this.model.json(
          [
            "A business owner corrects what their website assistant knows. Given the owner's sentence and the known facts, say which facts change and how each reads afterwards (a full sentence, keeping what stays true), or add a new fact when none is about it.",
            'Answer JSON only: {"changes": [{"fact_id": 12, "after": "…"}, {"fact_id": null, "after": "…"}]}.',
            `\nThe owner says: ${sentence}`,
            `\nKnown facts:\n${shown.map((f) => `[${f.id}] ${f.text}`).join('\n')}`,
          ].join('\n'),
          z.object({
            changes: z
              .array(z.object({ fact_id: z.coerce.number().int().nullable(), after: z.string().min(1).max(2000) }))
              .min(1)
              .max(20),
          }),
          AbortSignal.timeout(60_000),
        );
        const usable = answer.changes.filter((c) => c.fact_id === null || shown.some((f) => f.id === c.fact_id));
        if (usable.length) {
          changes = usable.map((c) => {
            const fact = shown.find((f) => f.id === c.fact_id);
            return { fact_id: fact?.id ?? null, before: fact?.text ?? null, after: c.after.trim(), question_id: fact?.question_id ?? null };
          });
          engine = 'llm';
        }
      } catch (error) {
        this.logger.warn(
          { agent_id: agentId, err: (error as Error).message },
          'the language model could not read the correction; the offline match was previewed',
        );
      }
    }
    for (const change of changes)
      if (change.fact_id === null && change.question_id === null) change.question_id = await this.questionFor(agentId, change.after);
    const previewId = `prv_${crypto.randomBytes(12).toString('base64url')}`;
    const expires = new Date(Date.now() + PREVIEW_HOURS * 3600_000);
    await this.db
      .insertInto('knowledge_previews')
      .values({ id: previewId, agent_id: agentId, text: sentence, changes: JSON.stringify(changes), expires_at: expires })
      .execute();
    return {
      preview_id: previewId,
      text: sentence,
      engine,
      expires_at: expires.toISOString(),
      changes: changes.map(({ fact_id, before, after, question_id, matched }) => ({ fact_id, before, after, question_id, ...(matched ? { matched } : {}) })),
    };
  }

  /** The schema question a new sentence answers (by intent, then by shared words), or null. */
  private async questionFor(agentId: number, sentence: string): Promise<number | null> {
    const questions = await this.questions(this.db, agentId);
    const own = analyseQuestion(sentence);
    const kinds = factIntents(sentence);
    let best: { id: number; score: number } | undefined;
    for (const q of questions) {
      const query = analyseQuestion(SEARCH_FOR[q.key] ?? q.question);
      let score = [...query.intents].filter((i) => kinds.has(i)).length * 2;
      score += terms(q.question).filter((t) => own.allTerms.includes(t)).length;
      if (score > 0 && (!best || score > best.score)) best = { id: q.id, score };
    }
    return best?.id ?? null;
  }

  async applyCorrection(accountId: number, agentId: number, previewId: string) {
    const agent = await this.knowledge.agents.get(accountId, agentId);
    return this.edit(agent, async (trx) => {
      const preview = await trx
        .selectFrom('knowledge_previews')
        .selectAll()
        .where('agent_id', '=', agentId)
        .where('id', '=', previewId)
        .forUpdate()
        .executeTakeFirst();
      if (!preview || preview.applied_at || new Date(preview.expires_at).getTime() < Date.now()) {
        throw knowledgeV2Errors.preview_not_found(`No correction preview ${previewId} to apply (unknown, already applied or expired)`);
      }
      const applied: Array<{ fact_id: number; before: string | null; after: string }> = [];
      const source: FactSource = { kind: 'correction', ref: previewId };
      for (const change of preview.changes) {
        const fact =
          change.fact_id === null
            ? undefined
            : await trx.selectFrom('knowledge_facts').selectAll().where('agent_id', '=', agentId).where('id', '=', change.fact_id).executeTakeFirst();
        if (fact) {
          await overrule(trx, agentId, overruledWords(fact));
          const sources = (fact.sources as FactSource[]).filter((s) => !('gone' in s));
          await trx
            .updateTable('knowledge_facts')
            .set({ text: change.after, sources: JSON.stringify([...sources, source]), orphan: false, confidence: 1, updated_at: new Date() })
            .where('id', '=', fact.id)
            .execute();
          applied.push({ fact_id: fact.id, before: change.before, after: change.after });
        } else {
          // A fact removed since the preview: the correction still says what the owner said, as a new fact.
          const row = await trx
            .insertInto('knowledge_facts')
            .values({ agent_id: agentId, question_id: change.question_id ?? null, text: change.after, sources: JSON.stringify([source]) })
            .returning('id')
            .executeTakeFirstOrThrow();
          applied.push({ fact_id: row.id, before: null, after: change.after });
        }
      }
      await trx.updateTable('knowledge_previews').set({ applied_at: new Date() }).where('id', '=', previewId).execute();
      await trx.deleteFrom('knowledge_previews').where('agent_id', '=', agentId).where('expires_at', '<', new Date()).execute();
      await this.pruneReviews(trx, agentId);
      return { preview_id: previewId, changes: applied };
    });
  }

  // ---------- behavior and dynamic instructions ----------

  async behavior(accountId: number, agentId: number): Promise<Behavior> {
    await this.knowledge.agents.get(accountId, agentId);
    return (await settingsOf(this.db, agentId)).behavior;
  }

  async patchBehavior(accountId: number, agentId: number, patch: Partial<Behavior>): Promise<Behavior> {
    const agent = await this.knowledge.agents.get(accountId, agentId);
    return this.edit(agent, async (trx) => {
      await ensureSettings(trx, agentId);
      const { behavior } = await settingsOf(trx, agentId);
      const next = { ...DEFAULT_BEHAVIOR, ...behavior, ...Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) } as Behavior;
      await trx
        .updateTable('knowledge_settings')
        .set({ behavior: JSON.stringify(next), updated_at: new Date() })
        .where('agent_id', '=', agentId)
        .execute();
      return next;
    });
  }

  async dynamic(accountId: number, agentId: number) {
    await this.knowledge.agents.get(accountId, agentId);
    const { dynamicInstructions } = await settingsOf(this.db, agentId);
    return { instructions: dynamicInstructions, variables: dynamicVariables(dynamicInstructions) };
  }

  async patchDynamic(accountId: number, agentId: number, instructions: string) {
    const agent = await this.knowledge.agents.get(accountId, agentId);
    return this.edit(agent, async (trx) => {
      await ensureSettings(trx, agentId);
      await trx.updateTable('knowledge_settings').set({ dynamic_instructions: instructions, updated_at: new Date() }).where('agent_id', '=', agentId).execute();
      return { instructions, variables: dynamicVariables(instructions) };
    });
  }

  async previewDynamic(accountId: number, agentId: number, values: Record<string, string>, instructions: string | undefined) {
    await this.knowledge.agents.get(accountId, agentId);
    const text = instructions ?? (await settingsOf(this.db, agentId)).dynamicInstructions;
    return { rendered: renderDynamic(text, values), variables: dynamicVariables(text) };
  }

  // ---------- orphans ----------

  async orphans(accountId: number, agentId: number) {
    await this.knowledge.agents.get(accountId, agentId);
    return { orphans: (await this.orphanRows(this.db, agentId)).map(factAnswer) };
  }

  private orphanRows(db: AnyDb, agentId: number) {
    return db.selectFrom('knowledge_facts').selectAll().where('agent_id', '=', agentId).where('orphan', '=', true).orderBy('id').execute();
  }

  async resolveOrphans(accountId: number, agentId: number, factIds: Array<number | string>, action: 'keep' | 'drop') {
    const agent = await this.knowledge.agents.get(accountId, agentId);
    return this.edit(agent, async (trx) => {
      const orphans = new Set((await this.orphanRows(trx, agentId)).map((f) => f.id));
      const problems = factIds.flatMap((raw, i) =>
        orphans.has(toId(raw)) ? [] : [validationItem(['body', 'fact_ids', i], 'Not an orphan fact of this agent', raw)],
      );
      if (problems.length) throw new ValidationFailed(problems);
      const ids = [...new Set(factIds.map(toId))];
      if (ids.length) {
        if (action === 'drop') await trx.deleteFrom('knowledge_facts').where('id', 'in', ids).execute();
        else
          await trx
            .updateTable('knowledge_facts')
            .set({ orphan: false, sources: JSON.stringify([{ kind: 'owner', ref: null }]), updated_at: new Date() })
            .where('id', 'in', ids)
            .execute();
      }
      await this.pruneReviews(trx, agentId);
      return { orphans: (await this.orphanRows(trx, agentId)).map(factAnswer) };
    });
  }
}

export type Op =
  | { op: 'add'; text: string; question_id?: number | string | null }
  | { op: 'change'; fact_id: number | string; text: string }
  | { op: 'remove'; fact_id: number | string };

/** A body's id (a string or an integer, compared as text) as the stored integer; -1 matches nothing. */
export function toId(value: number | string): number {
  const text = String(value).trim();
  return /^\d{1,9}$/.test(text) ? Number(text) : -1;
}

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}

/** The words of the pages a fact came from, once the owner overrules it (read facts only). */
function overruledWords(fact: Row<'knowledge_facts'>): string[] {
  const sources = fact.sources as FactSource[];
  if (!sources.some((s) => READ_KINDS.has(s.kind)) && !fact.orphan) return [];
  return [fact.origin, fact.text].filter((t): t is string => !!t);
}

export function factAnswer(row: Row<'knowledge_facts'>) {
  return {
    id: row.id,
    question_id: row.question_id,
    text: row.text,
    sources: (row.sources as Array<FactSource & { gone?: boolean }>).map((s) => ({
      kind: s.kind,
      ref: s.ref,
      ...(s.url ? { url: s.url } : {}),
      ...(s.gone ? { gone: true } : {}),
    })),
    confidence: round2(row.confidence),
    orphan: row.orphan,
    owner: isOwned(row.sources as FactSource[]),
  };
}

function questionAnswer(row: Row<'knowledge_questions'>, answered: Set<number>) {
  return { id: row.id, question: row.question, topic: row.topic, state: row.state, answered: answered.has(row.id), key: row.key };
}

function reviewAnswer(row: Row<'knowledge_reviews'>) {
  return { id: row.id, question_id: row.question_id, fact_ids: row.fact_ids };
}

function asSentence(text: string): string {
  const clean = text.replace(/\s+/g, ' ').trim();
  const capital = clean.charAt(0).toUpperCase() + clean.slice(1);
  return /[.!?]$/.test(capital) ? capital : `${capital}.`;
}

/** The kinds of fact a text holds (hours, prices…), as the question intents name them. */
function factIntents(text: string): Set<Intent> {
  const kinds = new Set<Intent>();
  if (hasHours(text) || TIME.test(text) || CLOSED.test(text) || /\b(open|close|closing|opening)\b/i.test(text)) kinds.add('hours');
  if (PRICE.test(text) || /\b(cost|price|charge|fee)s?\b/i.test(text)) kinds.add('price');
  for (const intent of analyseQuestion(text).intents) kinds.add(intent);
  return kinds;
}

/** Whether a text holds the kind of fact an intent asks for (extraction's test). */
function holds(intent: Intent, text: string): boolean {
  if (intent === 'price') return PRICE.test(text);
  if (intent === 'hours') return !PRICE.test(text) && (hasHours(text) || TIME.test(text) || CLOSED.test(text));
  return true;
}

/** Words a correction names that say nothing of what it is about. */
const CORRECTION_NOISE = new Set(['am', 'pm', 'now', 'new', 'chang', 'actual', 'longer', 'anymor', 'instead', 'sinc', 'start', 'correct', 'wrong', 'updat']);

/**
 * The facts an owner's sentence is about: sharing its subject words (days, products, services),
 * preferring those that hold the same kind of fact (hours, prices) and say little else.
 */
export function matchFacts(sentence: string, facts: Array<Row<'knowledge_facts'>>) {
  const own = terms(sentence).filter((t) => !/^\d/.test(t) && !CORRECTION_NOISE.has(t));
  const kinds = factIntents(sentence);
  const scored = [];
  for (const fact of facts) {
    const factTerms = new Set(terms(fact.text).filter((t) => !/^\d/.test(t)));
    const shared = [...new Set(own)].filter((t) => factTerms.has(t));
    if (!shared.length) continue;
    const sameKind = [...factIntents(fact.text)].some((k) => kinds.has(k));
    const score = shared.length * 2 + (sameKind ? 1.5 : 0) + shared.length / Math.max(1, factTerms.size) + (isOwned(fact.sources as FactSource[]) ? 0.25 : 0);
    scored.push({ fact, score, words: shared });
  }
  return scored.sort((a, b) => b.score - a.score || a.fact.id - b.fact.id);
}

/** Two facts about one question disagree when they speak of the same things with other numbers. */
export function disagree(a: string, b: string): boolean {
  const numbers = (t: string) => new Set(t.match(/\d+(?:[.,]\d+)?/g) ?? []);
  const na = numbers(a);
  const nb = numbers(b);
  if (!na.size || !nb.size || [...na].every((n) => nb.has(n))) return false;
  const words = (t: string) => new Set(terms(t).filter((w) => !/^\d/.test(w)));
  const wa = words(a);
  const wb = words(b);
  const shared = [...wa].filter((w) => wb.has(w)).length;
  return shared > 0 && shared / Math.min(wa.size, wb.size) >= 0.5;
}

/** The robots.txt group for the reader (its own name, else `*`): its Disallow paths, and all sitemaps. */
export function robotsRules(text: string): { disallow: string[]; sitemaps: string[] } {
  const groups: Array<{ agents: string[]; disallow: string[] }> = [];
  const sitemaps: string[] = [];
  let current: { agents: string[]; disallow: string[] } | undefined;
  let lastWasAgent = false;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/#.*/, '').trim();
    const match = /^([A-Za-z-]+)\s*:\s*(.*)$/.exec(line);
    if (!match) continue;
    const field = match[1]!.toLowerCase();
    const value = match[2]!.trim();
    if (field === 'user-agent') {
      if (!lastWasAgent || !current) groups.push((current = { agents: [], disallow: [] }));
      current.agents.push(value.toLowerCase());
      lastWasAgent = true;
      continue;
    }
    lastWasAgent = false;
    if (field === 'sitemap' && value) sitemaps.push(value);
    else if (field === 'disallow' && value && current) current.disallow.push(value);
  }
  const me = ROBOTS_AGENT.toLowerCase();
  const group = groups.find((g) => g.agents.some((a) => a !== '*' && me.includes(a))) ?? groups.find((g) => g.agents.includes('*'));
  return { disallow: group?.disallow ?? [], sitemaps };
}
