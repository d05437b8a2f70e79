/** Interface: "Changes to an agent show on the next session, not on one already running"; ws_url follows PUBLIC_URL's scheme. */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../support/app.js';
import { RenderClient } from '../support/render-client.js';

describe('a running session keeps the agent as it was', () => {
  const apps: TestApp[] = [];
  after(async () => {
    for (const app of apps) await app.close();
  });

  it('a studio change shows on the next session only', async () => {
    const t = await startTestApp('pglite');
    apps.push(t);
    const agent = (await t.request('POST', '/v1/agent/create', { body: { name: 'Steady', concurrency_limit: 2, studio: { backdrop: 'mint' } } })).body;
    const first = (await t.request('POST', '/v1/sessions', { body: { agent_id: agent.id, mode: 'render' } })).body;
    const patched = await t.request('PATCH', `/v1/agent/${agent.id}`, { body: { studio: { backdrop: 'sunset' }, avatar_id: 'face03', voice_id: 'af_heart' } });
    assert.equal(patched.status, 200);
    const running = await RenderClient.open(first.ws_url);
    running.send({ type: 'stage.get', event_id: 'a' });
    assert.equal((await running.waitForType('stage.updated')).event.stage.backdrop, 'mint');
    assert.equal((await t.request('GET', `/v1/sessions/${first.session_id}`)).body.avatar_id, 'face01');
    const second = (await t.request('POST', '/v1/sessions', { body: { agent_id: agent.id, mode: 'render' } })).body;
    const next = await RenderClient.open(second.ws_url);
    next.send({ type: 'stage.get', event_id: 'b' });
    assert.equal((await next.waitForType('stage.updated')).event.stage.backdrop, 'sunset');
    assert.equal((await t.request('GET', `/v1/sessions/${second.session_id}`)).body.avatar_id, 'face03');
    running.close();
    next.close();
  });

  it('ws_url is wss:// when PUBLIC_URL is https', async () => {
    const t = await startTestApp('pglite', { PUBLIC_URL: 'https://avatars.example.com' });
    apps.push(t);
    const agent = (await t.request('POST', '/v1/agent/create', { body: { name: 'Secure' } })).body;
    const started = (await t.request('POST', '/v1/sessions', { body: { agent_id: agent.id, mode: 'render' } })).body;
    assert.match(started.ws_url, /^wss:\/\/avatars\.example\.com\/v1\/sessions\/[0-9a-f-]{36}\/render\?token=st_/);
    assert.match(started.player_url, /^https:\/\/avatars\.example\.com\/p\/[\w-]{32}$/);
  });
});
