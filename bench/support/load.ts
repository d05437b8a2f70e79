/**
 * What the render-session benchmarks share: the settings a benchmarked server runs with, the API
 * call they make, and the load of bench/realtime-load.mjs run in worker threads (each worker opens
 * its share of the sessions' sockets; then all start together, pass the warm-up together, and
 * report their histograms).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

const LOAD_SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'realtime-load.mjs');

/**
 * A benchmarked server's settings: room for every session, no rate limit, no sharding unless asked,
 * and free of charge (thousands of sessions over the runs would use up the first account's balance
 * and end with insufficient_balance; the meter still checks every session, it charges nothing).
 */
export const BENCH_SERVER_ENV = {
  REALTIME_SHARDS: '0',
  HOST: '127.0.0.1',
  SESSION_CAPACITY: '2000',
  PLAYER_OPEN_SECONDS: '600',
  RATE_LIMIT_PER_SECOND: '100000',
  PRICE_PER_MINUTE: '0',
  LOG_LEVEL: 'warn',
};

export async function api(url: string, key: string, method: string, route: string, body?: unknown): Promise<any> {
  const response = await fetch(url + route, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body ? JSON.stringify(body) : undefined,
  });
  return response.json();
}

export interface LoadSession {
  ws_url: string;
  player_url: string;
}

/** One worker's report (bench/realtime-load.mjs): its latency histogram, timing errors, missing pieces… */
export type LoadResult = Record<string, any>;

/**
 * Opens every session's sockets, spread over `workers` threads; resolves once all are open.
 * `start()` then streams, resolving when every worker has passed the warm-up (the measured window
 * begins); `results()` resolves with each worker's report when the window ends.
 */
export async function openLoad(sessions: LoadSession[], options: { workers: number; seconds: number; warmup: number }) {
  const shares = Array.from({ length: options.workers }, (_, w) => sessions.filter((_, i) => i % options.workers === w)).filter((s) => s.length);
  const running = shares.map((share) => {
    const worker = new Worker(LOAD_SCRIPT, { workerData: { sessions: share, seconds: options.seconds, warmup: options.warmup } });
    const messages: LoadResult[] = [];
    let wake: () => void = () => {};
    let failure: Error | undefined;
    worker.on('message', (m) => {
      messages.push(m);
      wake();
    });
    worker.on('error', (e) => {
      failure = e;
      wake();
    });
    const next = async () => {
      while (!messages.length) {
        if (failure) throw failure;
        await new Promise<void>((r) => (wake = r));
      }
      return messages.shift()!;
    };
    return { worker, next };
  });
  await Promise.all(running.map((r) => r.next()));
  return {
    async start(): Promise<void> {
      for (const r of running) r.worker.postMessage('start');
      await Promise.all(running.map((r) => r.next()));
    },
    async results(): Promise<LoadResult[]> {
      const results = await Promise.all(running.map((r) => r.next()));
      // Not awaited: the caller reads the server's counters for the window at once.
      for (const r of running) void r.worker.terminate();
      return results;
    },
  };
}
