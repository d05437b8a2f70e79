/** Forward-only, versioned migrations, run at start on either engine. */
import { Migrator, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import { migrations } from './migrations/index.js';

class StaticMigrationProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    return migrations;
  }
}

export async function migrateToLatest(db: Kysely<any>): Promise<void> {
  const migrator = new Migrator({
    db,
    provider: new StaticMigrationProvider(),
    migrationTableName: 'schema_migrations',
    migrationLockTableName: 'schema_migrations_lock',
    // Migration numbers are reserved per feature and land in any order; a database that already has
    // a later one still takes an earlier number when it arrives (each touches its own tables).
    allowUnorderedMigrations: true,
  });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    throw new Error(`migration ${failed?.migrationName ?? ''} failed: ${(error as Error)?.message ?? error}`);
  }
}
