/**
 * The knowledge capability's rules and storage: an agent's pages, knowledge-base sections, the
 * owner's answers to knowledge gaps, and its brain (build state, instructions, facts). Every change
 * bumps the agent's knowledge `version`, which the answering engines key their caches on, so the
 * next answer uses it without a rebuild. Builds and page reads run as durable jobs (builds.ts).
 */
import crypto from 'node:crypto';
import { sql, type Transaction } from 'kysely';
import type { Db } from '../core/db/database.js';
import type { Database, KnowledgeBrainsTable, KnowledgePagesTable } from '../core/db/schema.js';
import type { Jobs } from '../core/jobs.js';
import type { Selectable } from 'kysely';
import { canonicalUrl } from './reader/urls.js';
import type { WebsiteReader, Discovery } from './reader/reader.js';
import { ReaderError } from './reader/fetch.js';
import type { Fact, SiteInfo } from './compile.js';
import { copyV2, dropSources, engineView, upsertGapFact, type Behavior, type KnownFact } from './v2/store.js';
import { knowledgeErrors } from './errors.js';

export const BUILD_QUEUE = 'knowledge.build';
export const PAGE_QUEUE = 'knowledge.page';
export const MAX_PAGES_PER_AGENT = 500;
export const MAX_SECTIONS_PER_AGENT = 200;

export type PageRow = Selectable<KnowledgePagesTable>;
export type BrainRow = Selectable<KnowledgeBrainsTable>;

/** What knowledge needs of an agent (given by app.ts from the agents capability). */
export interface KnowledgeAgent {
  id: number;
  account_id: number;
  name: string;
  website_url: string | null;
  system_prompt: string | null;
}

export interface AgentDirectory {
  /** The agent if it is the account's; 404 agent_not_found otherwise. */
  get(accountId: number, agentId: number): Promise<KnowledgeAgent>;
  byId(agentId: number): Promise<KnowledgeAgent | undefined>;
}

/** Everything an agent knows, for the answering engines. */
export interface KnowledgeSnapshot {
  agentId: number;
  version: number;
  pages: Array<{ id: number; url: string; title: string; isPrimary: boolean; content: string }>;
  sections: Array<{ topic: string; title: string; content: string }>;
  answers: Array<{ id: number; question: string; answer: string }>;
  instructions: string | null;
  facts: Fact[];
  site: SiteInfo;
  /** Knowledge v2: the facts (owner's first when answering), page words the owner overruled, behavior. */
  knownFacts: KnownFact[];
  overruled: string[];
  behavior: Behavior;
  dynamicInstructions: string;
}

export function slugOf(title: string): string {
  const slug = title
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 80)
    .replace(/-+$/, '');
  return slug || 'section';
}

export class KnowledgeService {
  /** Called after any change to an agent's knowledge (engines drop their cached index). */
  readonly onChange: Array<(agentId: number) => void> = [];

  constructor(
    readonly db: Db,
    readonly jobs: Jobs,
    readonly reader: WebsiteReader,
    readonly agents: AgentDirectory,
    readonly limits: { maxPages: number },
  ) {}

  // ---------- brain row and version ----------

  async brain(agentId: number): Promise<BrainRow | undefined> {
    return this.db.selectFrom('knowledge_brains').selectAll().where('agent_id', '=', agentId).executeTakeFirst();
  }

  async ensureBrain(agent: Pick<KnowledgeAgent, 'id' | 'account_id'>, trx: Transaction<Database> | Db = this.db): Promise<void> {
    await trx
      .insertInto('knowledge_brains')
      .values({ agent_id: agent.id, account_id: agent.account_id })
      .onConflict((oc) => oc.column('agent_id').doNothing())
      .execute();
  }

  /** Marks the agent's knowledge changed: a new version, and local caches told at once. */
  async changed(agent: Pick<KnowledgeAgent, 'id' | 'account_id'>, trx?: Transaction<Database>): Promise<void> {
    const db = trx ?? this.db;
    await db
      .insertInto('knowledge_brains')
      .values({ agent_id: agent.id, account_id: agent.account_id, version: 1 })
      .onConflict((oc) => oc.column('agent_id').doUpdateSet({ version: sql`knowledge_brains.version + 1` }))
      .execute();
    if (!trx) this.notify(agent.id);
  }

  notify(agentId: number): void {
    for (const listener of this.onChange) listener(agentId);
  }

  async version(agentId: number): Promise<number> {
    const row = await this.db.selectFrom('knowledge_brains').select('version').where('agent_id', '=', agentId).executeTakeFirst();
    return row?.version ?? 0;
  }

  async isBuilding(agentId: number): Promise<boolean> {
    const row = await this.db.selectFrom('knowledge_brains').select('status').where('agent_id', '=', agentId).executeTakeFirst();
    return row?.status === 'pending' || row?.status === 'processing';
  }

  async snapshot(agentId: number): Promise<KnowledgeSnapshot> {
    const [brain, pages, sections, answers, v2] = await Promise.all([
      this.brain(agentId),
      this.db
        .selectFrom('knowledge_pages')
        .select(['id', 'url', 'title', 'is_primary', 'content', 'content_override'])
        .where('agent_id', '=', agentId)
        .orderBy('id')
        .execute(),
      this.db.selectFrom('knowledge_sections').select(['topic', 'title', 'content']).where('agent_id', '=', agentId).orderBy('id').execute(),
      // Gap answers are facts with source gap (knownFacts), so an owner's later edit of one holds.
      this.db
        .selectFrom('knowledge_answers')
        .select(['id', 'question', 'answer'])
        .where('agent_id', '=', agentId)
        .where('gap_id', 'is', null)
        .orderBy('id')
        .execute(),
      engineView(this.db, agentId),
    ]);
    return {
      agentId,
      version: brain?.version ?? 0,
      pages: pages
        .map((p) => ({ id: p.id, url: p.url, title: p.title ?? '', isPrimary: p.is_primary, content: p.content_override ?? p.content ?? '' }))
        .filter((p) => p.content.trim()),
      sections,
      answers,
      instructions: brain?.status === 'complete' || brain?.instructions ? (brain?.instructions ?? null) : null,
      facts: (brain?.facts as Fact[] | undefined) ?? [],
      site: (brain?.site as SiteInfo | undefined) ?? {},
      ...v2,
    };
  }

  // ---------- brain status and builds ----------

  statusAnswer(agentId: number, brain: BrainRow | undefined) {
    const status = brain?.status ?? 'none';
    return {
      agent_id: agentId,
      brain_status: status,
      progress: { pages_done: brain?.pages_done ?? 0, pages_total: brain?.pages_total ?? 0 },
      phase: status === 'pending' || status === 'processing' ? (brain?.phase ?? null) : null,
      error: status === 'failed' ? (brain?.error ?? 'The build failed') : null,
      engine: brain?.engine ?? null,
      requested_at: iso(brain?.requested_at),
      started_at: iso(brain?.started_at),
      finished_at: iso(brain?.finished_at),
      ...(status === 'complete' ? { instructions: brain?.instructions ?? '', facts: (brain?.facts as Fact[]) ?? [] } : {}),
    };
  }

  async status(accountId: number, agentId: number) {
    await this.agents.get(accountId, agentId);
    return this.statusAnswer(agentId, await this.brain(agentId));
  }

  async extractLinks(accountId: number, agentId: number): Promise<Discovery> {
    const agent = await this.agents.get(accountId, agentId);
    if (!agent.website_url) throw knowledgeErrors.no_website('The agent has no website_url; set it with PATCH /v1/agent/{agent_id} first');
    try {
      return await this.reader.discover(agent.website_url, AbortSignal.timeout(60_000));
    } catch (error) {
      throw readerProblem(error, agent.website_url);
    }
  }

  /** Queues a build: the given pages, or (none given) the pages found on the agent's website. */
  async generate(accountId: number, agentId: number, pages: Array<{ url: string; is_primary: boolean }> | undefined) {
    const agent = await this.agents.get(accountId, agentId);
    const requested = dedupePages(pages ?? []);
    if (requested.length > this.limits.maxPages) {
      throw knowledgeErrors.too_many_pages(`A build reads at most ${this.limits.maxPages} pages (CRAWL_MAX_PAGES); ${requested.length} were given`);
    }
    const buildId = crypto.randomUUID();
    await this.db.transaction().execute(async (trx) => {
      await this.lockIdleBrain(trx, agent);
      let discover = false;
      let ids: number[] = [];
      if (requested.length) {
        ids = await this.upsertPages(trx, agent, requested, true);
      } else if (agent.website_url) {
        discover = true;
      } else {
        // No website and no list: rebuild from what the agent already has.
        const existing = await trx.selectFrom('knowledge_pages').select('id').where('agent_id', '=', agent.id).orderBy('id').execute();
        const sections = await trx.selectFrom('knowledge_sections').select('id').where('agent_id', '=', agent.id).limit(1).execute();
        if (!existing.length && !sections.length && !agent.system_prompt?.trim()) {
          throw knowledgeErrors.no_website(
            'The agent has no website_url and no pages were given; set website_url, pass pages, or write a system_prompt or knowledge-base sections',
          );
        }
        ids = existing.map((p) => p.id).slice(0, this.limits.maxPages);
      }
      await this.queueBuild(trx, agent.id, buildId, { phase: discover ? 'discover' : 'read', v2Step: null, discover, ids });
    });
    return this.statusAnswer(agent.id, await this.brain(agent.id));
  }

  /**
   * Queues a knowledge-v2 build step as a build job (brain-status reports it as after generate-brain):
   * `schema` (the questions from the website), `extract` (the facts; with `pages` those are read
   * first, as generate-brain reads them) or `recompile` (the instructions from the facts now).
   */
  async queueV2(accountId: number, agentId: number, step: 'schema' | 'extract' | 'recompile', pages?: Array<{ url: string; is_primary: boolean }>) {
    const agent = await this.agents.get(accountId, agentId);
    const requested = dedupePages(pages ?? []);
    if (requested.length > this.limits.maxPages) {
      throw knowledgeErrors.too_many_pages(`A build reads at most ${this.limits.maxPages} pages (CRAWL_MAX_PAGES); ${requested.length} were given`);
    }
    if (step === 'schema' && !agent.website_url) throw knowledgeErrors.no_website('The agent has no website_url; set it with PATCH /v1/agent/{agent_id} first');
    const buildId = crypto.randomUUID();
    await this.db.transaction().execute(async (trx) => {
      await this.lockIdleBrain(trx, agent);
      const ids = requested.length ? await this.upsertPages(trx, agent, requested, true) : [];
      await this.queueBuild(trx, agent.id, buildId, {
        phase: step === 'schema' ? 'schema' : ids.length ? 'read' : 'compile',
        v2Step: step,
        discover: false,
        ids,
      });
    });
    return this.statusAnswer(agent.id, await this.brain(agent.id));
  }

  /** Locks the agent's brain row for a new build; 409 while one is pending or running. */
  private async lockIdleBrain(trx: Transaction<Database>, agent: KnowledgeAgent): Promise<void> {
    await this.ensureBrain(agent, trx);
    const brain = await trx.selectFrom('knowledge_brains').selectAll().where('agent_id', '=', agent.id).forUpdate().executeTakeFirstOrThrow();
    if (brain.status === 'pending' || brain.status === 'processing') {
      throw knowledgeErrors.build_in_progress();
    }
  }

  /** Marks the brain pending for build `buildId` and queues its durable job, in the caller's transaction. */
  private async queueBuild(
    trx: Transaction<Database>,
    agentId: number,
    buildId: string,
    build: { phase: string; v2Step: 'schema' | 'extract' | 'recompile' | null; discover: boolean; ids: number[] },
  ): Promise<void> {
    await trx
      .updateTable('knowledge_brains')
      .set({
        status: 'pending',
        build_id: buildId,
        phase: build.phase as never,
        v2_step: build.v2Step,
        discover: build.discover,
        build_pages: sql<number[]>`${sql.val(build.ids)}::integer[]` as never,
        pages_total: build.ids.length,
        pages_done: 0,
        error: null,
        requested_at: new Date(),
        started_at: null,
        finished_at: null,
        updated_at: new Date(),
      })
      .where('agent_id', '=', agentId)
      .execute();
    await this.jobs.send(BUILD_QUEUE, { agentId, buildId }, {}, trx);
  }

  /** Inserts new pages (pending) and returns the ids of all, existing ones included, in order. */
  async upsertPages(
    trx: Transaction<Database>,
    agent: KnowledgeAgent,
    pages: Array<{ url: string; is_primary: boolean }>,
    keepExistingCategory: boolean,
  ): Promise<number[]> {
    const ids: number[] = [];
    for (const page of pages) {
      const existing = await trx.selectFrom('knowledge_pages').select(['id']).where('agent_id', '=', agent.id).where('url', '=', page.url).executeTakeFirst();
      if (existing) {
        if (!keepExistingCategory)
          await trx.updateTable('knowledge_pages').set({ is_primary: page.is_primary, updated_at: new Date() }).where('id', '=', existing.id).execute();
        else await trx.updateTable('knowledge_pages').set({ is_primary: page.is_primary }).where('id', '=', existing.id).execute();
        ids.push(existing.id);
        continue;
      }
      const count = await trx
        .selectFrom('knowledge_pages')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('agent_id', '=', agent.id)
        .executeTakeFirstOrThrow();
      if (Number(count.n) >= MAX_PAGES_PER_AGENT) throw knowledgeErrors.page_limit(`An agent holds at most ${MAX_PAGES_PER_AGENT} pages; delete some first`);
      const row = await trx
        .insertInto('knowledge_pages')
        .values({ agent_id: agent.id, url: page.url, is_primary: page.is_primary })
        .returning('id')
        .executeTakeFirstOrThrow();
      ids.push(row.id);
    }
    return ids;
  }

  // ---------- pages ----------

  async addPage(accountId: number, agentId: number, input: { url: string; is_primary: boolean }) {
    const agent = await this.agents.get(accountId, agentId);
    const url = canonicalUrl(input.url);
    if (!url) throw knowledgeErrors.invalid_url();
    const page = await this.db.transaction().execute(async (trx) => {
      await this.ensureBrain(agent, trx);
      const [id] = await this.upsertPages(trx, agent, [{ url, is_primary: input.is_primary }], false);
      await trx.updateTable('knowledge_pages').set({ status: 'pending', error: null, updated_at: new Date() }).where('id', '=', id!).execute();
      await this.jobs.send(PAGE_QUEUE, { agentId: agent.id, pageId: id! }, {}, trx);
      return trx.selectFrom('knowledge_pages').selectAll().where('id', '=', id!).executeTakeFirstOrThrow();
    });
    return pageAnswer(page, true);
  }

  async listPages(accountId: number, agentId: number) {
    await this.agents.get(accountId, agentId);
    const rows = await this.db.selectFrom('knowledge_pages').selectAll().where('agent_id', '=', agentId).orderBy('id').execute();
    return rows.map((row) => pageAnswer(row, false));
  }

  private async page(accountId: number, agentId: number, pageId: number): Promise<{ agent: KnowledgeAgent; page: PageRow }> {
    const agent = await this.agents.get(accountId, agentId);
    const page = await this.db.selectFrom('knowledge_pages').selectAll().where('id', '=', pageId).where('agent_id', '=', agentId).executeTakeFirst();
    if (!page) throw knowledgeErrors.page_not_found(`No page with id ${pageId} for this agent`);
    return { agent, page };
  }

  async getPage(accountId: number, agentId: number, pageId: number) {
    return pageAnswer((await this.page(accountId, agentId, pageId)).page, true);
  }

  async editPage(accountId: number, agentId: number, pageId: number, input: { is_primary?: boolean; content?: string | null }) {
    const { agent } = await this.page(accountId, agentId, pageId);
    const changes: Record<string, unknown> = { updated_at: new Date() };
    if (input.is_primary !== undefined) changes.is_primary = input.is_primary;
    if (input.content !== undefined) changes.content_override = input.content === null || input.content.trim() === '' ? null : input.content;
    const row = await this.db.updateTable('knowledge_pages').set(changes).where('id', '=', pageId).returningAll().executeTakeFirstOrThrow();
    await this.changed(agent);
    return pageAnswer(row, true);
  }

  async deletePage(accountId: number, agentId: number, pageId: number): Promise<void> {
    const { agent } = await this.page(accountId, agentId, pageId);
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('knowledge_pages').where('id', '=', pageId).execute();
      await dropSources(trx, agent.id, 'page', [pageId]);
      await this.changed(agent, trx);
    });
    this.notify(agent.id);
  }

  async clearPages(accountId: number, agentId: number, isPrimary: boolean | undefined): Promise<void> {
    const agent = await this.agents.get(accountId, agentId);
    await this.db.transaction().execute(async (trx) => {
      let query = trx.deleteFrom('knowledge_pages').where('agent_id', '=', agentId);
      if (isPrimary !== undefined) query = query.where('is_primary', '=', isPrimary);
      const gone = await query.returning('id').execute();
      if (gone.length)
        await dropSources(
          trx,
          agent.id,
          'page',
          gone.map((p) => p.id),
        );
      await this.changed(agent, trx);
    });
    this.notify(agent.id);
  }

  // ---------- knowledge-base sections ----------

  async sections(accountId: number, agentId: number) {
    await this.agents.get(accountId, agentId);
    return this.sectionsAnswer(agentId);
  }

  private async sectionsAnswer(agentId: number) {
    const rows = await this.db.selectFrom('knowledge_sections').selectAll().where('agent_id', '=', agentId).orderBy('id').execute();
    return {
      agent_id: agentId,
      sections: rows.map((r) => ({ topic: r.topic, title: r.title, content: r.content, created_at: iso(r.created_at)!, updated_at: iso(r.updated_at)! })),
    };
  }

  async createSection(accountId: number, agentId: number, input: { title: string; content: string }) {
    const agent = await this.agents.get(accountId, agentId);
    const topic = slugOf(input.title);
    await this.db.transaction().execute(async (trx) => {
      await this.ensureBrain(agent, trx);
      // Serialises section writes of one agent, so the limit and the topic check hold under concurrency.
      await trx.selectFrom('knowledge_brains').select('agent_id').where('agent_id', '=', agent.id).forUpdate().execute();
      const count = await trx
        .selectFrom('knowledge_sections')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('agent_id', '=', agent.id)
        .executeTakeFirstOrThrow();
      if (Number(count.n) >= MAX_SECTIONS_PER_AGENT)
        throw knowledgeErrors.section_limit(`An agent holds at most ${MAX_SECTIONS_PER_AGENT} knowledge-base sections`);
      const existing = await trx.selectFrom('knowledge_sections').select('id').where('agent_id', '=', agent.id).where('topic', '=', topic).executeTakeFirst();
      if (existing) throw knowledgeErrors.section_exists(`A section with topic "${topic}" exists; update it with PATCH …/kb-sections/${topic}`);
      await trx.insertInto('knowledge_sections').values({ agent_id: agent.id, topic, title: input.title, content: input.content }).execute();
      await this.changed(agent, trx);
    });
    this.notify(agent.id);
    return this.sectionsAnswer(agent.id);
  }

  async updateSection(accountId: number, agentId: number, topic: string, input: { title?: string; content?: string }) {
    const agent = await this.agents.get(accountId, agentId);
    const changes: Record<string, unknown> = { updated_at: new Date() };
    if (input.title !== undefined) changes.title = input.title;
    if (input.content !== undefined) changes.content = input.content;
    const row = await this.db
      .updateTable('knowledge_sections')
      .set(changes)
      .where('agent_id', '=', agentId)
      .where('topic', '=', topic)
      .returning('id')
      .executeTakeFirst();
    if (!row) throw knowledgeErrors.section_not_found(`No knowledge-base section "${topic}" for this agent`);
    await this.changed(agent);
    return this.sectionsAnswer(agentId);
  }

  async deleteSection(accountId: number, agentId: number, topic: string) {
    const agent = await this.agents.get(accountId, agentId);
    await this.db.transaction().execute(async (trx) => {
      const row = await trx.deleteFrom('knowledge_sections').where('agent_id', '=', agentId).where('topic', '=', topic).returning('id').executeTakeFirst();
      if (!row) throw knowledgeErrors.section_not_found(`No knowledge-base section "${topic}" for this agent`);
      await dropSources(trx, agent.id, 'kb_section', [topic]);
      await this.changed(agent, trx);
    });
    this.notify(agent.id);
    return this.sectionsAnswer(agentId);
  }

  // ---------- manual answers (from knowledge gaps) ----------

  /** The owner's answer to a question: known from the next answer on. One per gap (replaced). */
  async setAnswer(agent: Pick<KnowledgeAgent, 'id' | 'account_id'>, gapId: number, question: string, answer: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const updated = await trx
        .updateTable('knowledge_answers')
        .set({ question, answer, updated_at: new Date() })
        .where('gap_id', '=', gapId)
        .where('agent_id', '=', agent.id)
        .returning('id')
        .executeTakeFirst();
      if (!updated) await trx.insertInto('knowledge_answers').values({ agent_id: agent.id, question, answer, gap_id: gapId }).execute();
      await upsertGapFact(trx, agent.id, gapId, answer);
      await this.changed(agent, trx);
    });
    this.notify(agent.id);
  }

  // ---------- agent copies and removal ----------

  /** Copies what the source agent knows to its duplicate (pages, sections, answers, the built brain). */
  async copy(sourceId: number, target: Pick<KnowledgeAgent, 'id' | 'account_id'>): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const brain = await trx.selectFrom('knowledge_brains').selectAll().where('agent_id', '=', sourceId).executeTakeFirst();
      if (brain) {
        // A build still running is not copied: the copy keeps what was last built.
        const settled = brain.status === 'pending' || brain.status === 'processing' ? (brain.instructions ? 'complete' : 'none') : brain.status;
        await trx
          .insertInto('knowledge_brains')
          .values({
            agent_id: target.id,
            account_id: target.account_id,
            status: settled,
            engine: brain.engine,
            error: settled === 'failed' ? brain.error : null,
            instructions: brain.instructions,
            facts: JSON.stringify(brain.facts),
            site: JSON.stringify(brain.site),
            boilerplate: JSON.stringify(brain.boilerplate),
            pages_total: brain.pages_total,
            pages_done: brain.pages_done,
            version: 1,
            finished_at: brain.finished_at,
          })
          .onConflict((oc) => oc.column('agent_id').doNothing())
          .execute();
      }
      await sql`
        INSERT INTO knowledge_pages (agent_id, url, is_primary, status, title, extracted, content, content_override, final_url, error, read_at)
        SELECT ${target.id}, url, is_primary, CASE WHEN status = 'pending' THEN 'failed' ELSE status END, title, extracted, content, content_override, final_url,
               CASE WHEN status = 'pending' THEN 'Not yet read when the agent was copied; add the page again' ELSE error END, read_at
        FROM knowledge_pages WHERE agent_id = ${sourceId} ORDER BY id`.execute(trx);
      await sql`INSERT INTO knowledge_sections (agent_id, topic, title, content) SELECT ${target.id}, topic, title, content FROM knowledge_sections WHERE agent_id = ${sourceId} ORDER BY id`.execute(
        trx,
      );
      await sql`INSERT INTO knowledge_answers (agent_id, question, answer) SELECT ${target.id}, question, answer FROM knowledge_answers WHERE agent_id = ${sourceId} ORDER BY id`.execute(
        trx,
      );
      await copyV2(trx, sourceId, target.id);
    });
    this.notify(target.id);
  }
}

function dedupePages(pages: Array<{ url: string; is_primary: boolean }>): Array<{ url: string; is_primary: boolean }> {
  const seen = new Map<string, { url: string; is_primary: boolean }>();
  for (const page of pages) {
    const url = canonicalUrl(page.url);
    if (url && !seen.has(url)) seen.set(url, { url, is_primary: page.is_primary });
  }
  return [...seen.values()];
}

export function iso(value: Date | string | null | undefined): string | null {
  return value ? new Date(value).toISOString() : null;
}

export function pageAnswer(row: PageRow, withContent: boolean) {
  const content = row.content_override ?? row.content ?? '';
  return {
    id: row.id,
    agent_id: row.agent_id,
    url: row.url,
    is_primary: row.is_primary,
    status: row.status,
    title: row.title,
    size: Buffer.byteLength(content),
    error: row.error,
    read_at: iso(row.read_at),
    final_url: row.final_url,
    has_override: row.content_override !== null,
    created_at: iso(row.created_at)!,
    updated_at: iso(row.updated_at)!,
    ...(withContent ? { content } : {}),
  };
}

/** A reader failure as the API says it (422 private_address, or 422 website_unreachable). */
export function readerProblem(error: unknown, url: string): unknown {
  if (error instanceof ReaderError) {
    if (error.code === 'private_address') return knowledgeErrors.private_address(error.message);
    return knowledgeErrors.website_unreachable(`The website ${url} could not be read: ${error.message}`);
  }
  return error;
}
