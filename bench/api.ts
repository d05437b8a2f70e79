/**
 * API throughput benchmark: `npm run bench:api` (= `node --import tsx bench/api.ts`).
 *
 * The server runs in this process, built exactly as `presence serve` builds it (same Fastify app,
 * same JSON request logging at LOG_LEVEL, default info, through pino's synchronous stdout
 * destination pointed at the null device), on the embedded
 * database (PGlite in a temp DATA_DIR) and, when BENCH_DATABASE_URL or TEST_DATABASE_URL is set,
 * on a fresh PostgreSQL database. The load comes from a child process (this file with `--load`)
 * holding N keep-alive connections, each with one request in flight at a time, so the client's
 * CPU is not counted: "server CPU per request" is this process's `process.cpuUsage()` delta over
 * the measured window divided by the requests served in it.
 *
 * Settings (environment): BENCH_CONNECTIONS (32), BENCH_SECONDS (10), BENCH_WARMUP_SECONDS (3),
 * BENCH_ROUTES (get,create; also healthz = HTTP stack only, readyz = that plus one query), BENCH_ENGINES (pglite,postgres), LOG_LEVEL (info).
 * Profile the server with `node --cpu-prof --cpu-prof-dir=<dir> --import tsx bench/api.ts`.
 */
import { fork } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDatabase } from '../test/support/postgres.js';
import { freePort } from '../test/support/ports.js';

interface LoadSpec {
  port: number;
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
  connections: number;
  warmupSeconds: number;
  seconds: number;
}

interface LoadResult {
  requests: number;
  errors: number;
  statuses: Record<string, number>;
  elapsedMs: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

type Message = { type: 'measuring' } | { type: 'done'; result: LoadResult } | { type: 'failed'; error: string };

// ---------------------------------------------------------------------------------------------
// Load generator (child process): a minimal HTTP/1.1 keep-alive client over raw sockets, so the
// client stays cheap next to the server on a 2-core machine.

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const bodyBytes = spec.body ? Buffer.from(spec.body) : undefined;
  const head =
    `${spec.method} ${spec.path} HTTP/1.1\r\nHost: 127.0.0.1:${spec.port}\r\nConnection: keep-alive\r\n` +
    Object.entries(spec.headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('') +
    (bodyBytes ? `Content-Length: ${bodyBytes.length}\r\n` : '') +
    '\r\n';
  const request = bodyBytes ? Buffer.concat([Buffer.from(head), bodyBytes]) : Buffer.from(head);

  let measuring = false;
  let stopping = false;
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  let requests = 0;
  let errors = 0;

  const connection = () =>
    new Promise<void>((resolve, reject) => {
      const socket = net.connect({ host: '127.0.0.1', port: spec.port });
      socket.setNoDelay(true);
      let buffer = Buffer.alloc(0);
      let sentAt = 0;
      const send = () => {
        if (stopping) {
          socket.end();
          return resolve();
        }
        sentAt = performance.now();
        socket.write(request);
      };
      socket.on('connect', send);
      socket.on('error', (error) => (stopping ? resolve() : reject(error)));
      socket.on('close', () => (stopping ? resolve() : reject(new Error('server closed a keep-alive connection'))));
      socket.on('data', (chunk) => {
        buffer = buffer.length ? Buffer.concat([buffer, chunk]) : chunk;
        const end = buffer.indexOf('\r\n\r\n');
        if (end < 0) return;
        const headText = buffer.subarray(0, end).toString('latin1');
        const match = /\r\ncontent-length:\s*(\d+)/i.exec(headText);
        const length = match ? Number(match[1]) : 0;
        if (!match && !/^HTTP\/1\.1 (204|304)/.test(headText)) return reject(new Error(`response without content-length: ${headText}`));
        if (buffer.length < end + 4 + length) return;
        if (buffer.length > end + 4 + length) return reject(new Error('unexpected extra bytes (pipelining is not used)'));
        buffer = Buffer.alloc(0);
        const status = headText.slice(9, 12);
        if (measuring) {
          latencies.push(performance.now() - sentAt);
          requests++;
          statuses[status] = (statuses[status] ?? 0) + 1;
          if (status[0] !== '2') errors++;
        }
        send();
      });
    });

  const all = Array.from({ length: spec.connections }, connection);
  await new Promise((r) => setTimeout(r, spec.warmupSeconds * 1000));
  process.send!({ type: 'measuring' } satisfies Message);
  measuring = true;
  const started = performance.now();
  await new Promise((r) => setTimeout(r, spec.seconds * 1000));
  measuring = false;
  const elapsedMs = performance.now() - started;
  stopping = true;
  await Promise.all(all);

  const sorted = Float64Array.from(latencies).sort();
  return {
    requests,
    errors,
    statuses,
    elapsedMs,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1] ?? NaN,
  };
}

if (process.argv.includes('--load')) {
  process.once('message', (spec: LoadSpec) => {
    runLoad(spec).then(
      (result) => process.send!({ type: 'done', result } satisfies Message, () => process.exit(0)),
      (error) => process.send!({ type: 'failed', error: String(error?.stack ?? error) } satisfies Message, () => process.exit(1)),
    );
  });
} else {
  await main();
}

// ---------------------------------------------------------------------------------------------
// Orchestrator: starts the server here, runs the load child per route, prints the table.

interface Row {
  engine: string;
  route: string;
  connections: number;
  result: LoadResult;
  rps: number;
  cpuUsPerRequest: number;
  serverCpuCores: number;
}

async function measure(spec: LoadSpec): Promise<{ result: LoadResult; cpuMicros: number }> {
  const child = fork(fileURLToPath(import.meta.url), ['--load'], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let cpuAtStart: NodeJS.CpuUsage | undefined;
  const done = new Promise<{ result: LoadResult; cpuMicros: number }>((resolve, reject) => {
    child.on('message', (message: Message) => {
      if (message.type === 'measuring') cpuAtStart = process.cpuUsage();
      else if (message.type === 'done') {
        const delta = process.cpuUsage(cpuAtStart);
        resolve({ result: message.result, cpuMicros: delta.user + delta.system });
      } else reject(new Error(`load generator failed: ${message.error}`));
    });
    child.on('exit', (code) => code !== 0 && reject(new Error(`load generator exited with ${code}`)));
  });
  child.send(spec);
  return done;
}

async function main(): Promise<void> {
  const { loadConfig } = await import('../src/core/config.js');
  const { openDatabase } = await import('../src/core/db/database.js');
  const { buildApp } = await import('../src/app.js');
  const { loggerOptions } = await import('../src/core/logging.js');
  const { PERMISSIONS } = await import('../src/core/auth.js');
  const pg = (await import('pg')).default;
  const pino = (await import('pino')).default;

  const env = process.env;
  const connections = Number(env.BENCH_CONNECTIONS ?? 32);
  const seconds = Number(env.BENCH_SECONDS ?? 10);
  const warmupSeconds = Number(env.BENCH_WARMUP_SECONDS ?? 3);
  const routes = (env.BENCH_ROUTES ?? 'get,create').split(',');
  const postgresUrl = env.BENCH_DATABASE_URL || env.TEST_DATABASE_URL;
  const engines = (env.BENCH_ENGINES ?? 'pglite,postgres').split(',').filter((e) => e === 'pglite' || (e === 'postgres' && postgresUrl));
  const logLevel = env.LOG_LEVEL || 'info';

  console.log(`# Presence API benchmark`);
  console.log(
    `node ${process.version}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  console.log(`${connections} keep-alive connections, ${warmupSeconds} s warm-up, ${seconds} s measured per route; request log level "${logLevel}"`);
  if (!postgresUrl) console.log('PostgreSQL skipped: set BENCH_DATABASE_URL (or TEST_DATABASE_URL) to include it.');

  const rows: Row[] = [];
  for (const engine of engines) {
    let dataDir: string | undefined;
    let dropDatabase: (() => Promise<void>) | undefined;
    let databaseUrl: string | undefined;
    if (engine === 'postgres') {
      const database = await createDatabase(postgresUrl!, 'presence_bench');
      databaseUrl = database.url;
      dropDatabase = database.drop;
    } else {
      dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'presence-bench-'));
    }

    const port = await freePort();
    const config = loadConfig({
      MODELS_DOWNLOAD: '0', // a background model download would skew what this measures
      ...env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir ?? '',
      DATABASE_URL: databaseUrl ?? '',
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      RATE_LIMIT_PER_SECOND: '100000000',
      LOG_LEVEL: logLevel,
    });
    const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
    // The destination pino uses for stdout in production (sonic-boom, synchronous writes),
    // pointed at the null device so the bench prints only its results.
    const devNull = pino.destination({ dest: os.devNull, sync: true });
    const { app, context } = await buildApp({ config, database, logger: { ...loggerOptions(config.logLevel), stream: devNull } });
    await app.listen({ port, host: '127.0.0.1' });
    try {
      const account = await context.accounts.create({ name: 'bench', plan: 'paid', balanceCents: 10_000 });
      const { key } = await context.accounts.createKey(account.id, [...PERMISSIONS]);
      const auth = { authorization: `Bearer ${key}` };
      const response = await fetch(`http://127.0.0.1:${port}/v1/agent/create`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Bench agent' }),
      });
      if (!response.ok) throw new Error(`could not create the agent to read: ${response.status} ${await response.text()}`);
      const agent = (await response.json()) as { id: number };

      const specs: Record<string, Omit<LoadSpec, 'port' | 'connections' | 'warmupSeconds' | 'seconds'>> = {
        get: { method: 'GET', path: `/v1/agent/${agent.id}`, headers: auth },
        create: {
          method: 'POST',
          path: '/v1/agent/create',
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'Bench agent' }),
        },
        // Baselines: the HTTP stack alone (no key, no database), and that plus one small query.
        healthz: { method: 'GET', path: '/healthz', headers: {} },
        readyz: { method: 'GET', path: '/readyz', headers: {} },
      };
      for (const route of routes) {
        const spec = specs[route];
        if (!spec) throw new Error(`unknown route "${route}" (get, create, healthz, readyz)`);
        const { result, cpuMicros } = await measure({ ...spec, port, connections, warmupSeconds, seconds });
        const rps = result.requests / (result.elapsedMs / 1000);
        rows.push({
          engine: engine === 'pglite' ? 'embedded (PGlite)' : 'PostgreSQL',
          route: `${spec.method} ${route === 'get' ? '/v1/agent/{id}' : spec.path}`,
          connections,
          result,
          rps,
          cpuUsPerRequest: cpuMicros / Math.max(1, result.requests),
          serverCpuCores: cpuMicros / 1000 / result.elapsedMs,
        });
        const errorNote = result.errors ? `, ${result.errors} non-2xx ${JSON.stringify(result.statuses)}` : '';
        console.log(
          `- ${engine} ${spec.method} ${spec.path}: ${rps.toFixed(0)} req/s, p50 ${result.p50.toFixed(2)} ms, p99 ${result.p99.toFixed(2)} ms${errorNote}`,
        );
      }
    } finally {
      await app.close();
      await database.close();
      devNull.flushSync();
      devNull.end();
      if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
      await dropDatabase?.();
    }
  }

  console.log('');
  console.log('| engine | route | connections | requests/s | p50 (ms) | p99 (ms) | server CPU per request (µs) | server CPU (cores) | non-2xx |');
  console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const row of rows) {
    const r = row.result;
    console.log(
      `| ${row.engine} | ${row.route} | ${row.connections} | ${row.rps.toFixed(0)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${row.cpuUsPerRequest.toFixed(0)} | ${row.serverCpuCores.toFixed(2)} | ${r.errors} |`,
    );
  }
  process.exit(0);
}
