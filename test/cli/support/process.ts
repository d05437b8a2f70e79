/**
 * Spawns the real operator CLI and server (`node bin/presence.js …`) as child processes, the way an
 * operator runs them: a temporary DATA_DIR, a free port on 127.0.0.1, output captured for checks.
 * Every process and folder made here is cleaned up by `cleanup()` (call it in `after`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDatabase } from '../../support/postgres.js';
import { migratedPgdata } from '../../support/db-template.js';
import { jsonRequest } from '../../support/http.js';
import { freePort } from '../../support/ports.js';
export { freePort };

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const BIN = path.join(ROOT, 'bin', 'presence.js');

export const KEY_PATTERN = /sk_live_[A-Za-z0-9_-]+/g;

const children = new Set<ChildProcess>();
const folders = new Set<string>();
const drops: Array<() => Promise<void>> = [];

export function tempDataDir(label = 'cli'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `presence-${label}-`));
  folders.add(dir);
  return dir;
}

// Creating and migrating an embedded database is most of a first start's time (tens of seconds
// on a loaded machine). Tests that are not about the first start begin from a copy of one
// migrated DATA_DIR (made once per test run: test/support/db-template.ts): what an operator's
// second start finds.

/** A DATA_DIR holding an embedded database that is already created and migrated (no accounts). */
export async function migratedDataDir(label = 'cli'): Promise<string> {
  const source = await migratedPgdata();
  const dir = tempDataDir(label);
  fs.cpSync(source, path.join(dir, 'pgdata'), { recursive: true });
  return dir;
}

/** The environment a child gets: the caller's PATH etc., none of the caller's Presence settings. */
function childEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ['DATABASE_URL', 'DATA_DIR', 'PORT', 'HOST', 'PUBLIC_URL', 'LOG_LEVEL', 'NODE_OPTIONS', 'NODE_TEST_CONTEXT']) delete base[name];
  // A served child fetches no speech models unless a test asks (MODELS_DOWNLOAD=1 and its own mirror).
  return { ...base, HOST: '127.0.0.1', MODELS_DOWNLOAD: base.MODELS_DOWNLOAD ?? '0', ...env };
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs one CLI command to completion. */
export function runCli(args: string[], env: Record<string, string | undefined>, timeoutMs = 120_000): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`presence ${args.join(' ')} did not finish in ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      children.delete(child);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** Parses stdout that must be exactly one JSON object on one line. */
export function singleJson(result: CliResult): any {
  const lines = result.stdout.split('\n').filter((l) => l.length > 0);
  if (result.code !== 0 || lines.length !== 1) {
    throw new Error(`expected exit 0 and one line of JSON on stdout, got exit ${result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
  }
  const value = JSON.parse(lines[0]);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error(`not a JSON object: ${lines[0]}`);
  return value;
}

export interface ServerProcess {
  url: string;
  port: number;
  dataDir: string;
  child: ChildProcess;
  /** Everything written so far. */
  stdout(): string;
  stderr(): string;
  /** JSON log lines (stdout and stderr), parsed. */
  logs(): any[];
  /** Resolves with the exit code/signal once the process has ended. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGTERM, then waits for the exit (SIGKILL after `graceMs`). */
  stop(graceMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  request(
    method: string,
    urlPath: string,
    options?: { key?: string; body?: unknown; headers?: Record<string, string> },
  ): Promise<{ status: number; body: any; headers: Headers }>;
  /** Polls /readyz until it answers 200 (database answers and speech can voice text). */
  waitForReady(timeoutMs?: number): Promise<void>;
}

/** Starts `presence serve` and waits until /healthz answers (asked every `pollMs`, 100 by default). */
export async function startServer(env: Record<string, string | undefined> = {}, options: { timeoutMs?: number; pollMs?: number } = {}): Promise<ServerProcess> {
  const dataDir = env.DATA_DIR ?? tempDataDir('serve');
  const port = env.PORT ? Number(env.PORT) : await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, [BIN, 'serve'], {
    cwd: ROOT,
    env: childEnv({ PUBLIC_URL: url, ...env, DATA_DIR: dataDir, PORT: String(port) }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (d) => (stdout += d));
  child.stderr!.setEncoding('utf8').on('data', (d) => (stderr += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('close', (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    });
  });
  let done = false;
  void exited.then(() => (done = true));

  const deadline = Date.now() + (options.timeoutMs ?? 120_000);
  for (;;) {
    if (done) throw new Error(`presence serve exited before listening\nstdout: ${stdout}\nstderr: ${stderr}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`presence serve did not answer /healthz in time\nstdout: ${stdout}\nstderr: ${stderr}`);
    }
    try {
      const response = await fetch(`${url}/healthz`);
      if (response.ok) break;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, options.pollMs ?? 100));
  }

  const request: ServerProcess['request'] = (method, urlPath, opts = {}) => jsonRequest(url, method, urlPath, opts);

  return {
    url,
    port,
    dataDir,
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    logs: () =>
      (stdout + '\n' + stderr)
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l)),
    exited,
    request,
    async waitForReady(timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const ready = await request('GET', '/readyz');
        if (ready.status === 200) return;
        if (Date.now() > deadline) throw new Error(`/readyz still answers ${ready.status} ${JSON.stringify(ready.body)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async stop(graceMs = 20_000) {
      if (!done) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        const result = await exited;
        clearTimeout(timer);
        return result;
      }
      return exited;
    },
  };
}

/** The API key printed by the first-start banner; fails unless exactly one key was printed. */
export function bannerKeys(server: ServerProcess): string[] {
  return [...(server.stdout() + server.stderr()).matchAll(KEY_PATTERN)].map((m) => m[0]);
}

/** A fresh PostgreSQL database from TEST_DATABASE_URL, dropped by `cleanup()`. */
export async function freshPostgres(): Promise<string> {
  const database = await createDatabase(process.env.TEST_DATABASE_URL!);
  drops.push(database.drop);
  return database.url;
}

/** Kills any child still running, removes temp folders and drops test databases. */
export async function cleanup(): Promise<void> {
  const waits = [...children].map(
    (child) =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('close', () => resolve());
        child.kill('SIGKILL');
      }),
  );
  await Promise.all(waits);
  for (const dir of folders) fs.rmSync(dir, { recursive: true, force: true });
  folders.clear();
  while (drops.length) await drops.pop()!().catch(() => undefined);
}
