/**
 * Issue 15, item 9: no secret reaches the log stream. A failing query is logged without its values
 * (a real database error, whose parameters held a visitor signing secret and an embed key), preview
 * links are masked, and a real server process at debug level, driven through every route that hands
 * out or takes a secret, logs none of them. A `read` key cannot see the visitor signing secret.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import pino from 'pino';
import { sql } from 'kysely';
import { openDatabase } from '../../src/core/db/database.js';
import { loggerOptions, maskUrl } from '../../src/core/logging.js';
import { migratedDump } from '../support/db-template.js';
import { bannerKeys, cleanup, runCli, singleJson, startServer, migratedDataDir, tempDataDir } from '../cli/support/process.js';
import { RenderClient } from '../support/render-client.js';

after(cleanup);

test('a failing query is logged with its SQL and without its values', async () => {
  const database = await openDatabase({ dataDir: 'memory://', loadDataDir: await migratedDump() });
  const lines: string[] = [];
  const logger = pino(
    loggerOptions('info') as pino.LoggerOptions,
    new Writable({
      write(chunk, _e, done) {
        lines.push(String(chunk));
        done();
      },
    }),
  );
  const secret = 'vsec_' + 'A'.repeat(43);
  const embedKey = 'pk_' + 'B'.repeat(24);
  try {
    // NUL cannot be stored by PostgreSQL: the insert fails in the database, as an unchecked input once did.
    await sql`insert into settings (key, value) values (${'x\u0000' + secret}, ${embedKey})`.execute(database.db);
    assert.fail('the insert should fail');
  } catch (error) {
    logger.error({ err: error }, 'unhandled error');
  } finally {
    await database.close();
  }
  const text = lines.join('');
  assert.doesNotMatch(text, /AAAAAAAA|BBBBBBBB/, text);
  const entry = JSON.parse(lines[0]);
  assert.match(entry.err.query ?? entry.err.message, /insert into settings/i, 'the failing statement is kept, with its placeholders');
  assert.equal(entry.err.params, undefined);
});

test('URLs with tokens are masked: player, preview and render links', () => {
  assert.equal(maskUrl('/preview/12.1795450000.abcdef0123?x=1'), '/preview/***?x=1');
  assert.equal(maskUrl('/p/AbCdEfGhIjKlMnOpQrStUvWx/ws'), '/p/***/ws');
  assert.equal(maskUrl('/v1/sessions/1/render?token=st_secret&sample_rate=16000'), '/v1/sessions/1/render?token=***&sample_rate=16000');
  // Issue 27: by the value's shape and after decoding, not by a few literal names.
  assert.equal(maskUrl('/v1/sessions/1/render?%74oken=st_abcdefgh12&sample_rate=16000'), '/v1/sessions/1/render?%74oken=***&sample_rate=16000');
  assert.equal(maskUrl('/v1/agent/list?access_token=sk_live_abcdefgh12'), '/v1/agent/list?access_token=***');
  assert.equal(maskUrl('/v1/agent/list?apikey=sk_live_abcdefgh12&limit=5'), '/v1/agent/list?apikey=***&limit=5');
  assert.equal(maskUrl('/v1/agent/list?q=sk%5Flive%5Fabcdefgh12'), '/v1/agent/list?q=***');
  assert.equal(maskUrl('/v1/reports/stats?date_to=2026-11-23&agent_id=4'), '/v1/reports/stats?date_to=2026-11-23&agent_id=4');
});

test('a real server at debug level logs no secret, whatever the routes it served', async () => {
  const server = await startServer({ DATA_DIR: await migratedDataDir('secrets'), LOG_LEVEL: 'debug' });
  const [key] = bannerKeys(server);
  const secrets: string[] = [key];
  const agent = await server.request('POST', '/v1/agent/create', { key, body: { name: 'Secretive' } });
  const id = agent.body.id;

  // The visitor signing secret: setup's to see (contract.md, Permissions).
  const readKey = singleJson(await runCli(['keys', 'create', '--account', '1', '--permissions', 'read'], { DATA_DIR: server.dataDir })).key;
  secrets.push(readKey);
  const denied = await server.request('GET', `/v1/agent/${id}/visitor-values/secret`, { key: readKey });
  assert.equal(denied.status, 403, JSON.stringify(denied.body));
  assert.equal(denied.body.detail.code, 'missing_permission');
  assert.equal((await server.request('GET', `/v1/agent/${id}/visitor-values`, { key: readKey })).status, 200, 'the rest stays readable');
  const revealed = await server.request('GET', `/v1/agent/${id}/visitor-values/secret`, { key });
  assert.equal(revealed.status, 200);
  secrets.push(revealed.body.secret);
  const rotated = await server.request('POST', `/v1/agent/${id}/visitor-values/secret`, { key });
  secrets.push(rotated.body.secret);
  const embed = await server.request('GET', `/v1/agent/${id}/embed`, { key });
  secrets.push(embed.body.embed_key);

  // Preview link, player page, render socket token.
  const preview = await server.request('POST', `/v1/agent/${id}/preview`, { key });
  assert.equal(preview.status, 200);
  const previewToken = new URL(preview.body.preview_url).pathname.split('/').pop()!;
  secrets.push(previewToken);
  assert.equal((await fetch(preview.body.preview_url.replace(/^https?:\/\/[^/]+/, server.url))).status, 200);
  const session = await server.request('POST', '/v1/sessions', { key, body: { agent_id: id, mode: 'render' } });
  const token = new URL(session.body.ws_url).searchParams.get('token')!;
  const playerKey = new URL(session.body.player_url).pathname.split('/').pop()!;
  secrets.push(token, playerKey);
  assert.equal((await fetch(session.body.player_url)).status, 200);
  const client = await RenderClient.open(session.body.ws_url);
  client.socket.close();
  // A bad token and a bad key are logged masked too.
  await server.request('GET', '/v1/agent/list', { key: 'sk_live_' + 'Z'.repeat(43) });
  secrets.push('Z'.repeat(43));
  await server.request('POST', `/v1/sessions/${session.body.session_id}/stop`, { key });

  assert.equal((await server.stop()).code, 0);
  const log = server
    .logs()
    .map((line) => JSON.stringify(line))
    .join('\n');
  assert.ok(log.includes('/preview/***'), 'the preview request is logged, masked');
  // The banner prints the first key once on stdout; the log lines must not.
  for (const secret of secrets) assert.ok(!log.includes(secret), `a secret reached the log: ${secret.slice(0, 10)}…`);
  assert.match(log, /"url":"\/v1\/sessions\/[0-9a-f-]+\/render\?token=\*\*\*"/);
});
