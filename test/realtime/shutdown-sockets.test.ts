/**
 * A node shutting down does not end its sessions (on PostgreSQL another node, or this one
 * restarted, carries them on): pages and render sockets are closed with 1012 and told nothing
 * ended, so they reconnect; the session stays active in the database.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startTestApp } from '../support/app.js';
import { PlayerClient, RenderClient } from '../support/render-client.js';
import { makeAgent, started } from '../sessions/helpers.js';
import { until } from '../support/until.js';

test('shutdown closes pages and render sockets with 1012 and leaves the session active', async () => {
  const t = await startTestApp('pglite');
  let closed = false;
  try {
    const agent = await makeAgent(t, { concurrency_limit: 5 });
    const render = await started(t, { agent_id: agent, mode: 'render' });
    const conversation = await started(t, { agent_id: agent, mode: 'conversation' });
    const socket = await RenderClient.open(render.ws_url);
    const renderPage = await PlayerClient.open(render.player_url);
    const conversationPage = await PlayerClient.open(conversation.player_url);

    await t.app.close();
    closed = true;
    await until(
      () => socket.closeCode !== undefined && renderPage.closeCode !== undefined && conversationPage.closeCode !== undefined,
      10_000,
      'every socket closed',
    );
    assert.deepEqual([socket.closeCode, renderPage.closeCode, conversationPage.closeCode], [1012, 1012, 1012]);
    assert.ok(![...renderPage.messages, ...conversationPage.messages].some((m) => m.event.type === 'ended'), 'no page is told the session ended');
    const rows = await t.database.db.selectFrom('sessions').select(['id', 'status']).where('id', 'in', [render.session_id, conversation.session_id]).execute();
    assert.deepEqual(
      rows.map((r) => r.status),
      ['active', 'active'],
    );
  } finally {
    if (!closed) await t.app.close();
    await t.database.close();
  }
});
