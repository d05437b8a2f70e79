/**
 * Answers benchmark: `node --import tsx bench/answers.ts [--site bakery] [--verbose]`.
 *
 * Five small-business websites written for the benchmark (bench/answers/sites/: a bakery, a
 * plumber, a dental clinic, a law firm, a software product), each served on 127.0.0.1 with the
 * shapes real sites have (navigation, footers, cookie banners, price tables, FAQ accordions, hours
 * in several notations, an outdated page that disagrees with a newer one). Each agent's brain is
 * built from its site through the real pipeline (the HTTP API: create the agent with its name and
 * system prompt, generate-brain, wait for complete; the embedded database), then every visitor
 * question (bench/answers/questions.ts) is asked through the offline engine.
 *
 * Reports per site and in total: right answers, honest "I don't know" on the questions the site does
 * not answer, and wrong answers (bench/answers/score.ts). Goal: >= 90% right, >= 95% honest,
 * <= 1% wrong. --verbose prints every reply that was not right.
 */
import { startTestApp } from '../test/support/app.js';
import { serveSite } from './answers/server.js';
import { SITES } from './answers/questions.js';
import { addVerdict, emptyTally, judgeAnswerable, judgeUnanswerable, tallyRow, TALLY_HEADER, type BenchReply, type Tally } from './answers/score.js';

const args = process.argv.slice(2);
const only = args.includes('--site') ? args[args.indexOf('--site') + 1] : undefined;
const verbose = args.includes('--verbose');

const app = await startTestApp('pglite', { CRAWL_ALLOW_PRIVATE: '1', LOG_LEVEL: 'silent' });

async function ask(agentId: number, text: string): Promise<BenchReply> {
  let said = '';
  let answered = false;
  for await (const event of app.context.answers.answer({
    accountId: app.accountId,
    agentId,
    history: [],
    text,
    language: 'en',
    visitor: {},
    signal: new AbortController().signal,
  })) {
    if (event.type === 'text') said += event.text;
    else answered = event.answered;
  }
  return { text: said.trim(), answered };
}

async function buildAgent(name: string, websiteUrl: string, systemPrompt: string | null): Promise<number> {
  const created = await app.request('POST', '/v1/agent/create', {
    body: { name, website_url: `${websiteUrl}/`, ...(systemPrompt ? { system_prompt: systemPrompt } : {}) },
  });
  if (created.status !== 200) throw new Error(`create: ${JSON.stringify(created.body)}`);
  const agentId = created.body.id as number;
  await app.request('POST', `/v1/agent/${agentId}/generate-brain`);
  for (;;) {
    const status = (await app.request('GET', `/v1/agent/${agentId}/brain-status`)).body;
    if (status.brain_status === 'complete') return agentId;
    if (status.brain_status === 'failed') throw new Error(`build failed: ${status.error}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const rows: string[] = [];
const total: Tally = emptyTally();
try {
  for (const site of SITES.filter((s) => !only || s.dir === only)) {
    const served = await serveSite(site.dir);
    const tally = emptyTally();
    try {
      const agentId = await buildAgent(site.agentName, served.url, site.systemPrompt);
      for (const item of site.answerable) {
        const reply = await ask(agentId, item.question);
        const { verdict, why } = judgeAnswerable(item, reply);
        addVerdict(tally, 'answerable', verdict);
        addVerdict(total, 'answerable', verdict);
        if (verbose && verdict !== 'right') console.error(`[${site.dir}] ${verdict}${why ? ` (${why})` : ''}: ${item.question} → ${reply.text}`);
      }
      for (const question of site.unanswerable) {
        const reply = await ask(agentId, question);
        const { verdict, why } = judgeUnanswerable(question, reply);
        addVerdict(tally, 'unanswerable', verdict);
        addVerdict(total, 'unanswerable', verdict);
        if (verbose && verdict !== 'honest') console.error(`[${site.dir}] ${verdict}${why ? ` (${why})` : ''}: ${question} → ${reply.text}`);
      }
    } finally {
      await served.close();
    }
    rows.push(tallyRow(`${site.dir} (${site.kind})`, tally));
  }
} finally {
  await app.close();
}

console.log('\nOffline engine: answers over the benchmark sites\n');
for (const line of TALLY_HEADER) console.log(line);
for (const row of rows) console.log(row);
console.log(tallyRow('**total**', total));
const wrong = total.wrongAnswerable + total.wrongUnanswerable;
console.log(
  `\nright ${((100 * total.right) / total.answerable).toFixed(1)}% (goal >= 90%), honest ${((100 * total.honest) / total.unanswerable).toFixed(1)}% (goal >= 95%), wrong ${((100 * wrong) / (total.answerable + total.unanswerable)).toFixed(1)}% (goal <= 1%)`,
);
