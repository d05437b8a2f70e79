/**
 * contract.md "Set-up": the first start on an empty database creates account `default` (paid,
 * 100.00) and prints one API key with all four permissions, once; a restart prints no key and
 * keeps everything. Run as an operator would: `node bin/presence.js serve` in a child process.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { bannerKeys, cleanup, freePort, freshPostgres, runCli, singleJson, startServer, tempDataDir } from './support/process.js';

after(cleanup);

const engines = [
  { name: 'embedded database', skip: false as string | false, env: async () => ({}) as Record<string, string> },
  {
    name: 'PostgreSQL (DATABASE_URL)',
    skip: process.env.TEST_DATABASE_URL ? (false as const) : 'TEST_DATABASE_URL is not set',
    env: async () => ({ DATABASE_URL: await freshPostgres() }) as Record<string, string>,
  },
];

for (const engine of engines) {
  describe(`first start and restart [${engine.name}]`, { skip: engine.skip }, () => {
    test('prints one key for account "default" once; a restart prints none and keeps the data', async () => {
      const dataDir = tempDataDir('first');
      const env = { ...(await engine.env()), DATA_DIR: dataDir, PORT: String(await freePort()) };

      const first = await startServer(env);
      const keys = bannerKeys(first);
      assert.equal(keys.length, 1, `exactly one key on first start, output was:\n${first.stdout()}\n${first.stderr()}`);
      const [key] = keys;
      assert.match(key, /^sk_live_[A-Za-z0-9_-]{16,}$/);
      assert.match(first.stdout(), /shown once/, 'the key is introduced as shown once');

      // The account: default, paid, 100.00 (`accounts set --id` with no change answers it as it is).
      const account = singleJson(await runCli(['accounts', 'set', '--id', '1'], env));
      assert.equal(account.id, 1);
      assert.equal(account.name, 'default');
      assert.equal(account.plan, 'paid');
      assert.equal(account.balance, '100.00');

      // The key works against the HTTP API, with all four permissions.
      const listed = await first.request('GET', '/v1/agent/list', { key });
      assert.equal(listed.status, 200, JSON.stringify(listed.body));
      assert.deepEqual(listed.body, []);
      const created = await first.request('POST', '/v1/agent/create', { key, body: { name: 'Ada' } });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      const agentId = created.body.id;
      const scratch = await first.request('POST', '/v1/agent/create', { key, body: { name: 'Scratch' } });
      assert.equal(scratch.status, 200, JSON.stringify(scratch.body));
      const deleted = await first.request('DELETE', `/v1/agent/${scratch.body.id}?confirm=true`, { key });
      assert.ok(deleted.status === 204 || deleted.status === 200, `delete permission: ${deleted.status} ${JSON.stringify(deleted.body)}`);
      const sessions = await first.request('GET', '/v1/sessions', { key });
      assert.notEqual(sessions.status, 401);
      assert.notEqual(sessions.status, 403, 'the first key has the sessions permission');
      const unknown = await first.request('GET', '/v1/agent/list', { key: key.slice(0, -2) + (key.endsWith('AA') ? 'BB' : 'AA') });
      assert.equal(unknown.status, 401);

      const stopped = await first.stop();
      assert.equal(stopped.code, 0, `exit after SIGTERM\n${first.stderr()}`);

      const second = await startServer(env);
      try {
        assert.deepEqual(bannerKeys(second), [], `no key on restart, output was:\n${second.stdout()}`);
        const again = await second.request('GET', `/v1/agent/${agentId}`, { key });
        assert.equal(again.status, 200, 'the first key still works');
        assert.equal(again.body.name, 'Ada');
        const list = await second.request('GET', '/v1/agent/list', { key });
        assert.deepEqual(
          list.body.map((a: any) => a.name),
          ['Ada'],
        );
        const same = singleJson(await runCli(['accounts', 'set', '--id', '1'], env));
        assert.equal(same.balance, '100.00');
        assert.equal(same.name, 'default');
      } finally {
        assert.equal((await second.stop()).code, 0);
      }
    });
  });
}
