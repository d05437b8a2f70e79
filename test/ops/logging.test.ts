/**
 * Logs of the real server process: structured JSON, the request id on request lines, and no
 * secrets. The API key is printed once by the first-start banner and must appear nowhere else.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { until } from '../support/until.js';
import { bannerKeys, cleanup, runCli, singleJson, startServer, migratedDataDir, type ServerProcess } from '../cli/support/process.js';

after(cleanup);

describe('structured logs [embedded database]', () => {
  let server: ServerProcess;
  let key: string;

  before(async () => {
    // debug level: the most a log could say about a request.
    server = await startServer({ DATA_DIR: await migratedDataDir('logs'), LOG_LEVEL: 'debug' });
    [key] = bannerKeys(server);
    assert.ok(key, 'first start printed a key');
  });
  after(async () => {
    if (server) assert.equal((await server.stop()).code, 0);
  });

  test('every log line is one JSON object with level, time and msg', async () => {
    await server.request('GET', '/healthz');
    const lines = (server.stdout() + server.stderr()).split('\n').filter((l) => l.trim() !== '');
    const banner = lines.filter((l) => !l.startsWith('{'));
    // Only the first-start banner is not JSON: the key and the console's sign-in link.
    assert.ok(banner.length <= 4, `non-JSON lines: ${JSON.stringify(banner)}`);
    for (const line of banner) assert.ok(/Presence API key|sk_live_|Open the console|\/console\/login\?token=/.test(line), `unexpected non-JSON line: ${line}`);
    for (const line of lines.filter((l) => l.startsWith('{'))) {
      const entry = JSON.parse(line);
      assert.equal(typeof entry.level, 'number');
      assert.equal(typeof entry.time, 'number');
      assert.equal(typeof entry.msg, 'string');
    }
    const listening = server.logs().find((l) => l.msg === 'Presence is listening');
    assert.equal(listening?.database, 'pglite');
  });

  test('request lines carry the request id that the response header names', async () => {
    const own = await server.request('GET', '/v1/agent/list', { key });
    const ownId = own.headers.get('x-request-id');
    assert.ok(ownId);
    const echoed = await server.request('GET', '/v1/agent/list', { key, headers: { 'X-Request-Id': 'ops-trace-7' } });
    assert.equal(echoed.headers.get('x-request-id'), 'ops-trace-7');
    // The lines come through the child's stdout: wait for them, not for a guess of how long that takes.
    const completedFor = (id: string) => server.logs().some((l) => l.reqId === id && l.msg === 'request completed');
    await until(() => completedFor(ownId) && completedFor('ops-trace-7'), 10_000, 'both requests logged');

    for (const id of [ownId, 'ops-trace-7']) {
      const lines = server.logs().filter((l) => l.reqId === id);
      const incoming = lines.find((l) => l.msg === 'incoming request');
      const completed = lines.find((l) => l.msg === 'request completed');
      assert.ok(incoming, `an "incoming request" line for ${id}`);
      assert.equal(incoming.req.method, 'GET');
      assert.equal(incoming.req.url, '/v1/agent/list');
      assert.ok(completed, `a "request completed" line for ${id}`);
      assert.equal(completed.res.statusCode, 200);
      assert.equal(typeof completed.responseTime, 'number');
    }
    // Every request line has one.
    for (const line of server.logs().filter((l) => l.req || l.res)) assert.ok(line.reqId, `reqId on ${JSON.stringify(line)}`);
  });

  test('no secret reaches the logs', async () => {
    const admin = JSON.parse(fs.readFileSync(path.join(server.dataDir, 'admin.json'), 'utf8'));
    // Calls with the key in the header, a wrong key, keys in the query, an error path, and a
    // CLI command through the admin endpoint that mints another key.
    const made = await server.request('POST', '/v1/agent/create', { key, body: { name: 'Logged' } });
    assert.equal(made.status, 200);
    await server.request('GET', `/v1/agent/${made.body.id}`, { key });
    await server.request('PATCH', `/v1/agent/${made.body.id}`, { key, body: { concurrency_limit: 'many' } });
    const wrongKey = 'sk_live_' + 'W'.repeat(43);
    assert.equal((await server.request('GET', '/v1/agent/list', { key: wrongKey })).status, 401);
    await server.request('GET', `/v1/agent/list?api_key=${key}&token=${key}`, { key });
    await server.request('GET', '/v1/agent/list', { headers: { authorization: `Basic ${Buffer.from(`user:${key}`).toString('base64')}` } });
    await server.request('GET', '/v1/agent/list', { headers: { authorization: `Bearer ${key}x` } });
    const minted = singleJson(await runCli(['keys', 'create', '--account', '1', '--permissions', 'read'], { DATA_DIR: server.dataDir }));
    assert.equal((await server.request('GET', '/v1/agent/list', { key: minted.key, headers: { 'X-Request-Id': 'secrets-last' } })).status, 200);
    // Everything above is logged once the last request's line is (one stdout, in order).
    await until(() => server.logs().some((l) => l.reqId === 'secrets-last' && l.msg === 'request completed'), 10_000, 'the last request logged');

    const output = server.stdout() + server.stderr();
    const bannerStart = output.indexOf('Presence API key');
    assert.ok(bannerStart >= 0, 'the banner was printed');
    const bannerEnd = output.indexOf(key, bannerStart) + key.length;
    const withoutBanner = output.slice(0, bannerStart) + output.slice(bannerEnd);

    assert.ok(server.logs().length > 20, 'the calls were logged');
    assert.equal(withoutBanner.includes('sk_live_'), false, 'no sk_live_ outside the banner');
    for (const [what, secret] of [
      ['first key', key],
      ['minted key', minted.key],
      ['admin token', admin.token],
      ['key body (no prefix)', key.slice('sk_live_'.length)],
      ['wrong key', wrongKey],
    ]) {
      assert.equal(withoutBanner.includes(secret), false, `the ${what} is not logged`);
    }
    assert.equal(output.split(key).length - 1, 1, 'the first key appears exactly once: in the banner');
  });
});
