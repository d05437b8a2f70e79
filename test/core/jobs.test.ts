/** The shared durable job queue (pg-boss) on both database engines. */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { after, before, test } from 'node:test';
import { forEachEngine, openTestDatabase } from '../support/app.js';
import { openDatabase, type OpenedDatabase } from '../../src/core/db/database.js';
import { Jobs, POLL_SECONDS } from '../../src/core/jobs.js';
import { until } from '../support/until.js';

const quiet = { info() {}, warn() {}, error() {} };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

forEachEngine('jobs', (engine) => {
  let database: OpenedDatabase;
  let jobs: Jobs;
  let drop: (() => Promise<void>) | undefined;
  before(async () => {
    ({ database, drop } = await openTestDatabase(engine));
    jobs = await Jobs.start(database, quiet);
  });
  after(async () => {
    await jobs.stop();
    await database.close();
    await drop?.();
  });

  test('a job sent now runs at once on this process, with its data', async () => {
    const seen: Array<{ n: number; at: number }> = [];
    await jobs.work<{ n: number }>('test.now', {}, async (data) => {
      seen.push({ n: data.n, at: performance.now() });
    });
    // Woken by send(), not found by the next poll (every POLL_SECONDS): three jobs in a row each
    // start within a quarter of the poll interval, which polling alone would manage for all three
    // rarely (one time in 64 on the embedded engine). A bound this loose holds on a loaded machine.
    const bound = Math.max(1500, (POLL_SECONDS[engine] * 1000) / 4);
    for (const n of [7, 8, 9]) {
      const sentAt = performance.now();
      await jobs.send('test.now', { n });
      const ran = await until(() => seen.find((s) => s.n === n));
      assert.ok(ran.at - sentAt < bound, `job ${n} took ${Math.round(ran.at - sentAt)} ms (poll interval ${POLL_SECONDS[engine]} s)`);
    }
  });

  test('a failing job is retried until it succeeds, with its retry count', async () => {
    const attempts: number[] = [];
    await jobs.work<{ x: number }>('test.retry', { retryLimit: 3, retryDelay: 0 }, async (_data, job) => {
      attempts.push(job.retryCount);
      if (attempts.length < 3) throw new Error('receiver down');
    });
    await jobs.send('test.retry', { x: 1 });
    await until(() => (attempts.length >= 3 ? attempts : undefined), 15_000);
    await sleep(1200);
    assert.deepEqual(attempts, [0, 1, 2], 'exactly three attempts, the third succeeded');
  });

  test('a job sent in a transaction exists only if the transaction commits', async () => {
    const seen: string[] = [];
    await jobs.work<{ tag: string }>('test.trx', {}, async (data) => {
      seen.push(data.tag);
    });
    await database.db.transaction().execute(async (trx) => {
      await jobs.send('test.trx', { tag: 'committed' }, {}, trx);
    });
    await assert.rejects(
      database.db.transaction().execute(async (trx) => {
        await jobs.send('test.trx', { tag: 'rolled back' }, {}, trx);
        throw new Error('abort');
      }),
    );
    await until(() => (seen.includes('committed') ? true : undefined));
    await sleep(1200);
    assert.deepEqual(seen, ['committed']);
  });

  test('a job due later does not run before its time', async () => {
    const seen: number[] = [];
    await jobs.work<object>('test.later', {}, async () => {
      seen.push(Date.now());
    });
    const sentAt = Date.now();
    await jobs.send('test.later', {}, { startAfter: 1.5 });
    await until(() => seen[0], 10_000);
    assert.ok(seen[0] - sentAt >= 1400, `ran after ${seen[0] - sentAt} ms`);
  });
});

test('embedded engine: jobs outlive kill -9, and the one the process died in is retried at the next start', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'presence-jobs-'));
  try {
    // First life: one job queued for later, one running when the process is killed.
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, 'support/jobs-child.ts'), dir], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('running') && resolve());
      child.on('exit', (code) => reject(new Error(`child exited ${code} before its job ran`)));
    });
    const exited = new Promise((resolve) => child.on('exit', resolve));
    child.kill('SIGKILL');
    await exited;

    // Second life: both jobs run.
    const database = await openDatabase({ dataDir: dir });
    const jobs = await Jobs.start(database, quiet);
    const seen: string[] = [];
    await jobs.work<{ tag: string }>('test.durable', { retryLimit: 2, retryDelay: 0 }, async (data) => {
      seen.push(data.tag);
    });
    await until(() => (seen.length >= 2 ? true : undefined), 15_000);
    assert.deepEqual([...seen].sort(), ['queued', 'running']);
    await jobs.stop();
    await database.close();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('embedded engine: a process whose queue stopped while a poll waited for the database exits on its own', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'presence-jobs-'));
  try {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, 'support/jobs-stop-child.ts'), dir], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    // Before the fix, pg-boss's worker waited for that poll for ever and the process never exited.
    const code = await new Promise<number | null>((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const giveUp = (ms: number) => {
        clearTimeout(timer);
        timer = setTimeout(() => {
          child.kill('SIGKILL');
          resolve(null);
        }, ms);
      };
      giveUp(180_000); // starting a database on a loaded machine can be slow; the check is after `closed`
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('closed')) giveUp(20_000);
      });
      child.on('exit', (exitCode) => {
        clearTimeout(timer);
        resolve(exitCode);
      });
    });
    assert.match(output, /closed/);
    assert.equal(code, 0, 'the process did not exit within 20 s of closing its database');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
