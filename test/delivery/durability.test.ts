/**
 * kill -9 in the middle of a schedule: a server process's first attempt fails and its retry is
 * scheduled; the process is killed while it waits; a new process on the same database makes the
 * delivery, with the same X-Service-Delivery id and a valid fresh signature. Both engines.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { ENGINES } from '../support/app.js';
import { createDatabase } from '../support/postgres.js';
import { openDatabase } from '../../src/core/db/database.js';
import { Jobs } from '../../src/core/jobs.js';
import { DeliveryEngine } from '../../src/delivery/engine.js';
import { signature } from '../../src/delivery/signing.js';
import { startReceiver } from './support/receiver.js';

const quiet = { info() {}, warn() {}, error() {} };

for (const engine of ENGINES) {
  const skip = engine === 'postgres' && !process.env.TEST_DATABASE_URL ? 'TEST_DATABASE_URL is not set' : false;
  test(`[${engine}] a delivery due while the server is killed (-9) is made after restart with the same delivery id`, { skip }, async () => {
    const receiver = await startReceiver([{ status: 503 }, { status: 200 }]);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'presence-delivery-'));
    const pg = engine === 'postgres' ? await createDatabase(process.env.TEST_DATABASE_URL!) : undefined;
    const where = pg ? pg.url : dir;
    try {
      const child = spawn(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, 'support/delivery-child.ts'), where, `${receiver.url}/hook`], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      const deliveryId = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          const m = /scheduled (\S+)/.exec(out);
          if (m) resolve(m[1]!);
        });
        child.on('exit', (code) => reject(new Error(`child exited ${code} before its retry was scheduled`)));
      });
      const exited = new Promise((resolve) => child.on('exit', resolve));
      child.kill('SIGKILL');
      await exited;
      const beforeKill = receiver.received.length;
      assert.ok(beforeKill <= 1, 'one attempt before the kill');

      // Second life: a fresh process (here, this one) on the same database.
      const database = await openDatabase(pg ? { databaseUrl: pg.url } : { dataDir: dir });
      const jobs = await Jobs.start(database, quiet);
      const deliveries = new DeliveryEngine(database.db, jobs, quiet, { retryDelays: [3, 3, 3, 3], timeoutSeconds: 8, allowPrivate: true });
      await deliveries.start();
      try {
        const got = await receiver.waitFor(2, 30_000);
        // (On a loaded machine the first attempt may have timed out before the receiver logged it.)
        for (const request of got) assert.equal(request.headers['x-service-delivery'], deliveryId);
        const last = got[got.length - 1]!;
        assert.equal(last.headers['x-service-signature'], signature('whsec_durable', Number(last.headers['x-service-timestamp']), last.body));
        let view;
        for (let i = 0; i < 100; i++) {
          [view] = await deliveries.list({ kind: 'test', id: 'rule-1' });
          if (view?.status === 'delivered') break;
          await new Promise((r) => setTimeout(r, 100));
        }
        assert.equal(view!.status, 'delivered');
        const log = JSON.stringify(view!.attempts);
        assert.equal(view!.attempts.at(-1)!.status_code, 200, `the attempt after the restart delivered it: ${log}`);
        assert.ok(
          view!.attempts.slice(0, -1).every((a) => a.status_code !== 200),
          log,
        );
        await new Promise((r) => setTimeout(r, 1000));
        assert.equal(receiver.received.filter((r) => r.headers['x-service-delivery'] === deliveryId).length, receiver.received.length);
        assert.equal(
          receiver.received.length,
          view!.attempts.filter((a) => a.status_code !== null).length,
          `every answered attempt reached the receiver: ${log}`,
        );
      } finally {
        deliveries.stop();
        await jobs.stop();
        await database.close();
      }
    } finally {
      await receiver.close();
      await pg?.drop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
}
