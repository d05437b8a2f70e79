/**
 * Memory benchmark: the server's resident memory (RSS, and its peak VmHWM) on the embedded
 * database, as an operator sizing a small virtual machine would see it.
 *
 *   node --import tsx bench/memory.ts [sessions]          (default 50)
 *   BENCH_SECONDS=15 BENCH_SETTLE=10 node --import tsx bench/memory.ts 50
 *   BENCH_STARTS=compiled,tsx,semi2 BENCH_LONG_IDLE=0 node --import tsx bench/memory.ts 50
 *
 * BENCH_STARTS: how the server runs, each a whole sequence of the phases below, in this one run so
 * their figures compare: `compiled` (default; bin/presence.js as `npm start` runs it, the sources
 * compiled to build/server/), `tsx` (PRESENCE_TSX=1: through tsx's loader, as before issue 27's
 * item 3), `semi2` (compiled, NODE_OPTIONS=--max-semi-space-size=2: V8's young generation at 2 MB).
 *
 * Phases, each a fresh `presence serve` process (bin/presence.js, as `npm start` runs it):
 *   1. first start: a new DATA_DIR (the database is created), idle BENCH_SETTLE s after /readyz;
 *   2. restart: the same DATA_DIR, idle BENCH_SETTLE s after /readyz;
 *   3. N render sessions, each streaming 24 kHz audio at real time to a connected player
 *      (bench/realtime-load.mjs), for BENCH_SECONDS; RSS sampled every second (its highest shown);
 *   4. the same process BENCH_SETTLE s after every session stopped;
 *   5. the same process BENCH_LONG_IDLE s (default 660; 0 skips it) after that: past the offline
 *      voice's last worker's idle time (10 minutes), so what a server nobody talks to holds.
 * Then (unless BENCH_SENTENCE=0), in this process, the offline voice's first sentence with its worker warm, with none (the
 * worker ended), and with none but a session's prewarm started 1 s before it (what a visitor's
 * first sentence after a quiet spell waits).
 * Speech engines as configured in the environment (here: flite and pocketsphinx when installed;
 * no Kokoro or sherpa-onnx model). Prints a table; bench/README.md keeps the figures.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { freePort } from '../test/support/ports.js';
import { BENCH_SERVER_ENV } from './support/load.js';
import { FliteEngine } from '../src/speech/engines/flite.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(here, '..');
const SESSIONS = Number(process.argv[2] ?? 50);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 15);
const SETTLE = Number(process.env.BENCH_SETTLE ?? 10);
const LONG_IDLE = Number(process.env.BENCH_LONG_IDLE ?? 660);
const WORKERS = 2;

type Row = { phase: string; rssMb: number; peakMb: number; heapMb: number; note: string };

function status(pid: number): { rssMb: number; peakMb: number } {
  const text = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(text.match(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm'))?.[1] ?? NaN);
  return { rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Server {
  url: string;
  key?: string;
  child: ChildProcess;
  readyMs: number;
  stop(): Promise<void>;
}

const STARTS: Record<string, Record<string, string>> = {
  compiled: {},
  tsx: { PRESENCE_TSX: '1' },
  semi2: { NODE_OPTIONS: '--max-semi-space-size=2' },
};

async function startServer(dataDir: string, start: string): Promise<Server> {
  const port = await freePort();
  const began = Date.now();
  const child = spawn(process.execPath, ['bin/presence.js', 'serve'], {
    cwd: ROOT,
    env: { ...process.env, ...BENCH_SERVER_ENV, ...STARTS[start], DATA_DIR: dataDir, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  process.once('exit', () => child.kill('SIGKILL'));
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  const url = `http://127.0.0.1:${port}`;
  for (;;) {
    if (child.exitCode !== null) throw new Error('server exited before it was ready');
    try {
      if ((await fetch(`${url}/readyz`)).ok) break;
    } catch {
      // not listening yet
    }
    await sleep(200);
  }
  return {
    url,
    key: output.match(/sk_live_[A-Za-z0-9_-]+/)?.[0],
    child,
    readyMs: Date.now() - began,
    stop: async () => {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

async function heapMb(url: string): Promise<number> {
  const metrics = await (await fetch(`${url}/metrics`)).text();
  return Number(metrics.match(/^presence_heap_used_bytes (\d+)/m)?.[1] ?? NaN) / 1e6;
}

async function idle(server: Server, phase: string, note: string): Promise<Row> {
  await sleep(SETTLE * 1000);
  return { phase, ...status(server.child.pid!), heapMb: await heapMb(server.url), note };
}

async function api(url: string, key: string, method: string, route: string, body?: unknown) {
  const response = await fetch(url + route, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body ? JSON.stringify(body) : undefined,
  });
  if (!response.ok) throw new Error(`${method} ${route}: ${response.status} ${await response.text()}`);
  return response.json() as Promise<any>;
}

/** N render sessions streaming for SECONDS; the highest RSS seen meanwhile. */
async function withSessions(server: Server, key: string): Promise<Row> {
  const agent = await api(server.url, key, 'POST', '/v1/agent/create', { name: 'bench-memory', concurrency_limit: 1000 });
  const sessions: Array<{ ws_url: string; player_url: string; session_id: string }> = [];
  for (let i = 0; i < SESSIONS; i++) sessions.push(await api(server.url, key, 'POST', '/v1/sessions', { agent_id: agent.id, mode: 'render' }));
  const workers = Array.from(
    { length: WORKERS },
    (_, w) =>
      new Worker(path.join(here, 'realtime-load.mjs'), { workerData: { sessions: sessions.filter((_, i) => i % WORKERS === w), seconds: SECONDS, warmup: 2 } }),
  );
  const next = (worker: Worker) =>
    new Promise<any>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
  await Promise.all(workers.map(next)); // every socket open
  const done = workers.map((worker) => {
    const measuring = next(worker);
    worker.postMessage('start');
    return measuring.then(() => next(worker));
  });
  let highest = 0;
  let finished = false;
  void Promise.all(done).finally(() => (finished = true));
  while (!finished) {
    highest = Math.max(highest, status(server.child.pid!).rssMb);
    await sleep(1000);
  }
  const results = await Promise.all(done);
  for (const worker of workers) void worker.terminate();
  const heap = await heapMb(server.url);
  const peak = status(server.child.pid!).peakMb;
  for (const s of sessions) await api(server.url, key, 'POST', `/v1/sessions/${s.session_id}/stop`);
  const lost = results.reduce((sum, r) => sum + (r.missing ?? 0), 0);
  return {
    phase: `${SESSIONS} render sessions`,
    rssMb: highest,
    peakMb: peak,
    heapMb: heap,
    note: `highest RSS over ${SECONDS} s of streaming; ${lost} frames lost`,
  };
}

async function main() {
  const rows: Row[] = [];
  const starts = (process.env.BENCH_STARTS ?? 'compiled').split(',');
  for (const start of starts) {
    if (!STARTS[start]) throw new Error(`BENCH_STARTS: unknown start ${start} (${Object.keys(STARTS).join(', ')})`);
    const before = rows.length;
    await phases(start, rows);
    if (starts.length > 1) for (const row of rows.slice(before)) row.phase = `${start}: ${row.phase}`;
  }
  const mb = (n: number) => n.toFixed(0).padStart(8);
  console.log(`\nServer memory (MB), embedded database, ${os.availableParallelism()} cores, Node ${process.version}`);
  console.log(`${'phase'.padEnd(34)}${'RSS'.padStart(8)}${'peak'.padStart(8)}${'JS heap'.padStart(9)}  note`);
  for (const r of rows) console.log(`${r.phase.padEnd(34)}${mb(r.rssMb)}${mb(r.peakMb)}${mb(r.heapMb).padStart(9)}  ${r.note}`);
  if (process.env.BENCH_SENTENCE !== '0') await firstSentence();
  console.log(
    `(load average ${os
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')})`,
  );
}

async function phases(start: string, rows: Row[]): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'presence-memory-'));
  try {
    let server = await startServer(dataDir, start);
    const key = server.key;
    if (!key) throw new Error('the first start printed no API key');
    rows.push(await idle(server, 'first start, idle', `new DATA_DIR; ready in ${(server.readyMs / 1000).toFixed(1)} s; ${SETTLE} s after /readyz`));
    await server.stop();
    server = await startServer(dataDir, start);
    rows.push(await idle(server, 'restart, idle', `same DATA_DIR; ready in ${(server.readyMs / 1000).toFixed(1)} s; ${SETTLE} s after /readyz`));
    rows.push(await withSessions(server, key));
    rows.push(await idle(server, 'after the sessions', `${SETTLE} s after every session stopped`));
    if (LONG_IDLE > 0) {
      await sleep(Math.max(0, LONG_IDLE - SETTLE) * 1000);
      rows.push(await idle(server, 'long idle', `${LONG_IDLE + SETTLE} s after the sessions stopped (the voice's last worker ends after 600 s idle)`));
    }
    await server.stop();
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The offline voice's first sentence (ms to its first audio), warm, cold, and cold with a prewarm 1 s ahead; medians of 3. */
async function firstSentence(): Promise<void> {
  const engine = new FliteEngine({ workers: 1, lastIdleMs: 1500 });
  const speak = async () => {
    const began = performance.now();
    for await (const _ of engine.synthesize({ text: 'Hello, how can I help you today?', voiceId: 'slt', language: 'en', signal: new AbortController().signal }))
      return performance.now() - began;
    return NaN;
  };
  const ended = async () => {
    while (engine.workersRunning > 0) await sleep(50);
  };
  const warm: number[] = [];
  const cold: number[] = [];
  const prewarmed: number[] = [];
  try {
    for (let k = 0; k < 3; k++) {
      await engine.warm();
      warm.push(await speak());
      await ended();
      cold.push(await speak());
      await ended();
      void engine.warm().catch(() => {});
      await sleep(1000);
      prewarmed.push(await speak());
      await ended();
    }
  } finally {
    await engine.close();
  }
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[1].toFixed(0);
  console.log(
    `\nOffline voice, first audio of a sentence (median of 3): worker warm ${median(warm)} ms; no worker ${median(cold)} ms; no worker, session prewarm 1 s before ${median(prewarmed)} ms`,
  );
}

await main();
process.exit(0);
