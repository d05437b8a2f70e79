/**
 * Durable background work (crawls, brain builds, webhook deliveries) on pg-boss, over whichever
 * database engine the deployment runs: PostgreSQL through pg-boss's own pool, PGlite through an
 * adapter that takes Kysely's single connection for each statement (so a job query never lands
 * inside another caller's transaction). Jobs survive `kill -9`: they are rows in the database.
 *
 *   const jobs = await Jobs.start(database, logger);
 *   await jobs.work<{ url: string }>('crawl.page', { retryLimit: 3 }, async (data) => { … });
 *   await jobs.send('crawl.page', { url }, { singletonKey: url });
 *
 * A capability names its queues with its own prefix (`knowledge.*`, `delivery.*`). Handlers take
 * one job at a time and must be idempotent: a job interrupted by a crash runs again.
 */
import PgBoss from 'pg-boss';
import { CompiledQuery, type Kysely } from 'kysely';
import type { Database } from './db/schema.js';
import type { OpenedDatabase } from './db/database.js';

export interface JobsLogger {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
  error(object: object, message: string): void;
}

export interface QueueOptions {
  /** Attempts after the first (default 2). */
  retryLimit?: number;
  /** Seconds before a retry (default 5); doubles each time with `retryBackoff`. */
  retryDelay?: number;
  retryBackoff?: boolean;
  /** A job running longer than this is considered lost and retried (default 300 s). */
  expireInSeconds?: number;
  /** Jobs of this queue run at once in this process (default 1). */
  concurrency?: number;
}

export interface SendOptions {
  /** Do not run before this time (a Date) or this many seconds from now. */
  startAfter?: Date | number;
  /** At most one queued or active job per key and queue. */
  singletonKey?: string;
  /** A chosen job id (UUID), e.g. to find the job again. */
  id?: string;
  retryLimit?: number;
  retryDelay?: number;
}

export type JobHandler<T> = (data: T, job: { id: string; name: string; retryCount: number }) => Promise<void>;

/**
 * How often an idle worker looks for due jobs by itself. Every poll is a query, and a node has
 * about twenty workers, so polling often costs an idle node a good part of a core on the embedded
 * engine (each PGlite query runs on the event loop). Polls are only the safety net: `send()` wakes
 * this process's workers at once, and when the job is due later (or a failed job's retry falls due)
 * a local timer wakes them then. On PostgreSQL other nodes also send jobs, so it polls more often.
 */
export const POLL_SECONDS = { pglite: 10, postgres: 2 } as const;
/** Wake-up timers kept per queue (the earliest due ones; the poll covers any beyond). */
const MAX_WAKE_TIMERS = 64;

export class Jobs {
  private readonly workers = new Map<string, string[]>();
  /** Due times (ms) at which a queue's local workers will be woken, with their timers. */
  private readonly wakeTimers = new Map<string, Map<number, NodeJS.Timeout>>();
  private stopped = false;

  private constructor(
    private readonly boss: PgBoss,
    private readonly logger: JobsLogger,
    /** Aborted once stopped: database calls pg-boss still has in flight then fail instead of hanging. */
    private readonly released: AbortController,
    private readonly engine: OpenedDatabase['engine'],
  ) {}

  private get pollSeconds(): number {
    return POLL_SECONDS[this.engine];
  }

  /**
   * Opens the queue. On the embedded engine this process is the only one, so jobs a previous
   * process left running (it died mid-job) are handed back for a retry at once instead of waiting
   * for their expiry.
   */
  static async start(database: OpenedDatabase, logger: JobsLogger): Promise<Jobs> {
    const common = { schema: 'pgboss', supervise: true, schedule: false, migrate: true, maintenanceIntervalSeconds: 60, archiveCompletedAfterSeconds: 3600 };
    const released = new AbortController();
    const boss =
      database.engine === 'postgres'
        ? new PgBoss({ ...common, connectionString: database.connectionString, max: 4 })
        : new PgBoss({ ...common, db: pgliteAdapter(database, released.signal) });
    boss.on('error', (error) => {
      if (!released.signal.aborted) logger.error({ err: error }, 'job queue error');
    });
    await boss.start();
    const jobs = new Jobs(boss, logger, released, database.engine);
    if (database.engine === 'pglite') await jobs.recoverInterrupted();
    return jobs;
  }

  private async recoverInterrupted(): Promise<void> {
    const db = this.boss.getDb();
    const result = (await db.executeSql(`SELECT name, id FROM pgboss.job WHERE state = 'active'`, [])) as { rows: Array<{ name: string; id: string }> };
    for (const row of result.rows) {
      // fail() moves a job with retries left to 'retry' (else 'failed'), recording why.
      await this.boss.fail(row.name, row.id, { message: 'interrupted: the server stopped while this job ran' });
    }
    if (result.rows.length) this.logger.warn({ jobs: result.rows.length }, 'jobs interrupted by the previous stop were handed back for a retry');
  }

  /** Creates the queue (idempotent) and starts working it in this process. */
  async work<T extends object>(name: string, options: QueueOptions, handler: JobHandler<T>): Promise<void> {
    const queue = {
      name,
      retryLimit: options.retryLimit ?? 2,
      retryDelay: options.retryDelay ?? 5,
      retryBackoff: options.retryBackoff ?? false,
      expireInSeconds: options.expireInSeconds ?? 300,
    };
    if (await this.boss.getQueue(name)) await this.boss.updateQueue(name, queue);
    else await this.boss.createQueue(name, queue);
    const ids: string[] = [];
    for (let i = 0; i < (options.concurrency ?? 1); i++) {
      let workerId = '';
      workerId = await this.boss.work<T>(name, { batchSize: 1, pollingIntervalSeconds: this.pollSeconds, includeMetadata: true }, async ([job]) => {
        try {
          await handler(job.data, { id: job.id, name, retryCount: job.retryCount });
        } catch (error) {
          this.logger.warn({ err: error, queue: name, job: job.id }, 'job failed; it will be retried if it has attempts left');
          if (job.retryCount < (job.retryLimit ?? queue.retryLimit)) {
            // pg-boss sets the retry's start to now + retryDelay, or with backoff a random time
            // up to retryDelay · 2^(retries + 1): wake the workers at the latest of it.
            const retryDelay = job.retryDelay ?? queue.retryDelay;
            const delay = (job.retryBackoff ?? queue.retryBackoff) ? retryDelay * 2 ** Math.min(16, job.retryCount + 1) : retryDelay;
            this.wakeAt(name, Date.now() + delay * 1000 + 50);
          }
          throw error;
        } finally {
          // A worker that found a job looks for the next at once (more may be waiting) rather
          // than after a poll interval; it sleeps once a look finds nothing.
          if (workerId && !this.stopped) this.boss.notifyWorker(workerId);
        }
      });
      ids.push(workerId);
    }
    this.workers.set(name, ids);
  }

  /**
   * Queues a job; answers its id (null when a singleton with that key is already queued).
   * With `transaction`, the job is written in that Kysely transaction: it exists exactly when the
   * transaction commits (the way to never lose "something happened, now do the work"). On the
   * embedded engine, a job must be sent either with the transaction or outside any transaction.
   */
  async send<T extends object>(name: string, data: T, options: SendOptions = {}, transaction?: Kysely<Database>): Promise<string | null> {
    if (this.stopped) throw new Error('the job queue is stopped');
    const startAfter = typeof options.startAfter === 'number' ? new Date(Date.now() + options.startAfter * 1000) : options.startAfter;
    const id = await this.boss.send(name, data, {
      ...(startAfter && { startAfter }),
      ...(options.singletonKey && { singletonKey: options.singletonKey }),
      ...(options.id && { id: options.id }),
      ...(options.retryLimit !== undefined && { retryLimit: options.retryLimit }),
      ...(options.retryDelay !== undefined && { retryDelay: options.retryDelay }),
      ...(transaction && { db: { executeSql: (text: string, values: unknown[] = []) => transaction.executeQuery(CompiledQuery.raw(text, values)) } }),
    });
    // A job due now starts now on this process rather than at the next poll; one due later, then.
    const due = Math.max(Date.now(), startAfter?.getTime() ?? 0);
    if (due <= Date.now()) this.wake(name);
    else this.wakeAt(name, due + 20);
    if (transaction && this.engine === 'postgres') {
      // The job is seen once the caller's transaction commits, which pg-boss's own connections
      // cannot know (on PGlite a worker's query waits for the transaction's connection anyway).
      for (const after of [50, 300, 1500]) this.wakeAt(name, due + after);
    }
    return id;
  }

  private wake(name: string): void {
    if (this.stopped) return;
    for (const worker of this.workers.get(name) ?? []) this.boss.notifyWorker(worker);
  }

  /** Wakes the queue's local workers at `at` (ms since the epoch). Bounded; the poll covers the rest. */
  private wakeAt(name: string, at: number): void {
    if (this.stopped || !this.workers.has(name)) return;
    let timers = this.wakeTimers.get(name);
    if (!timers) this.wakeTimers.set(name, (timers = new Map()));
    const slot = Math.ceil(at / 100) * 100; // jobs due within the same 100 ms share a timer
    if (timers.has(slot)) return;
    if (timers.size >= MAX_WAKE_TIMERS) {
      // Keep the earliest: the latest gives way (the poll still finds its job).
      const latest = Math.max(...timers.keys());
      if (slot >= latest) return;
      clearTimeout(timers.get(latest));
      timers.delete(latest);
    }
    const timer = setTimeout(
      () => {
        timers!.delete(slot);
        this.wake(name);
      },
      Math.max(0, slot - Date.now()),
    );
    timer.unref();
    timers.set(slot, timer);
  }

  /** Cancels queued jobs (e.g. an agent's build when the agent is deleted). */
  async cancel(name: string, ids: string[]): Promise<void> {
    if (ids.length) await this.boss.cancel(name, ids);
  }

  /** Stops taking jobs and waits (bounded) for running ones to finish. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const timers of this.wakeTimers.values()) for (const timer of timers.values()) clearTimeout(timer);
    this.wakeTimers.clear();
    await this.boss.stop({ graceful: true, wait: true, timeout: 10_000 });
    // pg-boss stops a worker only when its loop comes round; a poll still waiting on the embedded
    // database (closed next) would never come round and would keep the process alive for ever.
    this.released.abort();
  }
}

/**
 * pg-boss's database interface over PGlite: each statement holds Kysely's single connection, so
 * it cannot interleave with a Kysely transaction. Statements without parameters may be several
 * (pg-boss's schema set-up), which PGlite runs with exec().
 */
function pgliteAdapter(database: OpenedDatabase, released: AbortSignal) {
  const pglite = database.pglite!;
  const stopped = new Promise<never>((_, reject) => {
    released.addEventListener('abort', () => reject(new Error('the job queue is stopped')), { once: true });
  });
  stopped.catch(() => {});
  return {
    async executeSql(text: string, values?: unknown[]) {
      if (released.aborted) throw new Error('the job queue is stopped');
      const statement = database.db.connection().execute(async () => {
        if (values && values.length) return pglite.query(text, values as any[]);
        const results = await pglite.exec(text);
        return results[results.length - 1] ?? { rows: [] };
      });
      return Promise.race([statement, stopped]);
    },
  };
}
