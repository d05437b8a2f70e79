/**
 * The embedded database's VACUUM (ANALYZE) schedule: it runs when due, gives dead rows' space
 * back and refreshes the planner's statistics, keeps within its time budget (the rest next time),
 * and remembers its last run across restarts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { openTestDatabase } from '../support/app.js';
import { DatabaseMaintenance } from '../../src/core/db/maintenance.js';
import type { Db } from '../../src/core/db/database.js';

function recorder() {
  const lines: Array<{ object: object; message: string }> = [];
  return {
    lines,
    info: (object: object, message: string) => lines.push({ object, message }),
    warn: (object: object, message: string) => lines.push({ object, message }),
  };
}

async function tableFacts(db: Db, table: string) {
  const { rows } = await sql<{ reltuples: number; dead: number; analysed: boolean }>`
    SELECT c.reltuples::float8 AS reltuples, s.n_dead_tup::int AS dead, (s.last_analyze IS NOT NULL) AS analysed
    FROM pg_class c JOIN pg_stat_user_tables s ON s.relid = c.oid WHERE c.relname = ${table}`.execute(db);
  return rows[0];
}

test('a due run vacuums and analyses every table, is logged, and is remembered', async () => {
  const { database } = await openTestDatabase('pglite');
  try {
    const db = database.db;
    await sql`CREATE TABLE scratch (id int PRIMARY KEY, body text)`.execute(db);
    await sql`INSERT INTO scratch SELECT g, repeat('x', 200) FROM generate_series(1, 5000) g`.execute(db);
    await sql`DELETE FROM scratch WHERE id % 2 = 0`.execute(db);
    // A backend hands its table counts to the statistics at most once a second: flushed after the
    // VACUUM, the DELETE's 2,500 dead rows would be counted again on top of its zero.
    await sql`SELECT pg_stat_force_next_flush()`.execute(db);
    const before = await tableFacts(db, 'scratch');
    assert.equal(before.dead, 2500, 'the deleted rows are counted dead');
    assert.equal(before.analysed, false);

    const log = recorder();
    const maintenance = new DatabaseMaintenance(db, log, { firstDelaySeconds: 0 });
    await maintenance.start();
    const until = Date.now() + 30_000;
    while (!log.lines.length && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    maintenance.stop();
    assert.equal(log.lines.length, 1, 'one run, logged');
    assert.match(log.lines[0].message, /VACUUM \(ANALYZE\) of every table done/);
    const run = log.lines[0].object as { tables: number; deferred: number; ms: number };
    const { rows: tables } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_user_tables WHERE schemaname IN ('public', 'pgboss')`.execute(db);
    assert.equal(run.tables, tables[0].n, 'every table of ours, pg-boss included');
    assert.equal(run.deferred, 0);

    const after = await tableFacts(db, 'scratch');
    assert.equal(after.analysed, true, 'statistics refreshed');
    assert.equal(after.reltuples, 2500, 'the planner knows the live row count');
    assert.equal(after.dead, 0, 'dead rows vacuumed');

    // A restart soon after finds the run recorded and waits a full period.
    const again = recorder();
    const next = new DatabaseMaintenance(db, again, { firstDelaySeconds: 0 });
    await next.start();
    await new Promise((r) => setTimeout(r, 500));
    next.stop();
    assert.equal(again.lines.length, 0, 'not run again right after a restart');
    const recorded = await db.selectFrom('settings').select('value').where('key', '=', 'db_maintenance_last_run').executeTakeFirstOrThrow();
    assert.ok(Math.abs(Date.parse(recorded.value) - Date.now()) < 60_000);
  } finally {
    await database.close();
  }
});

test('a run past its budget stops between tables; the next run starts with the tables left', async () => {
  const { database } = await openTestDatabase('pglite');
  try {
    const maintenance = new DatabaseMaintenance(database.db, recorder(), { budgetSeconds: 0 });
    const first = await maintenance.run();
    assert.equal(first.tables, 1, 'one table at least, then the budget stops it');
    assert.ok(first.deferred > 1);
    const second = await maintenance.run();
    assert.equal(second.tables, 1);
    assert.equal(second.deferred, first.deferred, 'the table done first goes to the back of the line');
    const row = await database.db.selectFrom('settings').select('value').where('key', '=', 'db_maintenance_last_run').executeTakeFirst();
    assert.equal(row, undefined, 'an unfinished run is not recorded as done');
    const [firstTable] = (
      await sql<{
        relname: string;
        analysed: boolean;
      }>`SELECT relname, (last_analyze IS NOT NULL) AS analysed FROM pg_stat_user_tables WHERE schemaname IN ('public', 'pgboss') AND last_analyze IS NOT NULL`.execute(
        database.db,
      )
    ).rows;
    assert.ok(firstTable, 'the tables it reached were analysed');
    const analysed = (
      await sql<{
        n: number;
      }>`SELECT count(*)::int AS n FROM pg_stat_user_tables WHERE schemaname IN ('public', 'pgboss') AND last_analyze IS NOT NULL`.execute(database.db)
    ).rows[0].n;
    assert.equal(analysed, 2, 'the second run took the next table, not the first again');
  } finally {
    await database.close();
  }
});
