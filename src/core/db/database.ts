/**
 * One schema, two engines: PGlite (embedded PostgreSQL in WebAssembly, files in DATA_DIR) by
 * default, and a real PostgreSQL server when DATABASE_URL is set. Both speak the same SQL, so the
 * code and the migrations are shared; see docs/decisions.md "Storage".
 */
import fs from 'node:fs';
import path from 'node:path';
import { Kysely, PostgresDialect } from 'kysely';
import { PGlite } from '@electric-sql/pglite';
import { PGliteDialect } from 'kysely-pglite-dialect';
import pg from 'pg';
import type { Database } from './schema.js';
import { migrateToLatest } from './migrate.js';
import { DataDirLock } from './lock.js';
import { PGLITE_START_PARAMS } from './pglite-settings.js';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

// BIGINT (int8) comes back from node-postgres as a string; our counters fit in a JS number.
pg.types.setTypeParser(20, (v) => Number(v));
pg.types.setTypeParser(1700, (v) => Number(v));

export type Db = Kysely<Database>;

export interface OpenedDatabase {
  db: Db;
  engine: 'pglite' | 'postgres';
  /** Raw PostgreSQL connection settings for pg-boss (which takes its own pool) when on a server. */
  connectionString?: string;
  pglite?: PGlite;
  close(): Promise<void>;
}

export interface OpenOptions {
  databaseUrl?: string;
  /** Folder for the embedded database; `memory://` keeps it in memory (tests). */
  dataDir?: string;
  /** Take DATA_DIR's lock so no second process opens the embedded files (default true). */
  lock?: boolean;
  migrate?: boolean;
  /** For `memory://`: start from a dumped data folder (tests reuse one migrated database). */
  loadDataDir?: Blob | File;
}

export async function openDatabase(options: OpenOptions): Promise<OpenedDatabase> {
  if (options.databaseUrl) {
    const pool = new pg.Pool({ connectionString: options.databaseUrl, max: 10 });
    // An idle pooled connection that the server ends (restart, failover, pg_terminate_backend,
    // a proxy's idle timeout) is reported as an 'error' event on the pool; unhandled, it would
    // crash the process. The pool drops that client and opens a new one on the next query.
    pool.on('error', (error) => {
      process.stderr.write(
        JSON.stringify({
          level: 40,
          time: Date.now(),
          pid: process.pid,
          msg: 'PostgreSQL closed an idle connection; the pool replaces it',
          err: { message: error.message, code: (error as { code?: string }).code },
        }) + '\n',
      );
    });
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    if (options.migrate !== false) await migrateToLatest(db);
    return {
      db,
      engine: 'postgres',
      connectionString: options.databaseUrl,
      close: () => db.destroy(),
    };
  }

  const dataDir = options.dataDir ?? './data';
  let lock: DataDirLock | undefined;
  let pglite: PGlite;
  const startParams = [...PGLITE_START_PARAMS];
  if (dataDir === 'memory://') {
    pglite = new PGlite({ startParams, ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}) });
  } else {
    fs.mkdirSync(dataDir, { recursive: true });
    if (options.lock !== false) lock = DataDirLock.acquire(dataDir);
    const pgdata = path.join(dataDir, 'pgdata');
    try {
      if (!fs.existsSync(path.join(pgdata, 'PG_VERSION'))) await createDataFolder(pgdata, startParams);
    } catch (error) {
      lock?.release();
      throw error;
    }
    pglite = new PGlite(pgdata, { startParams });
  }
  await pglite.waitReady;
  const db = new Kysely<Database>({ dialect: new PGliteDialect(pglite) });
  if (options.migrate !== false) await migrateToLatest(db);
  return {
    db,
    engine: 'pglite',
    pglite,
    close: async () => {
      await db.destroy();
      if (!pglite.closed) await pglite.close();
      lock?.release();
    },
  };
}

/**
 * A new data folder is made in a child process (initdb-child.mjs says why: the memory PGlite's
 * initdb step keeps would otherwise stay with the server for good). Its error output is kept
 * for the error message.
 */
function createDataFolder(pgdata: string, startParams: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const script = fileURLToPath(new URL('./initdb-child.mjs', import.meta.url));
    const child = spawn(process.execPath, [script, pgdata, JSON.stringify(startParams)], { stdio: ['ignore', 'ignore', 'pipe'] });
    let errors = '';
    child.stderr.setEncoding('utf8').on('data', (text: string) => (errors = (errors + text).slice(-2000)));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`creating the embedded database in ${pgdata} failed (exit ${code}): ${errors.trim()}`)),
    );
  });
}
