/**
 * A conversation-mode session whose page connects to a node that did not start it: another node
 * on the same PostgreSQL, or this node after a restart (sessions stay active there). The node
 * opens the live conversation from the stored one, so the visitor is heard and answered there,
 * in the same transcript, without a second welcome.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { startTestApp, type TestApp } from '../support/app.js';
import { loadConfig } from '../../src/core/config.js';
import { openDatabase, type OpenedDatabase } from '../../src/core/db/database.js';
import { buildApp } from '../../src/app.js';
import { startConversation, talkingAgent, TalkingPage, turnsOf } from './support.js';
import { until } from '../support/until.js';

describe('a page that connects to another node [postgres]', { skip: process.env.TEST_DATABASE_URL ? false : 'TEST_DATABASE_URL is not set' }, () => {
  let t: TestApp;
  let nodeB: { app: FastifyInstance; database: OpenedDatabase; url: string };
  before(async () => {
    t = await startTestApp('postgres');
    const database = await openDatabase({ databaseUrl: t.database.connectionString });
    const { app } = await buildApp({
      config: loadConfig({
        RATE_LIMIT_PER_SECOND: '100000',
        MODELS_DOWNLOAD: '0',
        DATA_DIR: t.context.config.dataDir,
        PUBLIC_URL: 'http://127.0.0.1:0',
      } as NodeJS.ProcessEnv),
      database,
      logger: false,
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    nodeB = { app, database, url: `http://127.0.0.1:${(app.server.address() as { port: number }).port}` };
  });
  after(async () => {
    await nodeB.app.close();
    await nodeB.database.close();
    await t.close();
  });

  test('is heard and answered there, in the same conversation, without a second welcome', async () => {
    const agent = await talkingAgent(t, { welcome_message: 'Hello, I am Ava from Rosa Bakery.' });
    const { id, playerUrl } = await startConversation(t, agent);
    // The first part of the conversation happens on node A.
    const first = await TalkingPage.open(playerUrl);
    first.send({ type: 'visitor_text', text: 'When are you open?' });
    await until(async () => (await turnsOf(t, id)).filter((turn) => turn.role === 'agent').length >= 2, 30_000, 'the welcome and the first answer');
    first.close();

    // The page comes back on node B (the player link's key, node B's address).
    const key = new URL(playerUrl).pathname;
    const page = await TalkingPage.open(nodeB.url + key);
    page.send({ type: 'visitor_text', text: 'Do you deliver cakes?' });
    const turns = await until(
      async () => {
        const all = await turnsOf(t, id);
        const asked = all.findIndex((turn) => turn.role === 'visitor' && turn.text === 'Do you deliver cakes?');
        return asked >= 0 && all.slice(asked + 1).some((turn) => turn.role === 'agent') ? all : undefined;
      },
      30_000,
      'the answer on node B',
    );
    page.close();
    assert.match(turns.at(-1)!.text, /deliver|5 euros/i, 'answered from what the agent knows');
    assert.equal(turns.filter((turn) => /Rosa Bakery\.$/.test(turn.text) && turn.role === 'agent').length, 1, 'one welcome in the whole conversation');
    assert.deepEqual(
      turns.filter((turn) => turn.role === 'visitor').map((turn) => turn.text),
      ['When are you open?', 'Do you deliver cakes?'],
    );
  });
});
