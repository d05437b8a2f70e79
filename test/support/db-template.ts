/**
 * Migrated embedded databases made once per test run, not once per test process: PGlite's initdb
 * and the migrations cost about 7 s of CPU, and the suite starts over a hundred processes. Each is
 * kept in the system's temporary folder under a hash of what decides its content (the database
 * code with its migrations, and PGlite's version), so a change to either makes a new one.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from '../../src/core/db/database.js';

const ROOT = path.join(import.meta.dirname, '../..');

let key: string | undefined;
function templateKey(): string {
  if (key) return key;
  const hash = crypto.createHash('sha256');
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else hash.update(entry.name).update(fs.readFileSync(full));
    }
  };
  walk(path.join(ROOT, 'src/core/db'));
  hash.update(JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules/@electric-sql/pglite/package.json'), 'utf8')).version);
  key = hash.digest('hex').slice(0, 16);
  return key;
}

/** The dump of a migrated in-memory database (for `loadDataDir`). */
export async function migratedDump(): Promise<Blob> {
  const file = path.join(os.tmpdir(), `presence-test-db-${templateKey()}.tar`);
  try {
    return new Blob([await fs.promises.readFile(file)]);
  } catch {
    /* not made yet, or being made by another process right now: make it too */
  }
  const first = await openDatabase({ dataDir: 'memory://' });
  const dump = await first.pglite!.dumpDataDir('none');
  await first.close();
  // Write-then-rename: a process reading it never sees half a file.
  const partial = `${file}.${process.pid}.partial`;
  await fs.promises.writeFile(partial, Buffer.from(await dump.arrayBuffer()));
  await fs.promises.rename(partial, file);
  return dump;
}

/** A `pgdata` folder of a migrated on-disk database, to copy into a fresh DATA_DIR. */
export async function migratedPgdata(): Promise<string> {
  const dir = path.join(os.tmpdir(), `presence-test-datadir-${templateKey()}`);
  const pgdata = path.join(dir, 'pgdata');
  if (fs.existsSync(path.join(dir, 'complete'))) return pgdata;
  const partial = fs.mkdtempSync(`${dir}.partial-`);
  const opened = await openDatabase({ dataDir: partial });
  await opened.close();
  fs.writeFileSync(path.join(partial, 'complete'), '');
  try {
    fs.renameSync(partial, dir);
  } catch {
    // Another process finished first (or an unfinished one was left): use a complete one.
    if (!fs.existsSync(path.join(dir, 'complete'))) {
      fs.rmSync(dir, { recursive: true, force: true });
      fs.renameSync(partial, dir);
    } else fs.rmSync(partial, { recursive: true, force: true });
  }
  return pgdata;
}
