/**
 * On PostgreSQL the server survives its idle connections being ended by the database (a restart,
 * a failover, pg_terminate_backend, a proxy's idle timeout): it logs a warning and reconnects.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { bannerKeys, cleanup, freshPostgres, startServer, tempDataDir } from '../cli/support/process.js';

after(cleanup);

describe('PostgreSQL connections ended by the server', { skip: process.env.TEST_DATABASE_URL ? false : 'TEST_DATABASE_URL is not set' }, () => {
  test('the process keeps running and answers on fresh connections', async () => {
    const databaseUrl = await freshPostgres();
    const server = await startServer({ DATABASE_URL: databaseUrl, DATA_DIR: tempDataDir('pgconn') });
    const [key] = bannerKeys(server);
    try {
      // Several pooled connections, then idle.
      await Promise.all(Array.from({ length: 6 }, () => server.request('GET', '/v1/agent/list', { key })));
      await server.waitForReady();

      const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
      await admin.connect();
      const name = new URL(databaseUrl).pathname.slice(1);
      const { rows } = await admin.query('select pg_terminate_backend(pid) as ended from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [
        name,
      ]);
      await admin.end();
      assert.ok(rows.length > 0, 'the server held connections to terminate');

      await new Promise((r) => setTimeout(r, 500));
      assert.equal(server.child.exitCode, null, `the server is still running\n${server.stderr()}`);
      const ready = await server.request('GET', '/readyz');
      assert.equal(ready.status, 200, JSON.stringify(ready.body));
      const list = await server.request('GET', '/v1/agent/list', { key });
      assert.equal(list.status, 200);
      assert.match(server.stderr() + server.stdout(), /closed an idle connection/);
    } finally {
      assert.equal((await server.stop()).code, 0);
    }
  });
});
