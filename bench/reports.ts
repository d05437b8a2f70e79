/**
 * Reports benchmark, on both database engines: 100,000 conversations with transcripts (six turns
 * each) in one account, then over real HTTP
 *   1. p50/p95 of a filtered page of conversations (several filter mixes) and of stats
 *      (target: p95 under 200 ms): stats over an agent and dates read the per-day rollup
 *      (migration 0015), other filters scan; `min_duration_seconds=0` times the scan over all;
 *   2. the CSV export of every conversation: time, rows, and the server's memory while it streams
 *      (live heap after a forced collection, and RSS, over the baseline, sampled every 100 ms; run
 *      with --expose-gc), against a 10,000-row export of
 *      the same data: a streaming export's memory does not grow with the rows.
 *
 *   3. with --write-cost: what the rollup trigger adds to recording a conversation.
 *
 *   node --import tsx --expose-gc bench/reports.ts [--conversations 100000] [--runs 40] [--write-cost]
 * PostgreSQL runs when TEST_DATABASE_URL is set (a throwaway database is made on it). The data are
 * written straight into the tables with SQL (generate_series): a bench seeds, the product does not
 * (the rollup is kept by its trigger all the same).
 */
import crypto from 'node:crypto';
import os from 'node:os';
import { sql } from 'kysely';
import { startTestApp, type Engine, type TestApp } from '../test/support/app.js';
import { makeAgent } from '../test/sessions/helpers.js';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const CONVERSATIONS = arg('conversations', 100_000);
const RUNS = arg('runs', 40);
const WORDS = [
  'price',
  'refund',
  'delivery',
  'opening',
  'hours',
  'booking',
  'table',
  'invoice',
  'warranty',
  'repair',
  'parking',
  'menu',
  'vegan',
  'allergy',
  'gift',
  'voucher',
  'discount',
  'student',
  'weekend',
  'monday',
  'address',
  'email',
  'phone',
  'callback',
  'manager',
  'complaint',
  'thanks',
  'hello',
  'order',
  'status',
  'tracking',
  'size',
  'colour',
  'return',
  'exchange',
  'cancel',
  'subscription',
  'account',
  'password',
  'login',
];
const pct = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
};
const ms = (n: number) => `${n.toFixed(1)} ms`;
const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;

async function seed(t: TestApp, accountId: number, agents: number[]): Promise<number> {
  const db = t.database.db;
  const started = performance.now();
  const words = sql.raw(`(ARRAY[${WORDS.map((w) => `'${w}'`).join(',')}])`);
  const text = sql`(SELECT string_agg(${words}[1 + floor(random() * ${WORDS.length})::int], ' ') FROM generate_series(1, 8 + g % 5) AS k WHERE g > -k)`;
  // In batches, so that PGlite's single connection is not held by one huge statement.
  const batch = 10_000;
  for (let from = 0; from < CONVERSATIONS; from += batch) {
    const to = Math.min(CONVERSATIONS, from + batch) - 1;
    await sql`
      WITH c AS (
        INSERT INTO conversations (id, account_id, agent_id, agent_name, mode, visitor_id, started_at, ended_at, duration_seconds, end_reason, visitor_turns, agent_turns, categories)
        SELECT gen_random_uuid(), ${accountId}, (${sql.val(agents)}::int[])[1 + i % ${agents.length}], 'Agent ' || (1 + i % ${agents.length}), 'conversation',
               CASE WHEN i % 4 = 0 THEN NULL ELSE 'v_' || (i % 20000) END,
               timestamptz '2025-06-01 00:00:00+00' + i * interval '313 seconds',
               timestamptz '2025-06-01 00:00:00+00' + i * interval '313 seconds' + (30 + i % 600) * interval '1 second',
               30 + i % 600, 'stopped', 3, 3,
               CASE WHEN i % 20 = 0 THEN ARRAY['lead'] ELSE '{}'::text[] END
        FROM generate_series(${from}::int, ${to}::int) AS i
        RETURNING id, started_at
      )
      INSERT INTO conversation_turns (conversation_id, role, text, at, details)
      SELECT c.id, CASE WHEN g % 2 = 0 THEN 'visitor' ELSE 'agent' END, ${text}, c.started_at + g * interval '5 seconds',
             CASE WHEN g % 2 = 1 THEN jsonb_build_object('source', 'answer', 'latency_ms', jsonb_build_object('first_audio', 300 + floor(random() * random() * 2700)::int))
                                      || CASE WHEN random() < 0.15 THEN jsonb_build_object('answered', false, 'gap_id', 1 + floor(random() * 50)::int) ELSE jsonb_build_object('answered', true) END
                  ELSE '{}'::jsonb END
      FROM c CROSS JOIN generate_series(0, 5) AS g`.execute(db);
  }
  // The searchable words, the gaps raised and the answers with their latencies, as
  // ConversationRecords.addTurn keeps them (the rows were inserted ended, so the rollup trigger has
  // counted them and now counts their gaps and answers).
  for (let from = 0; from < CONVERSATIONS; from += batch) {
    await sql`
      UPDATE conversations c SET search = s.v, gap_ids = s.gaps, answers = s.answers, answered = s.answered, answer_ms = s.answer_ms
      FROM (SELECT conversation_id, to_tsvector('simple', string_agg(text, ' ')) AS v,
                   COALESCE(array_agg(DISTINCT (details->>'gap_id')::int) FILTER (WHERE details ? 'gap_id'), '{}') AS gaps,
                   COUNT(*) FILTER (WHERE details ? 'answered')::int AS answers,
                   COUNT(*) FILTER (WHERE details->'answered' = 'true'::jsonb)::int AS answered,
                   COALESCE(array_agg((details->'latency_ms'->>'first_audio')::int ORDER BY id) FILTER (WHERE details->'latency_ms' ? 'first_audio'), '{}') AS answer_ms
            FROM conversation_turns
            WHERE conversation_id IN (SELECT id FROM conversations WHERE account_id = ${accountId} ORDER BY id OFFSET ${from} LIMIT ${batch})
            GROUP BY conversation_id) s
      WHERE c.id = s.conversation_id`.execute(db);
  }
  await sql`ANALYZE conversations`.execute(db);
  await sql`ANALYZE conversation_turns`.execute(db);
  return (performance.now() - started) / 1000;
}

async function timed(t: TestApp, key: string, path: string): Promise<{ p50: number; p95: number; total: number }> {
  const times: number[] = [];
  let total = 0;
  for (let i = 0; i < RUNS + 3; i++) {
    const started = performance.now();
    const res = await t.request('GET', path, { key });
    const took = performance.now() - started;
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
    total = res.body.total ?? res.body.conversations ?? res.body.agents?.length;
    if (i >= 3) times.push(took); // the first runs warm the caches
  }
  return { p50: pct(times, 50), p95: pct(times, 95), total };
}

/** Streams the export, throwing the bytes away, while sampling this process's memory (the server runs in it). */
async function exportMemory(t: TestApp, key: string, query: string) {
  global.gc?.();
  const base = process.memoryUsage();
  let peakHeap = base.heapUsed;
  let peakRss = base.rss;
  // Each sample collects garbage first, so the heap figure is what the export keeps alive.
  const sampler = setInterval(() => {
    global.gc?.();
    const m = process.memoryUsage();
    peakHeap = Math.max(peakHeap, m.heapUsed);
    peakRss = Math.max(peakRss, m.rss);
  }, 100);
  const started = performance.now();
  const res = await fetch(`${t.url}/v1/reports/export/conversations${query}`, { headers: { authorization: `Bearer ${key}` } });
  let bytes = 0;
  let rows = -1;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.length;
    for (const b of chunk) if (b === 10) rows++;
  }
  clearInterval(sampler);
  return { seconds: (performance.now() - started) / 1000, rows, bytes, heapGrowth: peakHeap - base.heapUsed, rssGrowth: peakRss - base.rss };
}

/**
 * What the rollup trigger costs the writer (--write-cost): conversations recorded as the records
 * do (begin, six turns, one in ten raising a gap, end), alternately with the account's triggers
 * enabled and disabled on this throwaway database.
 */
async function writeCost(t: TestApp, accountId: number, agentId: number) {
  const records = t.context.conversations;
  const one = async (i: number) => {
    const id = crypto.randomUUID();
    const created = new Date(Date.UTC(2026, 0, 1 + (i % 30), 10));
    const session = { id, account_id: accountId, agent_id: agentId, mode: 'conversation' as const, created_at: created };
    const started = performance.now();
    await records.begin({ session });
    for (let k = 0; k < 6; k++)
      await records.addTurn(id, {
        role: k % 2 ? 'agent' : 'visitor',
        text: 'a few words of a turn',
        details: k === 3 && i % 10 === 0 ? { gap_id: 1 + (i % 7) } : {},
      });
    const ending = performance.now();
    await records.end({ ...session, ended_at: new Date(created.getTime() + 60_000), duration_seconds: 60, end_reason: 'stopped' });
    return { all: performance.now() - started, end: performance.now() - ending };
  };
  console.log('\n| rollup trigger | conversations | whole conversation p50 | end() p50 | end() p95 |');
  console.log('|---|---:|---:|---:|---:|');
  for (const mode of ['enabled', 'disabled', 'enabled', 'disabled']) {
    await sql.raw(`ALTER TABLE conversations ${mode === 'enabled' ? 'ENABLE' : 'DISABLE'} TRIGGER USER`).execute(t.database.db);
    const runs: Array<{ all: number; end: number }> = [];
    for (let i = 0; i < 300; i++) runs.push(await one(i));
    console.log(
      `| ${mode} | 300 | ${ms(
        pct(
          runs.map((r) => r.all),
          50,
        ),
      )} | ${ms(
        pct(
          runs.map((r) => r.end),
          50,
        ),
      )} | ${ms(
        pct(
          runs.map((r) => r.end),
          95,
        ),
      )} |`,
    );
  }
  await sql`ALTER TABLE conversations ENABLE TRIGGER USER`.execute(t.database.db);
}

async function run(engine: Engine) {
  const t = await startTestApp(engine);
  try {
    const account = await t.account('paid');
    const agents: number[] = [];
    for (let i = 0; i < 5; i++) agents.push(await makeAgent(t, { name: `Agent ${i + 1}` }, account.key));
    const seedSeconds = await seed(t, account.id, agents);
    // Seeding holds the event loop for minutes: let the overdue keep-alive timers close the idle
    // connection before the first timed request, or it may reuse a socket the server is closing.
    await new Promise((resolve) => setTimeout(resolve, 200));
    console.log(
      `\n## ${engine}: ${CONVERSATIONS.toLocaleString('en')} conversations, ${(CONVERSATIONS * 6).toLocaleString('en')} turns (seeded in ${seedSeconds.toFixed(0)} s); load average ${os.loadavg()[0]!.toFixed(2)}\n`,
    );
    const cases: Array<[string, string]> = [
      ['list: newest page (no filter)', '/v1/reports/conversations'],
      ['list: agent + one month', `/v1/reports/conversations?agent_id=${agents[2]}&date_from=2025-09-01&date_to=2025-09-30`],
      ['list: page 100 of an agent', `/v1/reports/conversations?agent_id=${agents[1]}&limit=50&offset=5000`],
      ['list: visitor', '/v1/reports/conversations?visitor_id=v_1234'],
      ['list: q (two words)', '/v1/reports/conversations?q=refund%20warranty'],
      [
        'list: q + agent + dates + min duration',
        `/v1/reports/conversations?q=refund&agent_id=${agents[0]}&date_from=2025-07-01&date_to=2025-12-31&min_duration_seconds=300`,
      ],
      ['list: notif_category', '/v1/reports/conversations?notif_category=lead'],
      ['stats: everything', '/v1/reports/stats'],
      ['stats: everything, scanned (min duration 0)', '/v1/reports/stats?min_duration_seconds=0'],
      ['stats: agent + one month', `/v1/reports/stats?agent_id=${agents[2]}&date_from=2025-09-01&date_to=2025-09-30`],
      ['stats: q (two words)', '/v1/reports/stats?q=refund%20warranty'],
      ['stats: visitor', '/v1/reports/stats?visitor_id=v_1234'],
      [
        'stats: agent + one month, date-times (rollup + one cut day)',
        `/v1/reports/stats?agent_id=${agents[2]}&date_from=2025-09-01T00:00:00Z&date_to=2025-09-30T23:59:59Z`,
      ],
      ['reports/me (all time and this month)', '/v1/reports/me'],
      ['reports/agents (all time and this month)', '/v1/reports/agents'],
    ];
    console.log('| request | matches | p50 | p95 |');
    console.log('|---|---:|---:|---:|');
    for (const [name, path] of cases) {
      const r = await timed(t, account.key, path);
      console.log(`| ${name} | ${r.total.toLocaleString('en')} | ${ms(r.p50)} | ${ms(r.p95)} |`);
    }
    console.log('\n| CSV export | rows | bytes | time | live heap growth (peak) | RSS growth (peak) |');
    console.log('|---|---:|---:|---:|---:|---:|');
    for (const [name, query] of [
      ['one month (~8,300 rows)', '?date_from=2025-09-01&date_to=2025-09-30'],
      ['everything', ''],
    ] as const) {
      const r = await exportMemory(t, account.key, query);
      console.log(`| ${name} | ${r.rows.toLocaleString('en')} | ${mb(r.bytes)} | ${r.seconds.toFixed(1)} s | ${mb(r.heapGrowth)} | ${mb(r.rssGrowth)} |`);
    }
    if (process.argv.includes('--write-cost')) await writeCost(t, account.id, agents[0]!);
    console.log(`\nload average after: ${os.loadavg()[0]!.toFixed(2)}`);
  } finally {
    await t.close();
  }
}

const engines: Engine[] = process.env.TEST_DATABASE_URL ? ['pglite', 'postgres'] : ['pglite'];
for (const engine of engines) await run(engine);
