/**
 * Migrations: run at every start, idempotent (a restart applies nothing twice and keeps the data),
 * and the same migrations give the same schema on the embedded database and on PostgreSQL.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { openDatabase, type OpenedDatabase } from '../../src/core/db/database.js';
import { migrateToLatest } from '../../src/core/db/migrate.js';
import { migrations } from '../../src/core/db/migrations/index.js';
import { cleanup, freshPostgres, tempDataDir } from '../cli/support/process.js';

after(cleanup);

const expected = Object.keys(migrations).sort();

async function applied(database: OpenedDatabase): Promise<Array<{ name: string; timestamp: string }>> {
  const { rows } = await sql<{ name: string; timestamp: unknown }>`select name, timestamp from schema_migrations order by name`.execute(database.db);
  return rows.map((r) => ({ name: r.name, timestamp: String(r.timestamp) }));
}

/** Every column of every table in the public schema, with its type, nullability and default. */
async function schemaOf(database: OpenedDatabase): Promise<string[]> {
  const { rows } = await sql<{ table_name: string; column_name: string; data_type: string; is_nullable: string; column_default: string | null }>`
    select table_name, column_name, data_type, is_nullable, column_default
    from information_schema.columns where table_schema = 'public' order by table_name, column_name`.execute(database.db);
  return rows.map((r) => `${r.table_name}.${r.column_name} ${r.data_type} ${r.is_nullable === 'YES' ? 'null' : 'not null'} ${r.column_default ?? ''}`.trim());
}

async function indexesOf(database: OpenedDatabase): Promise<string[]> {
  const { rows } = await sql<{ indexdef: string }>`select indexdef from pg_indexes where schemaname = 'public' order by indexname`.execute(database.db);
  return rows.map((r) => r.indexdef);
}

/** Opens, migrates, writes a row, closes; opens again and checks nothing ran twice. */
async function idempotent(open: () => Promise<OpenedDatabase>) {
  const first = await open();
  const before = await applied(first);
  assert.deepEqual(
    before.map((m) => m.name),
    expected,
    'every migration applied once',
  );
  const account = await first.db.insertInto('accounts').values({ name: 'kept', plan: 'free', balance_cents: 1234 }).returning('id').executeTakeFirstOrThrow();
  await migrateToLatest(first.db); // a second run in the same process is a no-op
  assert.deepEqual(await applied(first), before);
  const schema = await schemaOf(first);
  const indexes = await indexesOf(first);
  await first.close();

  const second = await open();
  try {
    assert.deepEqual(await applied(second), before, 'a restart applies nothing again');
    assert.deepEqual(await schemaOf(second), schema);
    assert.deepEqual(await indexesOf(second), indexes);
    const row = await second.db.selectFrom('accounts').select(['name', 'balance_cents']).where('id', '=', account.id).executeTakeFirst();
    assert.deepEqual(row, { name: 'kept', balance_cents: 1234 }, 'data survives the restart');
  } finally {
    await second.close();
  }
  return { schema, indexes };
}

describe('migrations', () => {
  let embedded: { schema: string[]; indexes: string[] } | undefined;

  test('embedded database (DATA_DIR): idempotent across restarts', async () => {
    const dataDir = tempDataDir('migrate');
    embedded = await idempotent(() => openDatabase({ dataDir }));
  });

  test('PostgreSQL (DATABASE_URL): idempotent across restarts, same schema as embedded', {
    skip: process.env.TEST_DATABASE_URL ? false : 'TEST_DATABASE_URL is not set',
  }, async () => {
    const databaseUrl = await freshPostgres();
    const onServer = await idempotent(() => openDatabase({ databaseUrl }));
    if (!embedded) embedded = await idempotent(() => openDatabase({ dataDir: tempDataDir('migrate') }));
    assert.deepEqual(onServer.schema, embedded.schema, 'same columns, types, nullability and defaults');
    assert.deepEqual(onServer.indexes, embedded.indexes, 'same indexes');
  });

  test('two processes starting at once on PostgreSQL do not run a migration twice', {
    skip: process.env.TEST_DATABASE_URL ? false : 'TEST_DATABASE_URL is not set',
  }, async () => {
    const databaseUrl = await freshPostgres();
    const opened = await Promise.all([openDatabase({ databaseUrl }), openDatabase({ databaseUrl }), openDatabase({ databaseUrl })]);
    try {
      assert.deepEqual(
        (await applied(opened[0])).map((m) => m.name),
        expected,
      );
    } finally {
      await Promise.all(opened.map((d) => d.close()));
    }
  });
});
