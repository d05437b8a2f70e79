/**
 * Real-time path benchmark: N render sessions at once, each streaming 24 kHz audio in 40 ms
 * binary pieces at real time, with a player socket connected and receiving.
 *
 *   node --import tsx bench/realtime.ts [N ...]        (default: 50 200 500)
 *   BENCH_SHARDS=2 node --import tsx bench/realtime.ts …  (the server with REALTIME_SHARDS=2)
 *
 * The server runs in its own process (so its CPU and memory are measured alone); the load runs
 * in worker threads. Reports per N: server CPU (% of one core and per frame), server RSS, p50 /
 * p99 relay latency (a piece's send → its frame's arrival at the player), and the error of
 * speak_ended − speak_started against the utterance's duration.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../test/support/ports.js';
import { api, BENCH_SERVER_ENV, openLoad } from './support/load.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(here, '..');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 2);
/** Seconds of the same load run before the measured window (fresh processes compile their hot code then). */
const WARMUP = Number(process.env.BENCH_WARMUP ?? 5);

type ProcStats = { cpuSeconds: number; userSeconds: number; systemSeconds: number; rssBytes: number };

function oneProcess(pid: number): ProcStats & { ppid: number } {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  const ticks = Number(stat[11]) + Number(stat[12]);
  const rssPages = Number(stat[21]);
  return {
    ppid: Number(stat[1]),
    cpuSeconds: ticks / 100,
    userSeconds: Number(stat[11]) / 100,
    systemSeconds: Number(stat[12]) / 100,
    rssBytes: rssPages * 4096,
  };
}

/** The server's figures with its shard processes' (REALTIME_SHARDS: its children) added. */
function procStats(pid: number): ProcStats {
  const total = oneProcess(pid);
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === pid) continue;
    try {
      const child = oneProcess(Number(entry));
      if (child.ppid !== pid) continue;
      total.cpuSeconds += child.cpuSeconds;
      total.userSeconds += child.userSeconds;
      total.systemSeconds += child.systemSeconds;
      total.rssBytes += child.rssBytes;
    } catch {
      // the process ended while /proc was read
    }
  }
  return total;
}

async function startServer(): Promise<{ url: string; key: string; pid: number; stop: () => void }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'presence-bench-'));
  const port = await freePort();
  // BENCH_PROFILE=dir writes the server's CPU profile there (node --cpu-prof) when it exits.
  const profile = process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [];
  // BENCH_SERVER_CPUS=0 runs the server on those CPUs only (taskset), e.g. with the load pinned
  // to the others (`taskset -c 1 node … bench/realtime.ts`), so the two do not preempt each other.
  const pin = process.env.BENCH_SERVER_CPUS ? ['taskset', '-c', process.env.BENCH_SERVER_CPUS] : [];
  const command = [...pin, process.execPath, ...profile, 'bin/presence.js', 'serve'];
  const child = spawn(command[0], command.slice(1), {
    cwd: ROOT,
    // Free of charge: 2,700 sessions over the runs would use up the first account's 100.00 and end
    // with insufficient_balance (the meter still checks every session; it charges nothing).
    env: { ...process.env, ...BENCH_SERVER_ENV, REALTIME_SHARDS: process.env.BENCH_SHARDS ?? '0', DATA_DIR: dataDir, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // A benchmark that fails must not leave its server running (and loading the machine).
  process.once('exit', () => child.kill('SIGKILL'));
  let output = '';
  const key = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk) => {
      output += chunk;
      const match = output.match(/sk_live_[A-Za-z0-9_-]+/);
      if (match) resolve(match[0]);
    });
    child.on('exit', () => reject(new Error('server exited')));
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    try {
      if ((await fetch(`${url}/readyz`)).ok) break;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const stop = async () => {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  return { url, key, pid: child.pid!, stop };
}

function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function run(n: number, server: { url: string; key: string; pid: number }) {
  // An agent takes at most 1,000 sessions at once (its concurrency_limit's ceiling): one agent per 1,000.
  const agents = [];
  for (let i = 0; i < Math.ceil(n / 1000); i++)
    agents.push(await api(server.url, server.key, 'POST', '/v1/agent/create', { name: `bench-${n}-${i}`, concurrency_limit: 1000 }));
  const sessions: Array<{ ws_url: string; player_url: string; session_id: string }> = [];
  for (let i = 0; i < n; i++)
    sessions.push(await api(server.url, server.key, 'POST', '/v1/sessions', { agent_id: agents[Math.floor(i / 1000)].id, mode: 'render' }));

  // Every socket is opened (paced) before the measured window, which starts on all workers at once.
  const load = await openLoad(sessions, { workers: WORKERS, seconds: SECONDS, warmup: WARMUP });
  // The warm-up runs; the window starts when every worker has passed it.
  await load.start();
  const metricsBefore = await (await fetch(`${server.url}/metrics`)).text();
  const framesBefore = gauge(metricsBefore, 'presence_frames_relayed_total');
  const lateBefore = gauge(metricsBefore, 'presence_playback_late_total');
  const relayBefore = bucketCounts(metricsBefore, 'presence_relay_delay_seconds');
  const tickBefore = bucketCounts(metricsBefore, 'presence_clock_tick_lag_seconds');
  const loadAverageBefore = os.loadavg()[0];
  const before = procStats(server.pid);
  const loadBefore = process.cpuUsage();
  const results = await load.results();
  const after = procStats(server.pid);
  const loadCpu = process.cpuUsage(loadBefore);
  const loadAverageAfter = os.loadavg()[0];
  const metrics = await (await fetch(`${server.url}/metrics`)).text();
  const serverCpuSeconds = after.cpuSeconds - before.cpuSeconds;
  const framesRelayed = gauge(metrics, 'presence_frames_relayed_total') - framesBefore;
  const latencies = mergeHistograms(results.map((r) => ({ bins: r.latencyBins as Uint32Array, binMs: r.binMs as number })));
  const timing = results
    .flatMap((r) => r.timingErrors as number[])
    .map(Math.abs)
    .sort((a, b) => a - b);
  const wall = results[0].wallSeconds as number;
  for (const s of sessions) await api(server.url, server.key, 'POST', `/v1/sessions/${s.session_id}/stop`);
  const serverDelay = histogramQuantiles(metrics, 'presence_relay_delay_seconds', relayBefore);
  const tickLag = histogramQuantiles(metrics, 'presence_clock_tick_lag_seconds', tickBefore);
  return {
    serverP99: serverDelay.p99,
    tickP99: tickLag.p99,
    n,
    cpu: (serverCpuSeconds / wall) * 100,
    // Far less sensitive to a loaded machine than latency: CPU time per unit of work.
    cpuMsPerSessionSecond: (serverCpuSeconds * 1000) / (n * wall),
    cpuUsPerFrame: (serverCpuSeconds * 1e6) / Math.max(1, framesRelayed),
    userUsPerFrame: ((after.userSeconds - before.userSeconds) * 1e6) / Math.max(1, framesRelayed),
    systemUsPerFrame: ((after.systemSeconds - before.systemSeconds) * 1e6) / Math.max(1, framesRelayed),
    loadUsPerFrame: (loadCpu.user + loadCpu.system) / Math.max(1, framesRelayed),
    lateUtterances: gauge(metrics, 'presence_playback_late_total') - lateBefore,
    loadAverage: `${loadAverageBefore.toFixed(1)} → ${loadAverageAfter.toFixed(1)}`,
    loadCpu: ((loadCpu.user + loadCpu.system) / 1e6 / wall) * 100,
    loadLagP99: Math.max(...results.map((r) => r.loadDelayP99 ?? r.loopDelayP99)),
    rssMb: after.rssBytes / 1e6,
    p50: latencies.percentile(50),
    p99: latencies.percentile(99),
    timingP50: percentile(timing, 50),
    timingP99: percentile(timing, 99),
    timingMax: timing.at(-1) ?? NaN,
    frames: latencies.count,
    lostFrames: results.reduce((s, r) => s + r.missing, 0),
  };
}

/** The load workers' latency histograms (fixed bins, so recording them made no garbage), merged. */
function mergeHistograms(parts: Array<{ bins: Uint32Array; binMs: number }>) {
  const bins = new Float64Array(parts[0].bins.length);
  for (const part of parts) for (let i = 0; i < bins.length; i++) bins[i] += part.bins[i];
  const count = bins.reduce((a, b) => a + b, 0);
  return {
    count,
    /** The bin's upper edge holding the p-th percentile. */
    percentile(p: number): number {
      if (!count) return NaN;
      const rank = Math.min(count, Math.floor((p / 100) * count) + 1);
      for (let i = 0, seen = 0; i < bins.length; i++) if ((seen += bins[i]) >= rank) return (i + 1) * parts[0].binMs;
      return NaN;
    },
  };
}

const gauge = (text: string, name: string) => Number(text.match(new RegExp(`^${name} (\\d+)$`, 'm'))?.[1] ?? NaN);

/** Cumulative bucket counts of one Prometheus histogram, by bound. */
function bucketCounts(text: string, name: string): number[] {
  return [...text.matchAll(new RegExp(`^${name}_bucket\\{le="([^"]+)"\\} (\\d+)$`, 'gm'))].map((m) => Number(m[2]));
}

/** p99 (as the bucket bound in ms) of the observations since `before`. */
function histogramQuantiles(text: string, name: string, before: number[]): { p99: string } {
  const bounds = [...text.matchAll(new RegExp(`^${name}_bucket\\{le="([^"]+)"\\}`, 'gm'))].map((m) => m[1]);
  const counts = bucketCounts(text, name).map((c, i) => c - (before[i] ?? 0));
  const total = counts.at(-1) ?? 0;
  const index = counts.findIndex((c) => c >= 0.99 * total);
  const bound = bounds[index];
  return { p99: bound === '+Inf' ? '> 500 ms' : `≤ ${Number(bound) * 1000} ms` };
}
const counts = process.argv.slice(2).map(Number).filter(Boolean);
const server = await startServer();
// Wait until the server has finished warming up (engines, the embedded database) and is idle.
for (let quiet = 0, i = 0; quiet < 3 && i < 120; i++) {
  const a = procStats(server.pid).cpuSeconds;
  await new Promise((r) => setTimeout(r, 1000));
  quiet = procStats(server.pid).cpuSeconds - a < 0.05 ? quiet + 1 : 0;
}
// The idle server's own CPU (background job polling and timers) with no session, as a baseline.
const idleBefore = procStats(server.pid);
await new Promise((r) => setTimeout(r, 5000));
const idleCpu = ((procStats(server.pid).cpuSeconds - idleBefore.cpuSeconds) / 5) * 100;
console.log(
  `\nReal-time path, ${SECONDS} s per run after ${WARMUP} s of the same load unmeasured, 24 kHz audio in 40 ms pieces at real time, ${os.cpus().length} cores (${os.cpus()[0].model})${process.env.BENCH_SERVER_CPUS ? `, server on CPU ${process.env.BENCH_SERVER_CPUS}` : ''}, ${Number(process.env.BENCH_SHARDS ?? 0) > 0 ? `REALTIME_SHARDS=${process.env.BENCH_SHARDS} (CPU and RSS: the main process and its shards)` : 'no shards (one process)'}; 1-minute load average before → after each run in the last column; the idle server (no session) used ${idleCpu.toFixed(1)}% of a core\n`,
);
console.log(
  '| sessions | server CPU per session-second | server CPU per frame relayed (user + system) | server CPU (% of a core) | load generator CPU (% of a core; per frame) | load generator loop delay p99 | server RSS | relay p50 | relay p99 | server-side relay p99 | clock tick lag p99 | speak timing error p50 | p99 | max | frames relayed | frames lost | playback_late warnings | load average |',
);
console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
// Each row is printed as soon as it is measured, so a run cut short keeps what it measured.
for (const n of counts.length ? counts : [50, 200, 500]) {
  const r = await run(n, server);
  console.log(
    `| ${r.n} | ${r.cpuMsPerSessionSecond.toFixed(2)} ms | ${r.cpuUsPerFrame.toFixed(0)} µs (${r.userUsPerFrame.toFixed(0)} + ${r.systemUsPerFrame.toFixed(0)}) | ${r.cpu.toFixed(0)}% | ${r.loadCpu.toFixed(0)}%; ${r.loadUsPerFrame.toFixed(0)} µs | ${r.loadLagP99.toFixed(0)} ms | ${r.rssMb.toFixed(0)} MB | ${r.p50.toFixed(1)} ms | ${r.p99.toFixed(1)} ms | ${r.serverP99} | ${r.tickP99} | ${r.timingP50.toFixed(1)} ms | ${r.timingP99.toFixed(1)} ms | ${r.timingMax.toFixed(1)} ms | ${r.frames} | ${r.lostFrames} | ${r.lateUtterances} | ${r.loadAverage} |`,
  );
}
await server.stop();
