/**
 * Brain builds and page reads as durable jobs (core/jobs.ts). A build is a chain of short steps
 * (discover → read → compile), each step one job of at most ~40 s that queues the next, so a build
 * interrupted by a restart or `kill -9` resumes where it stopped: pages this build already read are
 * not read again. A build that fails on its last attempt, or stops making progress, is marked
 * `failed` with a reason; it is never left in `processing`.
 */
import { LRUCache } from 'lru-cache';
import type { JobsLogger } from '../core/jobs.js';
import { decodeBody, ReaderError } from './reader/fetch.js';
import { canonicalUrl, dedupeKey } from './reader/urls.js';
import { loadExtractor } from './load-extractor.js';
import { findBoilerplate, removeBoilerplate, NO_BOILERPLATE, type Boilerplate } from './boilerplate.js';
import type { InstructionsWriter, KnowledgeDocument, SiteInfo } from './compile.js';
import { offlineWriter } from './compile.js';
import { BUILD_QUEUE, PAGE_QUEUE, type KnowledgeService, type PageRow } from './service.js';
import type { Db } from '../core/db/database.js';
import { sql } from 'kysely';

const STEP_SECONDS = 40;
const BUILD_RETRIES = 3;
/** Times a stalled build is taken up again before it is failed. */
const MAX_RESUMES = 3;

export type ReadResult =
  | { ok: true; title: string; extracted: string; finalUrl: string; site: SiteInfo }
  | { ok: false; error: string; title?: string; finalUrl?: string };

/** The knowledge-v2 steps a build runs (v2/service.ts), given by app.ts. */
export interface V2BuildSteps {
  /** schema/generate: the questions, from the agent's website. */
  schema(agentId: number, signal: AbortSignal): Promise<void>;
  /** extract: the facts, from the agent's pages and sections. */
  extract(agentId: number, signal: AbortSignal): Promise<void>;
  /** Page words the owner overruled (left out of the instructions). */
  overruled(agentId: number): Promise<string[]>;
  /** The facts and behavior as instructions (appended to what the writer wrote); '' when none. */
  addendum(agentId: number): Promise<string>;
}

export class BrainBuilds {
  /** Knowledge v2's build steps (absent: generate-brain builds only). */
  v2: V2BuildSteps | undefined;
  private readonly running = new Map<number, Promise<void>>();
  /** Builds taken up again by the sweep, and how often. */
  private readonly resumed = new LRUCache<string, number>({ max: 1000 });
  private sweepTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly knowledge: KnowledgeService,
    private readonly writer: InstructionsWriter,
    private readonly logger: JobsLogger,
    private readonly maxPages: number,
    /** Seconds without progress after which a build's step is considered lost (BRAIN_BUILD_STALL_SECONDS). */
    private readonly stallSeconds = 120,
  ) {}

  private get db(): Db {
    return this.knowledge.db;
  }

  async start(): Promise<void> {
    await this.knowledge.jobs.work<{ agentId: number; buildId: string }>(
      BUILD_QUEUE,
      { retryLimit: BUILD_RETRIES, retryDelay: 3, concurrency: 2 },
      (data, job) => this.serial(data.agentId, () => this.step(data.agentId, data.buildId, job.retryCount)),
    );
    await this.knowledge.jobs.work<{ agentId: number; pageId: number }>(PAGE_QUEUE, { retryLimit: 2, retryDelay: 3, concurrency: 2 }, (data) =>
      this.readAddedPage(data.agentId, data.pageId),
    );
    await this.sweep();
    this.sweepTimer = setInterval(
      () => void this.sweep().catch((error) => this.logger.warn({ err: error }, 'brain build sweep failed')),
      Math.min(30, Math.max(1, this.stallSeconds / 2)) * 1000,
    );
    this.sweepTimer.unref();
  }

  stop(): void {
    clearInterval(this.sweepTimer);
  }

  /** One build step at a time per agent in this process. */
  private async serial(agentId: number, task: () => Promise<void>): Promise<void> {
    const previous = this.running.get(agentId) ?? Promise.resolve();
    const current = previous.catch(() => {}).then(task);
    this.running.set(agentId, current);
    try {
      await current;
    } finally {
      if (this.running.get(agentId) === current) this.running.delete(agentId);
    }
  }

  /**
   * Builds that stopped moving (the process running their step died, e.g. `kill -9` on a
   * PostgreSQL node whose job would otherwise wait for its expiry) are taken up again by sending
   * their next step; after a few tries without progress they are failed, never left running.
   */
  async sweep(): Promise<void> {
    const rows = await this.db
      .selectFrom('knowledge_brains')
      .select(['agent_id', 'build_id', 'status', 'updated_at'])
      .where('status', 'in', ['pending', 'processing'])
      .execute();
    for (const row of rows) {
      if (Date.now() - new Date(row.updated_at).getTime() < this.stallSeconds * 1000 || !row.build_id) continue;
      const tries = (this.resumed.get(row.build_id) ?? 0) + 1;
      if (tries > MAX_RESUMES) {
        this.resumed.delete(row.build_id);
        await this.fail(row.agent_id, row.build_id, 'The build stopped making progress (the server may have stopped during it); build again');
        continue;
      }
      this.resumed.set(row.build_id, tries);
      await this.db
        .updateTable('knowledge_brains')
        .set({ updated_at: new Date() })
        .where('agent_id', '=', row.agent_id)
        .where('build_id', '=', row.build_id)
        .execute();
      await this.knowledge.jobs.send(BUILD_QUEUE, { agentId: row.agent_id, buildId: row.build_id });
      this.logger.warn({ agent_id: row.agent_id }, 'a brain build had stopped making progress; its next step was sent again');
    }
  }

  private async fail(agentId: number, buildId: string | null, reason: string): Promise<void> {
    let query = this.db
      .updateTable('knowledge_brains')
      .set({ status: 'failed', phase: null, error: reason.slice(0, 1000), finished_at: new Date(), updated_at: new Date() })
      .where('agent_id', '=', agentId)
      .where('status', 'in', ['pending', 'processing']);
    if (buildId) query = query.where('build_id', '=', buildId);
    await query.execute();
    this.logger.warn({ agent_id: agentId, reason }, 'brain build failed');
  }

  private async current(agentId: number, buildId: string) {
    const brain = await this.knowledge.brain(agentId);
    if (!brain || brain.build_id !== buildId || (brain.status !== 'pending' && brain.status !== 'processing')) return undefined;
    return brain;
  }

  private async step(agentId: number, buildId: string, retryCount: number): Promise<void> {
    let brain = await this.current(agentId, buildId);
    if (!brain) return; // superseded, finished, or the agent is gone
    try {
      if (brain.status === 'pending') {
        await this.db
          .updateTable('knowledge_brains')
          .set({ status: 'processing', started_at: new Date(), updated_at: new Date() })
          .where('agent_id', '=', agentId)
          .where('build_id', '=', buildId)
          .execute();
      }
      const agent = await this.knowledge.agents.byId(agentId);
      if (!agent) return;
      const deadline = Date.now() + STEP_SECONDS * 1000;

      if (brain.phase === 'discover') {
        if (!agent.website_url) throw new BuildFailure('The agent has no website_url to read');
        let discovery;
        try {
          discovery = await this.knowledge.reader.discover(agent.website_url, AbortSignal.timeout(STEP_SECONDS * 2 * 1000));
        } catch (error) {
          if (error instanceof ReaderError)
            throw new BuildFailure(error.code === 'private_address' ? `private_address: ${error.message}` : `The website could not be read: ${error.message}`);
          throw error;
        }
        const chosen = discovery.links.slice(0, this.maxPages).map((l) => ({ url: l.url, is_primary: l.default_category === 'primary' }));
        await this.db.transaction().execute(async (trx) => {
          const ids = await this.knowledge.upsertPages(trx, agent, chosen, true);
          await trx
            .updateTable('knowledge_brains')
            .set({
              phase: 'read',
              build_pages: ids as never,
              pages_total: ids.length,
              pages_done: 0,
              site: JSON.stringify({ homepage: discovery.homepageUrl }),
              updated_at: new Date(),
            })
            .where('agent_id', '=', agentId)
            .where('build_id', '=', buildId)
            .execute();
        });
        brain = await this.current(agentId, buildId);
        if (!brain) return;
      }

      if (brain.phase === 'read') {
        const ids = brain.build_pages;
        const pages = ids.length ? await this.db.selectFrom('knowledge_pages').selectAll().where('id', 'in', ids).execute() : [];
        const todo = ids.map((id) => pages.find((p) => p.id === id)).filter((p): p is PageRow => !!p && p.read_build_id !== buildId);
        let next = 0;
        let timeUp = false;
        const worker = async () => {
          while (next < todo.length) {
            if (Date.now() > deadline) {
              timeUp = true;
              return;
            }
            const page = todo[next++]!;
            const result = await this.read(page.url, agentId, page.id);
            await this.store(page, result, buildId);
            if (result.ok) await this.saveSite(agentId, result.site, isHomepage(page.url, agent.website_url, brain!));
            await this.progress(agentId, buildId);
          }
        };
        await Promise.all([worker(), worker()]);
        // Counted once more with both readers done: each counted after its own page, and one's
        // count may have missed the other's page stored meanwhile.
        await this.progress(agentId, buildId);
        if (!(await this.current(agentId, buildId))) return;
        if (timeUp) {
          // The rest in the next step: a short job each, so a crash loses little.
          await this.knowledge.jobs.send(BUILD_QUEUE, { agentId, buildId });
          return;
        }
        await this.db
          .updateTable('knowledge_brains')
          .set({ phase: 'compile', updated_at: new Date() })
          .where('agent_id', '=', agentId)
          .where('build_id', '=', buildId)
          .execute();
        brain = await this.current(agentId, buildId);
        if (!brain) return;
      }

      if (brain.phase === 'schema') {
        if (!this.v2) throw new BuildFailure('Knowledge v2 is not available');
        await this.v2.schema(agentId, AbortSignal.timeout(STEP_SECONDS * 2 * 1000));
        await this.db
          .updateTable('knowledge_brains')
          .set({ status: 'complete', phase: null, error: null, finished_at: new Date(), updated_at: new Date(), version: sql`version + 1` } as never)
          .where('agent_id', '=', agentId)
          .where('build_id', '=', buildId)
          .where('status', 'in', ['pending', 'processing'])
          .execute();
        this.knowledge.notify(agentId);
        return;
      }

      if (brain.phase === 'compile') {
        if (brain.v2_step === 'extract' && this.v2) await this.v2.extract(agentId, AbortSignal.timeout(STEP_SECONDS * 2 * 1000));
        await this.compile(agentId, buildId, agent, brain.build_pages);
      }
    } catch (error) {
      if (error instanceof BuildFailure) return this.fail(agentId, buildId, error.message);
      if (retryCount >= BUILD_RETRIES) return this.fail(agentId, buildId, `The build failed: ${(error as Error).message}`);
      throw error;
    }
  }

  private async progress(agentId: number, buildId: string): Promise<void> {
    const brain = await this.current(agentId, buildId);
    if (!brain) return;
    const done = brain.build_pages.length
      ? await this.db
          .selectFrom('knowledge_pages')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('id', 'in', brain.build_pages)
          .where('read_build_id', '=', buildId)
          .executeTakeFirstOrThrow()
      : { n: 0 };
    // Never backwards: two readers count at once, and the one that counted first may write last.
    await this.db
      .updateTable('knowledge_brains')
      .set({ pages_done: sql<number>`GREATEST(pages_done, ${Number(done.n)})`, updated_at: new Date() })
      .where('agent_id', '=', agentId)
      .where('build_id', '=', buildId)
      .execute();
  }

  /** The homepage names and describes the business; another page only fills what is still unknown. */
  private async saveSite(agentId: number, site: SiteInfo, homepage: boolean): Promise<void> {
    const brain = await this.knowledge.brain(agentId);
    const known = (brain?.site ?? {}) as SiteInfo;
    const found = Object.fromEntries(Object.entries(site).filter(([, v]) => v)) as SiteInfo;
    if (!homepage && known.name) return;
    const merged = homepage ? { ...known, ...found } : { ...found, ...known, name: known.name ?? found.name };
    await this.db
      .updateTable('knowledge_brains')
      .set({ site: JSON.stringify(merged) })
      .where('agent_id', '=', agentId)
      .execute();
  }

  /** Reads one page: fetched politely, checked, its readable text extracted. */
  async read(url: string, agentId: number, pageId?: number): Promise<ReadResult> {
    let response;
    try {
      response = await this.knowledge.reader.get(url);
    } catch (error) {
      if (error instanceof ReaderError) return { ok: false, error: error.code === 'private_address' ? `private_address: ${error.message}` : error.message };
      return { ok: false, error: `The page could not be read: ${(error as Error).message}` };
    }
    const finalUrl = canonicalUrl(response.url) ?? response.url;
    if (response.status >= 400)
      return { ok: false, finalUrl, error: `The page answered HTTP ${response.status}${response.status === 404 ? ' (not found)' : ''}` };
    if (dedupeKey(finalUrl) !== dedupeKey(url)) {
      const twin = await this.db
        .selectFrom('knowledge_pages')
        .select(['id', 'url'])
        .where('agent_id', '=', agentId)
        .where('url', '=', finalUrl)
        .executeTakeFirst();
      if (twin && twin.id !== pageId) return { ok: false, finalUrl, error: `The page redirects to ${finalUrl}, which is already one of this agent's pages` };
    }
    const type = response.contentType.split(';')[0]!.trim();
    if (type === 'text/plain') {
      const text = decodeBody(response.body, response.contentType).trim();
      if (!text) return { ok: false, finalUrl, error: 'The page is empty.' };
      return { ok: true, title: new URL(finalUrl).pathname, extracted: text, finalUrl, site: {} };
    }
    if (type && !/html|xml/.test(type)) return { ok: false, finalUrl, error: `Not a web page (${type}): the reader reads HTML pages only.` };
    const { extractPage } = await loadExtractor.get();
    const page = extractPage(decodeBody(response.body, response.contentType), finalUrl);
    if (!page.ok) return { ok: false, finalUrl, title: page.title, error: page.reason };
    return {
      ok: true,
      title: page.title,
      extracted: page.markdown,
      finalUrl,
      site: { name: page.siteName || undefined, description: page.description || undefined, homepage: finalUrl },
    };
  }

  private async store(page: PageRow, result: ReadResult, buildId: string | null, boilerplate?: Boilerplate): Promise<void> {
    const now = new Date();
    await this.db
      .updateTable('knowledge_pages')
      .set(
        result.ok
          ? {
              status: 'read',
              title: result.title.slice(0, 500),
              extracted: result.extracted,
              content: boilerplate ? removeBoilerplate(page.url, result.extracted, boilerplate) : result.extracted,
              final_url: result.finalUrl,
              error: null,
              read_at: now,
              read_build_id: buildId,
              updated_at: now,
            }
          : {
              status: 'failed',
              title: result.title?.slice(0, 500) ?? page.title,
              final_url: result.finalUrl ?? null,
              error: result.error.slice(0, 1000),
              read_at: now,
              read_build_id: buildId,
              updated_at: now,
            },
      )
      .where('id', '=', page.id)
      .execute();
  }

  private async compile(
    agentId: number,
    buildId: string,
    agent: { id: number; account_id: number; name: string; website_url: string | null; system_prompt: string | null },
    buildPages: number[],
  ): Promise<void> {
    const rows = await this.db.selectFrom('knowledge_pages').selectAll().where('agent_id', '=', agentId).orderBy('id').execute();
    // Reading order: this build's pages as listed (homepage first), then the others.
    const order = new Map(buildPages.map((id, index) => [id, index]));
    rows.sort((a, b) => (order.get(a.id) ?? 1e9 + a.id) - (order.get(b.id) ?? 1e9 + b.id));
    const read = rows.filter((r) => r.status === 'read' && r.extracted);
    const boilerplate = read.length >= 3 ? findBoilerplate(read.map((r) => ({ url: r.url, markdown: r.extracted! }))) : NO_BOILERPLATE;
    for (const row of read) {
      const content = removeBoilerplate(row.url, row.extracted!, boilerplate);
      if (content !== row.content) await this.db.updateTable('knowledge_pages').set({ content }).where('id', '=', row.id).execute();
      row.content = content;
    }
    const sections = await this.db.selectFrom('knowledge_sections').select(['title', 'content']).where('agent_id', '=', agentId).orderBy('id').execute();
    const built = rows.filter((r) => buildPages.includes(r.id));
    const addendum = (await this.v2?.addendum(agentId)) ?? '';
    if (!read.length && !sections.length && !agent.system_prompt?.trim() && !addendum) {
      const firstError = built.find((r) => r.error)?.error;
      throw new BuildFailure(`None of the pages could be read${firstError ? `: ${firstError}` : ''}`);
    }
    const brain = await this.knowledge.brain(agentId);
    const site = { ...(brain?.site as SiteInfo), homepage: (brain?.site as SiteInfo)?.homepage ?? agent.website_url ?? undefined };
    const documents: KnowledgeDocument[] = [
      ...read.map((r) => ({
        kind: 'page' as const,
        title: r.title ?? r.url,
        url: r.url,
        markdown: r.content_override ?? r.content ?? '',
        isPrimary: r.is_primary,
      })),
      ...sections.map((s) => ({ kind: 'section' as const, title: s.title, markdown: `## ${s.title}\n\n${s.content}`, isPrimary: true })),
    ];
    const input = { agentName: agent.name, site, documents, systemPrompt: agent.system_prompt };
    let output;
    let engine = this.writer.name;
    try {
      output = await this.writer.write(input, AbortSignal.timeout(90_000));
    } catch (error) {
      // A language model that fails must not fail the build: the offline builder writes it instead.
      this.logger.warn({ err: error, agent_id: agentId }, 'the language model could not write the instructions; the offline builder wrote them');
      output = await offlineWriter.write(input);
      engine = offlineWriter.name;
    }
    // The owner's word wins: page words the owner overruled are left out, the facts are added.
    const overruled = (await this.v2?.overruled(agentId)) ?? [];
    if (overruled.length) {
      const silenced = (text: string) => overruled.some((o) => text.toLowerCase().includes(o));
      output = {
        instructions: output.instructions
          .split('\n')
          .filter((line) => !line.startsWith('- ') || !silenced(line))
          .join('\n'),
        facts: output.facts.filter((f) => !silenced(f.text)),
      };
    }
    if (addendum) output = { ...output, instructions: `${output.instructions}\n\n${addendum}` };
    const failedPages = built.filter((r) => r.status === 'failed').length;
    await this.db.transaction().execute(async (trx) => {
      const updated = await trx
        .updateTable('knowledge_brains')
        .set({
          status: 'complete',
          phase: null,
          instructions: output.instructions,
          facts: JSON.stringify(output.facts),
          site: JSON.stringify(site),
          boilerplate: JSON.stringify(boilerplate),
          engine,
          error: failedPages ? `${failedPages} of ${built.length} pages could not be read; see pages/list` : null,
          finished_at: new Date(),
          updated_at: new Date(),
          version: sql`version + 1`,
        } as never)
        .where('agent_id', '=', agentId)
        .where('build_id', '=', buildId)
        .where('status', 'in', ['pending', 'processing'])
        .returning('agent_id')
        .executeTakeFirst();
      return updated;
    });
    this.knowledge.notify(agentId);
  }

  /** add-page: one page read in the background, cleaned with the site's known boilerplate. */
  private async readAddedPage(agentId: number, pageId: number): Promise<void> {
    const page = await this.db.selectFrom('knowledge_pages').selectAll().where('id', '=', pageId).where('agent_id', '=', agentId).executeTakeFirst();
    if (!page) return;
    const result = await this.read(page.url, agentId, page.id);
    const brain = await this.knowledge.brain(agentId);
    await this.store(page, result, null, (brain?.boilerplate as Boilerplate | undefined) ?? NO_BOILERPLATE);
    if (brain) await this.knowledge.changed({ id: agentId, account_id: brain.account_id });
  }
}

class BuildFailure extends Error {}

function isHomepage(url: string, websiteUrl: string | null, brain: { site: unknown }): boolean {
  const site = brain.site as SiteInfo;
  const home = site?.homepage ?? (websiteUrl ? canonicalUrl(websiteUrl) : undefined);
  return !!home && dedupeKey(home) === dedupeKey(url);
}
