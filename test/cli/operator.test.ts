/**
 * contract.md "Operator command line": `accounts create`, `accounts set`, `keys create` print one
 * JSON object on stdout and nothing else there; errors go to stderr with a non-zero exit. Each runs
 * both while the server is up (embedded: through its loopback admin endpoint, so the server sees
 * the change at once) and with no server (the CLI opens the database itself).
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { cleanup, freePort, freshPostgres, runCli, singleJson, startServer, migratedDataDir, tempDataDir, type ServerProcess } from './support/process.js';

after(cleanup);

type Env = Record<string, string>;

const engines = [
  { name: 'embedded database', skip: false as string | false, env: async () => ({}) as Env },
  {
    name: 'PostgreSQL (DATABASE_URL)',
    skip: process.env.TEST_DATABASE_URL ? (false as const) : 'TEST_DATABASE_URL is not set',
    env: async () => ({ DATABASE_URL: await freshPostgres() }) as Env,
  },
];

/** What the key from `keys create --permissions read,setup` may and may not do. */
async function checkReadSetupKey(server: ServerProcess, key: string): Promise<void> {
  const list = await server.request('GET', '/v1/agent/list', { key });
  assert.equal(list.status, 200, `read: ${JSON.stringify(list.body)}`);
  const created = await server.request('POST', '/v1/agent/create', { key, body: { name: 'Operator-made' } });
  assert.equal(created.status, 200, `setup: ${JSON.stringify(created.body)}`);
  const got = await server.request('GET', `/v1/agent/${created.body.id}`, { key });
  assert.equal(got.status, 200);
  const deleted = await server.request('DELETE', `/v1/agent/${created.body.id}?confirm=true`, { key });
  assert.equal(deleted.status, 403, 'no delete permission');
  assert.equal(deleted.body.detail.code, 'missing_permission');
  const sessions = await server.request('GET', '/v1/sessions', { key });
  assert.equal(sessions.status, 403, 'no sessions permission');
  assert.equal(sessions.body.detail.code, 'missing_permission');
}

/** Runs the three commands, checks their exact output, and returns what they made. */
async function operatorCommands(env: Env) {
  const created = singleJson(await runCli(['accounts', 'create', '--name', 'Acme Ltd', '--plan', 'free', '--balance', '25.00'], env));
  assert.equal(typeof created.id, 'number');
  assert.equal(created.name, 'Acme Ltd');
  assert.equal(created.plan, 'free');
  assert.equal(created.balance, '25.00');

  const updated = singleJson(await runCli(['accounts', 'set', '--id', String(created.id), '--plan', 'paid', '--balance', '3.5'], env));
  assert.equal(updated.id, created.id);
  assert.equal(updated.name, 'Acme Ltd');
  assert.equal(updated.plan, 'paid');
  assert.equal(updated.balance, '3.50');

  const defaultBalance = singleJson(await runCli(['accounts', 'create', '--name', 'Zero', '--plan', 'paid'], env));
  assert.equal(defaultBalance.balance, '0.00');

  const keyRun = await runCli(['keys', 'create', '--account', String(created.id), '--permissions', 'read,setup'], env);
  const key = singleJson(keyRun);
  assert.deepEqual(Object.keys(key).sort(), ['account_id', 'key', 'permissions']);
  assert.match(key.key, /^sk_live_[A-Za-z0-9_-]{16,}$/);
  assert.deepEqual(key.permissions, ['read', 'setup']);
  assert.equal(key.account_id, created.id);
  // Exactly the documented line, field order included.
  assert.equal(keyRun.stdout, `${JSON.stringify({ key: key.key, permissions: ['read', 'setup'], account_id: created.id })}\n`);
  return { accountId: created.id as number, key: key.key as string };
}

async function expectFailure(args: string[], env: Env, stderrPattern: RegExp): Promise<void> {
  const result = await runCli(args, env);
  assert.notEqual(result.code, 0, `presence ${args.join(' ')} must fail`);
  assert.equal(result.stdout, '', `nothing on stdout for presence ${args.join(' ')}`);
  assert.match(result.stderr, stderrPattern, `stderr of presence ${args.join(' ')}`);
  assert.doesNotMatch(result.stderr, /\n\s+at /, 'no stack trace');
}

async function operatorErrors(env: Env, accountId: number): Promise<void> {
  await expectFailure(['frobnicate'], env, /unknown command/);
  await expectFailure(['accounts', 'delete', '--id', '1'], env, /unknown command/);
  await expectFailure(['accounts', 'create', '--name', 'X', '--plan', 'gold'], env, /plan/);
  await expectFailure(['accounts', 'create', '--plan', 'free'], env, /--name/);
  await expectFailure(['accounts', 'create', '--name', 'X', '--plan', 'free', '--balance', 'lots'], env, /balance/);
  await expectFailure(['accounts', 'create', '--name', 'X', '--plan', 'free', '--colour', 'red'], env, /colour/);
  await expectFailure(['accounts', 'set', '--id', '999999', '--plan', 'paid'], env, /999999|not found/);
  await expectFailure(['accounts', 'set', '--id', 'abc'], env, /--id/);
  await expectFailure(['keys', 'create', '--account', '999999', '--permissions', 'read'], env, /999999|not found/);
  await expectFailure(['keys', 'create', '--account', String(accountId), '--permissions', 'read,fly'], env, /permission|fly/);
  await expectFailure(['keys', 'create', '--account', String(accountId)], env, /--permissions/);
}

for (const engine of engines) {
  describe(`operator CLI [${engine.name}]`, { skip: engine.skip }, () => {
    test('while the server runs: the server sees every change at once', async () => {
      const env: Env = { ...(await engine.env()), DATA_DIR: await migratedDataDir('op-live'), PORT: String(await freePort()) };
      const server = await startServer(env);
      try {
        const { accountId, key } = await operatorCommands(env);
        await checkReadSetupKey(server, key);

        // A key with every permission on the same account works too, at once.
        const full = singleJson(await runCli(['keys', 'create', '--account', String(accountId), '--permissions', 'delete, sessions,read,setup'], env));
        assert.deepEqual(full.permissions, ['read', 'setup', 'sessions', 'delete'], 'permissions in their canonical order');
        const sessions = await server.request('GET', '/v1/sessions', { key: full.key });
        assert.notEqual(sessions.status, 403);
        assert.notEqual(sessions.status, 401);

        await operatorErrors(env, accountId);

        if (!env.DATABASE_URL) {
          // The commands went through the server's loopback admin endpoint, not around it.
          const adminCalls = server.logs().filter((l) => l.req?.url === '/internal/admin');
          assert.ok(adminCalls.length >= 4, `admin endpoint used (${adminCalls.length} calls logged)`);
        }
        assert.equal((await server.request('GET', '/healthz')).status, 200, 'the server is unharmed');
      } finally {
        assert.equal((await server.stop()).code, 0);
      }
    });

    test('with no server: the CLI opens the database itself; a server started later sees it', async () => {
      const env: Env = { ...(await engine.env()), DATA_DIR: await migratedDataDir('op-offline'), PORT: String(await freePort()) };
      const { accountId, key } = await operatorCommands(env);
      await operatorErrors(env, accountId);
      assert.ok(!fs.existsSync(path.join(env.DATA_DIR, 'presence.lock')), 'the CLI released DATA_DIR');

      const server = await startServer(env);
      try {
        await checkReadSetupKey(server, key);
        const again = singleJson(await runCli(['accounts', 'set', '--id', String(accountId)], env));
        assert.equal(again.balance, '3.50');
        assert.equal(again.plan, 'paid');
      } finally {
        assert.equal((await server.stop()).code, 0);
      }
    });
  });
}

describe('DATA_DIR ownership and the admin endpoint [embedded database]', () => {
  test('a second serve on a DATA_DIR in use refuses with a clear message', async () => {
    const server = await startServer({ DATA_DIR: await migratedDataDir('lock') });
    try {
      await server.waitForReady();
      const second = await runCli(['serve'], { DATA_DIR: server.dataDir, PORT: String(await freePort()) }, 60_000);
      assert.notEqual(second.code, 0);
      assert.match(second.stderr, new RegExp(`DATA_DIR is in use by process ${server.child.pid}`));
      assert.doesNotMatch(second.stderr, /\n\s+at /, 'one clear line, no stack trace');
      assert.doesNotMatch(second.stdout, /sk_live_/);
      assert.equal((await server.request('GET', '/readyz')).status, 200, 'the first server keeps running');
    } finally {
      assert.equal((await server.stop()).code, 0);
    }
    assert.ok(!fs.existsSync(path.join(server.dataDir, 'presence.lock')), 'lock released on shutdown');
    assert.ok(!fs.existsSync(path.join(server.dataDir, 'admin.json')), 'admin.json removed on shutdown');
  });

  test('the admin endpoint refuses a missing or wrong token and answers the right one', async () => {
    const server = await startServer({ DATA_DIR: await migratedDataDir('admin') });
    try {
      const admin = JSON.parse(fs.readFileSync(path.join(server.dataDir, 'admin.json'), 'utf8'));
      assert.equal(admin.pid, server.child.pid);
      assert.equal(fs.statSync(path.join(server.dataDir, 'admin.json')).mode & 0o077, 0, 'admin.json is private to its owner');
      const body = { command: 'accounts.create', args: { name: 'intruder', plan: 'paid', balance: '1000000.00' } };
      const wrong = admin.token.slice(0, -1) + (admin.token.endsWith('A') ? 'B' : 'A');
      const attempts: Array<Record<string, string>> = [{}, { 'x-admin-token': wrong }, { 'x-admin-token': '' }, { authorization: `Bearer ${admin.token}` }];
      for (const headers of attempts) {
        const response = await server.request('POST', '/internal/admin', { body, headers });
        assert.equal(response.status, 404, `refused with ${JSON.stringify(Object.keys(headers))}`);
      }
      const right = await server.request('POST', '/internal/admin', {
        body: { command: 'accounts.set', args: { id: 1 } },
        headers: { 'x-admin-token': admin.token },
      });
      assert.equal(right.status, 200);
      assert.equal(right.body.name, 'default');
      // None of the refused calls made an account: the next one made is number 2.
      const next = singleJson(await runCli(['accounts', 'create', '--name', 'next', '--plan', 'free'], { DATA_DIR: server.dataDir }));
      assert.equal(next.id, 2);
    } finally {
      assert.equal((await server.stop()).code, 0);
    }
  });

  test('a stale admin.json from a killed server is ignored', async () => {
    const server = await startServer({ DATA_DIR: await migratedDataDir('stale') });
    server.child.kill('SIGKILL');
    await server.exited;
    assert.ok(fs.existsSync(path.join(server.dataDir, 'admin.json')), 'a killed server leaves admin.json behind');
    const created = singleJson(await runCli(['accounts', 'create', '--name', 'after-crash', '--plan', 'free'], { DATA_DIR: server.dataDir }));
    assert.equal(created.name, 'after-crash');
  });
});
