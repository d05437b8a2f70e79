/**
 * RenderSession reconnects after the server's 1012 (a node shutting down leaves the session
 * active): the node comes back on the same database and port, the SDK connects again by itself,
 * and a call made while it was away is sent once it is back.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { startTestApp } from '../support/app.js';
import { buildApp } from '../../src/app.js';
import { createPresenceClient, RenderSession, CloseCodes, RenderSocketClosedError } from '../../sdk/src/index.js';

test('reconnects after a 1012 server restart and speaks on the new connection', async () => {
  const t = await startTestApp('pglite');
  const port = new URL(t.url).port;
  let restarted: Awaited<ReturnType<typeof buildApp>> | undefined;
  try {
    const presence = createPresenceClient({ baseUrl: t.url, apiKey: t.key });
    const agent = await presence.post('/v1/agent/create', { body: { name: 'Restart', concurrency_limit: 5 } });
    const started = await presence.post('/v1/sessions', { body: { agent_id: agent.id, mode: 'render' } });
    const session = await RenderSession.connect(started.ws_url!, { WebSocket, reconnect: { attempts: 30, delayMs: 200, maxDelayMs: 1000 } });
    const reconnecting: number[] = [];
    session.on('reconnecting', (r) => reconnecting.push(r.code));
    const away = new Promise<void>((resolve) => session.once('reconnecting', () => resolve()));
    const reconnected = new Promise<void>((resolve) => session.once('reconnected', () => resolve()));

    await t.app.close();
    await away;
    // Asked while the node is down: waits for the connection instead of failing or being lost.
    const duringRestart = session.speak(new Int16Array(4800).fill(1000));
    restarted = await buildApp({ config: t.context.config, database: t.database, logger: false });
    await restarted.app.listen({ port: Number(port), host: '127.0.0.1' });
    await reconnected;
    assert.equal(reconnecting[0], CloseCodes.SERVER_RESTART);
    assert.equal(session.connected, true);
    const utterance = await duringRestart;
    assert.equal(await utterance.played(), 'ended');
    session.close();
    await assert.rejects(session.speak(new Int16Array(10)), RenderSocketClosedError);
  } finally {
    if (restarted) await restarted.app.close();
    else await t.app.close().catch(() => {});
    await t.database.close();
  }
});
