/**
 * Test harness: a real Presence server on 127.0.0.1 (random port) over a real database, either an
 * in-memory PGlite or a fresh PostgreSQL database made for the test file from TEST_DATABASE_URL.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe } from 'node:test';
import { createDatabase } from './postgres.js';
import { migratedDump } from './db-template.js';
import { jsonRequest } from './http.js';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../../src/core/config.js';
import { openDatabase, type OpenedDatabase } from '../../src/core/db/database.js';
import { buildApp, type AppContext, type BuildOptions } from '../../src/app.js';
import { PERMISSIONS, type Permission } from '../../src/core/auth.js';

export type Engine = 'pglite' | 'postgres';

export const ENGINES: Engine[] = ['pglite', 'postgres'];

/** Runs the suite once per database engine; PostgreSQL is skipped (and says so) without TEST_DATABASE_URL. */
export function forEachEngine(name: string, suite: (engine: Engine) => void): void {
  for (const engine of ENGINES) {
    const skip = engine === 'postgres' && !process.env.TEST_DATABASE_URL ? 'TEST_DATABASE_URL is not set' : false;
    describe(`${name} [${engine}]`, { skip }, () => suite(engine));
  }
}

// Every embedded test database starts from one migrated dump (made once per run: db-template.ts).
let template: Promise<Blob> | undefined;
function migratedTemplate(): Promise<Blob> {
  template ??= migratedDump();
  return template;
}

export interface TestApp {
  url: string;
  wsUrl: string;
  app: FastifyInstance;
  context: AppContext & import('../../src/app.js').BillingContext;
  database: OpenedDatabase;
  /** A key with all four permissions on a paid account with balance 100.00. */
  key: string;
  accountId: number;
  /** Makes an account and a key for it. */
  account(plan: 'free' | 'paid', options?: { balance?: string; permissions?: Permission[] }): Promise<{ id: number; key: string }>;
  keyFor(accountId: number, permissions: Permission[]): Promise<string>;
  request(
    method: string,
    path: string,
    options?: { key?: string | null; body?: unknown; headers?: Record<string, string> },
  ): Promise<{ status: number; body: any; headers: Headers }>;
  close(): Promise<void>;
}

/** A fresh, migrated database of the engine (PostgreSQL: a throwaway database, dropped by `drop`). */
export async function openTestDatabase(engine: Engine): Promise<{ database: OpenedDatabase; drop: () => Promise<void> }> {
  if (engine === 'postgres') {
    const created = await createDatabase(process.env.TEST_DATABASE_URL!);
    return { database: await openDatabase({ databaseUrl: created.url }), drop: created.drop };
  }
  return { database: await openDatabase({ dataDir: 'memory://', loadDataDir: await migratedTemplate() }), drop: async () => {} };
}

export async function startTestApp(
  engine: Engine,
  env: Record<string, string> = {},
  build: Partial<Pick<BuildOptions, 'speech' | 'speakerFor' | 'visitorInputs' | 'models'>> = {},
): Promise<TestApp> {
  const pgdb = engine === 'postgres' ? await createDatabase(process.env.TEST_DATABASE_URL!) : undefined;
  const database = await openDatabase(pgdb ? { databaseUrl: pgdb.url } : { dataDir: 'memory://', loadDataDir: await migratedTemplate() });
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'presence-test-'));
  // MODELS_DOWNLOAD=0: tests reach no model host (a test about fetching turns it on with its own server).
  const config = loadConfig({
    PUBLIC_URL: 'http://127.0.0.1:0',
    RATE_LIMIT_PER_SECOND: '100000',
    DATA_DIR: dataDir,
    MODELS_DOWNLOAD: '0',
    ...env,
  } as NodeJS.ProcessEnv);
  const { app, context } = await buildApp({ config, database, logger: false, ...build });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address() as { port: number };
  const url = `http://127.0.0.1:${address.port}`;
  // Links the service hands out must point at this test server.
  config.publicUrl = env.PUBLIC_URL ?? url;

  const main = await context.accounts.create({ name: 'test', plan: 'paid', balanceCents: 10_000 });
  const { key } = await context.accounts.createKey(main.id, [...PERMISSIONS]);

  const request: TestApp['request'] = (method, path, options = {}) =>
    jsonRequest(url, method, path, { ...options, key: options.key === undefined ? key : options.key });

  const keyFor = async (accountId: number, permissions: Permission[]) => (await context.accounts.createKey(accountId, permissions)).key;

  return {
    url,
    wsUrl: url.replace(/^http/, 'ws'),
    app,
    context,
    database,
    key,
    accountId: main.id,
    request,
    keyFor,
    async account(plan, options = {}) {
      const cents = options.balance ? Math.round(Number(options.balance) * 100) : plan === 'paid' ? 10_000 : 0;
      const account = await context.accounts.create({ name: `acct-${crypto.randomBytes(3).toString('hex')}`, plan, balanceCents: cents });
      return { id: account.id, key: await keyFor(account.id, options.permissions ?? [...PERMISSIONS]) };
    },
    async close() {
      await app.close();
      await database.close();
      await pgdb?.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
