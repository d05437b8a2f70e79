/**
 * Draining as an operator does it: `presence serve` gets SIGUSR2, then starts no new sessions and
 * /readyz says draining; SIGTERM still ends it cleanly. Runs on PostgreSQL (a fresh database of its
 * own), the engine several nodes share.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { assertCoded } from '../agents/helpers.js';
import { bannerKeys, cleanup, freshPostgres, startServer } from '../cli/support/process.js';

const skip = process.env.TEST_DATABASE_URL ? false : 'set TEST_DATABASE_URL to run the draining signal test on PostgreSQL';

describe('draining a node by signal [postgres]', { skip }, () => {
  after(cleanup);

  test('SIGUSR2 makes a running node refuse new sessions and report draining; SIGTERM then exits 0', async () => {
    const server = await startServer({ DATABASE_URL: await freshPostgres() });
    const [key] = bannerKeys(server);
    assert.ok(key, `a first-start key, output was:\n${server.stdout()}`);
    await server.waitForReady();
    const agent = await server.request('POST', '/v1/agent/create', { key, body: { name: 'Drain' } });
    assert.equal(agent.status, 200, JSON.stringify(agent.body));
    const live = await server.request('POST', '/v1/sessions', { key, body: { agent_id: agent.body.id } });
    assert.equal(live.status, 201, JSON.stringify(live.body));

    server.child.kill('SIGUSR2');
    let ready = await server.request('GET', '/readyz');
    for (let i = 0; i < 100 && ready.status === 200; i++) {
      await new Promise((r) => setTimeout(r, 50));
      ready = await server.request('GET', '/readyz');
    }
    assert.equal(ready.status, 503);
    assert.deepEqual(ready.body, { status: 'draining', live_sessions: 1 });
    const refused = await server.request('POST', '/v1/sessions', { key, body: { agent_id: agent.body.id } });
    assertCoded(refused, 503, 'no_capacity');

    const stopped = await server.stop();
    assert.equal(stopped.code, 0, server.stderr());
  });
});
