/**
 * Testing one migration on data written before it: a database migrated up to just before it, the
 * old rows the test writes, then the migration itself, on both engines.
 */
import { describe, test } from 'node:test';
import { Migrator, type Kysely } from 'kysely';
import { openDatabase, type OpenedDatabase } from '../../src/core/db/database.js';
import { migrations } from '../../src/core/db/migrations/index.js';
import { freshPostgres, tempDataDir } from '../cli/support/process.js';

/** Every migration before `migration` (by name, which orders them), as a database from before it was. */
export async function migrateBefore(db: Kysely<any>, migration: string): Promise<void> {
  const earlier = Object.fromEntries(Object.entries(migrations).filter(([name]) => name < migration));
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => earlier },
    migrationTableName: 'schema_migrations',
    migrationLockTableName: 'schema_migrations_lock',
    allowUnorderedMigrations: true,
  });
  const { error } = await migrator.migrateToLatest();
  if (error) throw error;
}

/** `check` on a fresh embedded database and, with TEST_DATABASE_URL, a fresh PostgreSQL one (opened unmigrated). */
export function describeMigration(migration: string, what: string, check: (open: (migrate: boolean) => Promise<OpenedDatabase>) => Promise<void>) {
  describe(`migration ${migration}`, () => {
    test(`embedded database: ${what}`, async () => {
      const dataDir = tempDataDir(migration);
      await check((migrate) => openDatabase({ dataDir, migrate }));
    });

    test('PostgreSQL: the same', { skip: process.env.TEST_DATABASE_URL ? false : 'TEST_DATABASE_URL is not set' }, async () => {
      const databaseUrl = await freshPostgres();
      await check((migrate) => openDatabase({ databaseUrl, migrate }));
    });
  });
}
