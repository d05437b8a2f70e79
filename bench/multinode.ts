/**
 * Three nodes on one PostgreSQL (issue 29): what forwarding a session's sockets to its owner node
 * adds to relay latency. N render sessions are started over the three nodes in turn; each run
 * streams 24 kHz audio in 40 ms pieces at real time (bench/realtime-load.mjs) with:
 *   - `owner`:     the render socket and the page both on the node that owns the session;
 *   - `forwarded`: the render socket on the next node and the page on the one after, so every
 *                  piece crosses two forwarding hops (render socket → owner → page's node).
 *
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node --import tsx bench/multinode.ts [N ...]
 *
 * (TEST_DATABASE_URL works too; a fresh database is made and dropped.) Default N: 30 90.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../test/support/ports.js';
import { createDatabase } from '../test/support/postgres.js';
import { api, BENCH_SERVER_ENV, openLoad } from './support/load.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(here, '..');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 15);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3);
const NODES = 3;

const base = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
if (!base) {
  console.error('set BENCH_DATABASE_URL (or TEST_DATABASE_URL) to a PostgreSQL server');
  process.exit(2);
}

interface Node {
  port: number;
  url: string;
  child: ChildProcess;
}

async function startNode(databaseUrl: string): Promise<{ node: Node; output: () => string }> {
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'presence-bench-mn-'));
  const child = spawn(process.execPath, ['bin/presence.js', 'serve'], {
    cwd: ROOT,
    env: { ...process.env, ...BENCH_SERVER_ENV, DATABASE_URL: databaseUrl, DATA_DIR: dataDir, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  process.once('exit', () => child.kill('SIGKILL'));
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${url}/healthz`)).ok) break;
    } catch {
      if (i > 1200) throw new Error('node did not start');
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return { node: { port, url, child }, output: () => output };
}

function cpuSeconds(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(stat[11]) + Number(stat[12])) / 100;
}

async function load(sessions: Array<{ ws_url: string; player_url: string }>) {
  const running = await openLoad(sessions, { workers: 2, seconds: SECONDS, warmup: WARMUP });
  await running.start();
  const results = await running.results();
  const bins = new Uint32Array(results[0].latencyBins.length);
  for (const r of results) for (let i = 0; i < bins.length; i++) bins[i]! += r.latencyBins[i];
  const total = bins.reduce((a, b) => a + b, 0);
  const at = (p: number) => {
    let seen = 0;
    for (let i = 0; i < bins.length; i++) {
      seen += bins[i]!;
      if (seen >= (p / 100) * total) return i * results[0].binMs;
    }
    return NaN;
  };
  return { pieces: total, p50: at(50), p99: at(99), missing: results.reduce((n, r) => n + r.missing, 0) };
}

const database = await createDatabase(base, 'presence_bench');
try {
  const first = await startNode(database.url);
  let key: string | undefined;
  for (let i = 0; i < 600 && !key; i++) {
    key = first.output().match(/sk_live_[A-Za-z0-9_-]+/)?.[0];
    if (!key) await new Promise((r) => setTimeout(r, 100));
  }
  if (!key) throw new Error('no first-start key');
  const nodes = [first.node, ...(await Promise.all(Array.from({ length: NODES - 1 }, () => startNode(database.url)))).map((s) => s.node)];
  const counts = process.argv
    .slice(2)
    .map(Number)
    .filter((n) => n > 0);
  const rows: string[] = [];
  for (const n of counts.length ? counts : [30, 90]) {
    for (const mode of ['owner', 'forwarded'] as const) {
      const agent = await api(nodes[0]!.url, key, 'POST', '/v1/agent/create', { name: `bench-${n}-${mode}`, concurrency_limit: 1000 });
      const sessions: Array<{ ws_url: string; player_url: string; session_id: string }> = [];
      for (let i = 0; i < n; i++) {
        const owner = i % NODES;
        const started = await api(nodes[owner]!.url, key, 'POST', '/v1/sessions', { agent_id: agent.id, mode: 'render' });
        const renderNode = nodes[mode === 'owner' ? owner : (owner + 1) % NODES]!;
        const pageNode = nodes[mode === 'owner' ? owner : (owner + 2) % NODES]!;
        // PUBLIC_URL is each node's own default; point each socket at the node chosen for it.
        const wsPath = new URL(started.ws_url).pathname + new URL(started.ws_url).search;
        const pagePath = new URL(started.player_url).pathname;
        sessions.push({
          session_id: started.session_id,
          ws_url: `ws://127.0.0.1:${renderNode.port}${wsPath}`,
          player_url: `http://127.0.0.1:${pageNode.port}${pagePath}`,
        });
      }
      const cpuBefore = nodes.map((x) => cpuSeconds(x.child.pid!));
      const started = performance.now();
      const result = await load(sessions);
      const wall = (performance.now() - started) / 1000;
      const cpu = nodes.map((x, i) => ((cpuSeconds(x.child.pid!) - cpuBefore[i]!) / wall) * 100);
      for (const s of sessions) await api(nodes[0]!.url, key, 'POST', `/v1/sessions/${s.session_id}/stop`);
      const row = `| ${n} | ${mode} | ${result.pieces} | ${result.p50.toFixed(2)} | ${result.p99.toFixed(2)} | ${result.missing} | ${cpu.map((c) => c.toFixed(0)).join(' / ')} |`;
      console.log(row);
      rows.push(row);
    }
  }
  console.log(
    `\nload average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}, ${os.cpus().length} cores, ${SECONDS} s measured after ${WARMUP} s warm-up\n`,
  );
  console.log('| sessions | sockets | pieces | relay p50 (ms) | relay p99 (ms) | missing | node CPU % (1 / 2 / 3) |');
  console.log('|---|---|---|---|---|---|---|');
  for (const row of rows) console.log(row);
  for (const x of nodes) x.child.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 1000));
} finally {
  await database.drop().catch(() => {});
}
