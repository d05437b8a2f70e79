/**
 * Delivery engine benchmark, on both database engines:
 *   1. deliveries per second the engine sustains to a local receiver (enqueue N, time until all
 *      delivered; the receiver answers 200 at once);
 *   2. conversation end → first delivery attempt: a conversation with a handoff rule ends (the real
 *      path: record end → durable ended job → handoff job → details → delivery job → HTTP), and the
 *      receiver notes when the request arrives. Target: p99 under 2 s.
 *
 *   node --import tsx bench/delivery.ts [--deliveries 500] [--conversations 60]
 * PostgreSQL runs when TEST_DATABASE_URL is set (a throwaway database is made on it).
 */
import crypto from 'node:crypto';
import os from 'node:os';
import { openDatabase, type OpenedDatabase } from '../src/core/db/database.js';
import { Jobs } from '../src/core/jobs.js';
import { DeliveryEngine } from '../src/delivery/engine.js';
import { startReceiver } from '../test/delivery/support/receiver.js';
import { createDatabase } from '../test/support/postgres.js';
import { startTestApp, type Engine } from '../test/support/app.js';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const DELIVERIES = arg('deliveries', 500);
const CONVERSATIONS = arg('conversations', 60);
const quiet = { info() {}, warn() {}, error() {} };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pct = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
};

async function throughput(engine: Engine): Promise<{ perSecond: number; seconds: number }> {
  const pg = engine === 'postgres' ? await createDatabase(process.env.TEST_DATABASE_URL!, 'presence_bench') : undefined;
  const database: OpenedDatabase = await openDatabase(pg ? { databaseUrl: pg.url } : { dataDir: 'memory://' });
  const jobs = await Jobs.start(database, quiet);
  const deliveries = new DeliveryEngine(database.db, jobs, quiet, { retryDelays: [60, 300, 1800, 7200], timeoutSeconds: 10, allowPrivate: true });
  await deliveries.start();
  const receiver = await startReceiver([{ status: 200 }]);
  try {
    const account = await database.db
      .insertInto('accounts')
      .values({ name: 'bench', plan: 'paid', balance_cents: 0 })
      .returning('id')
      .executeTakeFirstOrThrow();
    const started = performance.now();
    for (let i = 0; i < DELIVERIES; i++) {
      await deliveries.enqueue({
        accountId: account.id,
        owner: { kind: 'bench', id: '1' },
        url: `${receiver.url}/hook`,
        method: 'POST',
        payload: JSON.stringify({ n: i, email: 'jane@example.com' }),
        secret: 'whsec_bench',
      });
    }
    for (;;) {
      const { count } = await database.db
        .selectFrom('deliveries')
        .select((eb) => eb.fn.countAll<string>().as('count'))
        .where('status', '=', 'delivered')
        .executeTakeFirstOrThrow();
      if (Number(count) >= DELIVERIES) break;
      await sleep(20);
    }
    const seconds = (performance.now() - started) / 1000;
    return { perSecond: DELIVERIES / seconds, seconds };
  } finally {
    deliveries.stop();
    await jobs.stop();
    await database.close();
    await receiver.close();
    await pg?.drop();
  }
}

async function endToFirstAttempt(engine: Engine): Promise<number[]> {
  const receiver = await startReceiver([{ status: 200 }]);
  const t = await startTestApp(engine, { WEBHOOK_ALLOW_PRIVATE: '1' });
  try {
    const created = await t.request('POST', '/v1/agent/create', { body: { name: 'Bench' } });
    if (created.status !== 200) throw new Error(`agent create: ${created.status} ${JSON.stringify(created.body)}`);
    const agent = created.body.id;
    const rule = await t.request('POST', `/v1/agent/${agent}/v2/rules`, {
      body: {
        name: 'Lead',
        details: [{ name: 'email', description: 'email', required: true }],
        destination: { type: 'webhook', url: `${receiver.url}/lead`, format: 'json', template: '{"email": "{{email}}", "c": "{{visitor.c}}"}' },
      },
    });
    if (rule.status !== 200) throw new Error(JSON.stringify(rule.body));
    const delays: number[] = [];
    for (let i = 0; i < CONVERSATIONS; i++) {
      const id = crypto.randomUUID();
      const session = { id, account_id: t.accountId, agent_id: agent, mode: 'conversation' as const, created_at: new Date() };
      await t.context.conversations.begin({ session, visitor: { c: id } });
      await t.context.conversations.addTurn(id, { role: 'agent', text: 'What is your email?' });
      await t.context.conversations.addTurn(id, { role: 'visitor', text: `it is jane${i}@example.com` });
      const before = receiver.received.length;
      const endedAt = Date.now();
      await t.context.conversations.end({ ...session, ended_at: new Date(), duration_seconds: 30, end_reason: 'stopped' });
      while (receiver.received.length === before) await sleep(2);
      delays.push(receiver.received.at(-1)!.at - endedAt);
    }
    return delays;
  } finally {
    await t.close();
    await receiver.close();
  }
}

const engines: Engine[] = process.env.TEST_DATABASE_URL ? ['pglite', 'postgres'] : ['pglite'];
const rows: string[] = [];
for (const engine of engines) {
  const load = os.loadavg()[0]!.toFixed(1);
  const tp = await throughput(engine);
  console.log(`${engine}: ${tp.perSecond.toFixed(0)} deliveries/s (${DELIVERIES} in ${tp.seconds.toFixed(1)} s), load ${os.loadavg()[0]!.toFixed(1)}`);
  const delays = await endToFirstAttempt(engine);
  rows.push(
    `| ${engine} | ${tp.perSecond.toFixed(0)} (${DELIVERIES} in ${tp.seconds.toFixed(1)} s) | ${pct(delays, 50)} ms | ${pct(delays, 99)} ms | ${Math.max(...delays)} ms | ${load} / ${os.loadavg()[0]!.toFixed(1)} |`,
  );
}
console.log(`\n${os.cpus().length} cores, Node ${process.version}; ${DELIVERIES} deliveries, ${CONVERSATIONS} conversations per engine\n`);
console.log('| engine | deliveries/s | end → first attempt p50 | p99 | max | load average (start / end) |');
console.log('|---|---:|---:|---:|---:|---:|');
for (const row of rows) console.log(row);
process.exit(0);
