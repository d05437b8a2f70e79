/**
 * Business Brain benchmark: `node --import tsx bench/brain.ts`.
 *
 * The service runs in this process (test harness: real HTTP server, real database) on the embedded
 * database and, with BENCH_DATABASE_URL or TEST_DATABASE_URL, on PostgreSQL. The website is the
 * test bakery (test/knowledge/support/site.ts) served on 127.0.0.1, grown to BENCH_PAGES pages
 * (default 20) with blog posts.
 *
 * Prints three tables:
 *  1. build time of the whole site (generate-brain → complete), offline builder;
 *  2. answer latency (time to first text, and to the end) of the offline engine and of the LLM engine
 *     against a local OpenAI-compatible fake that waits BENCH_LLM_DELAY_MS (default 300) before
 *     its first token, over the question set;
 *  3. the offline engine's accuracy on the question set (test/brain/support/questions.ts): right
 *     fact said, honestly not answered, wrong.
 */
import { startTestApp, type Engine, type TestApp } from '../test/support/app.js';
import { startTestSite } from '../test/knowledge/support/site.js';
import { startFakeLlm } from '../test/brain/support/fake-llm.js';
import { ANSWERABLE, UNANSWERABLE, SITE_FACTS } from '../test/brain/support/questions.js';

const PAGES = Number(process.env.BENCH_PAGES ?? 20);
const LLM_DELAY_MS = Number(process.env.BENCH_LLM_DELAY_MS ?? 300);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const databaseUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
if (databaseUrl) process.env.TEST_DATABASE_URL = databaseUrl;
const engines: Engine[] = databaseUrl ? ['pglite', 'postgres'] : ['pglite'];

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function build(t: TestApp, siteUrl: string): Promise<{ agent: number; ms: number; pages: number; read: number }> {
  const created = await t.request('POST', '/v1/agent/create', { body: { name: 'Ava', website_url: `${siteUrl}/` } });
  const agent = created.body.id as number;
  const started = performance.now();
  await t.request('POST', `/v1/agent/${agent}/generate-brain`);
  for (;;) {
    const status = (await t.request('GET', `/v1/agent/${agent}/brain-status`)).body;
    if (status.brain_status === 'complete' || status.brain_status === 'failed') {
      const pages = (await t.request('GET', `/v1/agent/${agent}/pages/list`)).body as Array<{ status: string }>;
      return { agent, ms: performance.now() - started, pages: status.progress.pages_total, read: pages.filter((p) => p.status === 'read').length };
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function answerOnce(t: TestApp, agent: number, text: string) {
  const started = performance.now();
  let first = 0;
  let said = '';
  let answered = false;
  for await (const event of t.context.answers.answer({
    accountId: t.accountId,
    agentId: agent,
    history: [],
    text,
    language: 'en',
    visitor: {},
    signal: new AbortController().signal,
  })) {
    if (event.type === 'text') {
      first ||= performance.now() - started;
      said += event.text;
    } else answered = event.answered;
  }
  return { first, total: performance.now() - started, said: said.trim(), answered };
}

const questions = [...ANSWERABLE.map((q) => q.question), ...UNANSWERABLE];
const buildRows: string[] = [];
const latencyRows: string[] = [];
const accuracyRows: string[] = [];

for (const engine of engines) {
  const site = await startTestSite({ extraPosts: Math.max(0, PAGES - 17) });
  const llm = await startFakeLlm();
  llm.stream = { kind: 'stream', steps: [{ text: "We're open Monday to Saturday, ", delayMs: LLM_DELAY_MS }, { text: 'from 7 am to 3 pm.' }] };
  const offline = await startTestApp(engine, { CRAWL_ALLOW_PRIVATE: '1', LOG_LEVEL: 'silent' });
  const withLlm = await startTestApp(engine, { CRAWL_ALLOW_PRIVATE: '1', LLM_URL: llm.url, LLM_MODEL: 'fake' });
  try {
    const builds = [];
    for (let i = 0; i < ROUNDS; i++) builds.push(await build(offline, site.url));
    const b = builds[builds.length - 1]!;
    buildRows.push(`| ${engine} | ${b.pages} | ${b.read} | ${builds.map((x) => (x.ms / 1000).toFixed(2)).join(' / ')} s |`);

    // The LLM app answers from its own copy of the brain (built offline: the fake's JSON is not asked for).
    llm.plain = { kind: 'error', status: 500 };
    const llmAgent = (await build(withLlm, site.url)).agent;

    for (const [name, app, agent] of [
      ['offline', offline, b.agent],
      [`llm (fake, ${LLM_DELAY_MS} ms to first token)`, withLlm, llmAgent],
    ] as const) {
      await answerOnce(app, agent, 'Hello'); // the index is built once per agent and knowledge version
      const firsts: number[] = [];
      const totals: number[] = [];
      const rounds = name === 'offline' ? ROUNDS : 1;
      for (let r = 0; r < rounds; r++) {
        for (const question of questions) {
          const result = await answerOnce(app, agent, question);
          firsts.push(result.first);
          totals.push(result.total);
        }
      }
      latencyRows.push(
        `| ${engine} | ${name} | ${firsts.length} | ${percentile(firsts, 50).toFixed(1)} ms | ${percentile(firsts, 95).toFixed(1)} ms | ${percentile(totals, 50).toFixed(1)} ms | ${percentile(totals, 95).toFixed(1)} ms |`,
      );
    }

    let right = 0;
    let honest = 0;
    let missed = 0;
    const wrong: string[] = [];
    for (const { question, expect } of ANSWERABLE) {
      const r = await answerOnce(offline, b.agent, question);
      if (r.answered && expect.every((f) => r.said.toLowerCase().includes(f.toLowerCase()))) right++;
      else if (!r.answered) missed++;
      else wrong.push(`${question} → ${r.said}`);
    }
    let honestUnknown = 0;
    for (const question of UNANSWERABLE) {
      const r = await answerOnce(offline, b.agent, question);
      if (!r.answered && !SITE_FACTS.some((f) => r.said.includes(f))) honestUnknown++;
      else wrong.push(`${question} → ${r.said}`);
    }
    honest = honestUnknown;
    accuracyRows.push(
      `| ${engine} | ${ANSWERABLE.length} | ${right} (${Math.round((100 * right) / ANSWERABLE.length)}%) | ${missed} | ${UNANSWERABLE.length} | ${honest} | ${wrong.length} |`,
    );
    for (const line of wrong) console.error(`wrong: ${line}`);
  } finally {
    await offline.close();
    await withLlm.close();
    await llm.close();
    await site.close();
  }
}

console.log(`\nBrain build of the ${PAGES}-page test site (offline builder; ${ROUNDS} builds, each a full re-read)\n`);
console.log('| database | pages | read | build time |');
console.log('|---|---:|---:|---:|');
for (const row of buildRows) console.log(row);
console.log('\nAnswer latency over the question set (in-process; time to first text and to the end)\n');
console.log('| database | engine | answers | first text p50 | first text p95 | whole answer p50 | whole answer p95 |');
console.log('|---|---|---:|---:|---:|---:|---:|');
for (const row of latencyRows) console.log(row);
console.log('\nOffline engine accuracy on the question set\n');
console.log('| database | answerable questions | right fact said | said "I don\'t know" | unanswerable questions | honestly not answered | wrong answers |');
console.log('|---|---:|---:|---:|---:|---:|---:|');
for (const row of accuracyRows) console.log(row);
