/**
 * PGlite silently loses writes when two processes open one data folder, so exactly one process
 * owns DATA_DIR at a time. The lock file holds the owner's pid; a lock whose pid is gone is stale
 * and taken over.
 */
import fs from 'node:fs';
import path from 'node:path';

export class DataDirLockedError extends Error {
  constructor(
    readonly pid: number,
    readonly lockPath: string,
  ) {
    super(`DATA_DIR is in use by process ${pid} (${lockPath}); stop it or point DATA_DIR elsewhere`);
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The pid holding DATA_DIR, or undefined when nobody (alive) does. */
export function lockHolder(dataDir: string): number | undefined {
  try {
    const pid = Number(fs.readFileSync(path.join(dataDir, 'presence.lock'), 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 && processAlive(pid) ? pid : undefined;
  } catch {
    return undefined;
  }
}

export class DataDirLock {
  private constructor(private readonly lockPath: string) {}

  static acquire(dataDir: string): DataDirLock {
    const lockPath = path.join(dataDir, 'presence.lock');
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        fs.writeFileSync(lockPath, String(process.pid), { flag: 'wx' });
        return new DataDirLock(lockPath);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        const holder = lockHolder(dataDir);
        if (holder !== undefined && holder !== process.pid) throw new DataDirLockedError(holder, lockPath);
        fs.rmSync(lockPath, { force: true }); // stale: its process is gone
      }
    }
    throw new Error(`could not take ${lockPath}`);
  }

  release(): void {
    try {
      if (fs.readFileSync(this.lockPath, 'utf8').trim() === String(process.pid)) fs.rmSync(this.lockPath);
    } catch {
      /* already gone */
    }
  }
}
