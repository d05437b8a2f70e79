/**
 * VACUUM (ANALYZE) for the embedded database, on a timer. PostgreSQL servers run autovacuum
 * themselves; PGlite runs in single-user mode, where autovacuum never runs, so dead rows from
 * updates and deletes (sessions, jobs, deliveries) would pile up and the planner's statistics
 * would stay those of an empty database: a long-running instance would slow down.
 *
 * One table at a time, so a live query waits for one table's vacuum at most (PGlite has a single
 * connection), within a time budget per run (the rest waits for the next run); the time of the
 * last complete run is kept in `settings`, so a restart neither skips it nor runs it again at once.
 * Each run is logged with what it did and how long it took.
 */
import { sql } from 'kysely';
import type { Db } from './database.js';

export interface MaintenanceLogger {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
}

export interface MaintenanceOptions {
  /** Hours between runs (default 24). */
  everyHours?: number;
  /** Seconds after start before the first due run (default 600: the start's own work comes first). */
  firstDelaySeconds?: number;
  /** Seconds one run may take; tables past it wait for the next run (default 60). */
  budgetSeconds?: number;
}

export interface MaintenanceRun {
  tables: number;
  /** Tables left for the next run because the budget ran out. */
  deferred: number;
  ms: number;
}

const LAST_RUN_KEY = 'db_maintenance_last_run';
/** The schemas whose tables are ours (pg-boss keeps its queue in `pgboss`). */
const SCHEMAS = ['public', 'pgboss'];

export class DatabaseMaintenance {
  private timer?: NodeJS.Timeout;
  private running?: Promise<MaintenanceRun>;
  private stopped = false;
  /** Tables a budget-limited run did not reach, first in line next time. */
  private backlog: string[] = [];
  private readonly everyMs: number;
  private readonly firstDelayMs: number;
  private readonly budgetMs: number;

  constructor(
    private readonly db: Db,
    private readonly log: MaintenanceLogger,
    options: MaintenanceOptions = {},
  ) {
    this.everyMs = (options.everyHours ?? 24) * 3_600_000;
    this.firstDelayMs = (options.firstDelaySeconds ?? 600) * 1000;
    this.budgetMs = (options.budgetSeconds ?? 60) * 1000;
  }

  /** Schedules the next run: when the last one is a full period old, but not before the first delay. */
  async start(): Promise<void> {
    const last = await this.lastRun();
    const due = last === undefined ? 0 : last + this.everyMs;
    this.schedule(Math.max(due - Date.now(), this.firstDelayMs));
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /** Runs now (or joins the run under way). */
  run(): Promise<MaintenanceRun> {
    this.running ??= this.vacuum().finally(() => (this.running = undefined));
    return this.running;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    // setTimeout holds at most 2^31-1 ms (24.8 days).
    this.timer = setTimeout(
      () => {
        this.run()
          .catch((error: Error) => this.log.warn({ err: { message: error.message } }, 'database maintenance failed; it is tried again next period'))
          .finally(() => this.schedule(this.backlog.length ? Math.min(this.everyMs, 3_600_000) : this.everyMs));
      },
      Math.min(Math.max(0, delayMs), 2 ** 31 - 1),
    );
    this.timer.unref();
  }

  private async vacuum(): Promise<MaintenanceRun> {
    const began = Date.now();
    const rows = await sql<{ name: string }>`
      SELECT quote_ident(schemaname) || '.' || quote_ident(relname) AS name
      FROM pg_catalog.pg_stat_user_tables
      WHERE schemaname IN (${sql.join(SCHEMAS)})
      ORDER BY schemaname, relname`.execute(this.db);
    const all = rows.rows.map((r) => r.name);
    // The tables the last run did not reach go first, then the others in order.
    const queue = [...this.backlog.filter((t) => all.includes(t)), ...all.filter((t) => !this.backlog.includes(t))];
    let done = 0;
    while (queue.length && !this.stopped) {
      if (done > 0 && Date.now() - began > this.budgetMs) break;
      const table = queue.shift()!;
      // The name comes from the catalog, quoted by quote_ident.
      await sql.raw(`VACUUM (ANALYZE) ${table}`).execute(this.db);
      done++;
    }
    this.backlog = queue;
    const run = { tables: done, deferred: queue.length, ms: Date.now() - began };
    if (!queue.length) await this.recordRun();
    this.log.info(
      run,
      queue.length
        ? 'database maintenance: VACUUM (ANALYZE) ran out of time; the other tables follow within the hour'
        : 'database maintenance: VACUUM (ANALYZE) of every table done',
    );
    return run;
  }

  private async lastRun(): Promise<number | undefined> {
    const row = await this.db.selectFrom('settings').select('value').where('key', '=', LAST_RUN_KEY).executeTakeFirst();
    const at = row ? Date.parse(row.value) : NaN;
    return Number.isFinite(at) ? at : undefined;
  }

  private async recordRun(): Promise<void> {
    const value = new Date().toISOString();
    await this.db
      .insertInto('settings')
      .values({ key: LAST_RUN_KEY, value })
      .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
      .execute();
  }
}
