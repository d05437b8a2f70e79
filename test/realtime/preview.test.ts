/** Agent preview links: the player page and a live side that speaks the welcome message, unmetered. */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../support/app.js';
import { PlayerClient } from '../support/render-client.js';
import { PreviewLinks } from '../../src/agents/preview-links.js';

let t: TestApp;

describe('agent preview', () => {
  before(async () => {
    t = await startTestApp('pglite');
  });
  after(async () => t.close());

  it('serves the player page and speaks the welcome message without a session', async () => {
    const agent = (await t.request('POST', '/v1/agent/create', { body: { name: 'Previewed', studio: { backdrop: 'sunset' } } })).body;
    await t.request('PATCH', `/v1/agent/${agent.id}`, { body: { welcome_message: 'Welcome! I am here to help.' } });
    const preview = await t.request('POST', `/v1/agent/${agent.id}/preview`);
    assert.equal(preview.status, 200);
    const page = await fetch(preview.body.preview_url);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /\/preview\/[^"]+\/ws/);

    const player = await PlayerClient.open(preview.body.preview_url);
    const hello = player.of('hello')[0];
    assert.equal(hello.face.avatar_id, 'face01');
    assert.equal(hello.studio.backdrop.backdrop_id, 'sunset');
    const deadline = Date.now() + 20_000;
    while (!player.of('utterance_end').length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const samples = player.frames.reduce((n, f) => n + f.pcm.length, 0);
    assert.ok(samples / 24000 > 0.8, `spoke ${(samples / 24000).toFixed(2)} s of welcome`);
    assert.ok(
      player.of('track').some((tr: any) => tr.mouth.values.some((v: number) => v > 0.3)),
      'with moving lips',
    );
    player.close();

    const sessions = await t.request('GET', '/v1/sessions');
    assert.equal(sessions.body.length, 0, 'a preview is not a session');
  });

  it('refuses a forged or expired link', async () => {
    const links = new PreviewLinks('some-other-key', { publicUrl: t.url });
    const forged = links.create(1).preview_url;
    assert.equal((await fetch(forged)).status, 404);
    const real = (await t.request('POST', '/v1/agent/create', { body: { name: 'Expiring' } })).body;
    const url = (await t.request('POST', `/v1/agent/${real.id}/preview`)).body.preview_url as string;
    const token = url.split('/preview/')[1];
    const [id, expires] = token.split('.');
    assert.equal(Number(id), real.id);
    // A link lives 15 minutes.
    const own = new PreviewLinks('k', { publicUrl: '' });
    const ownToken = own.create(7, 1_000_000_000_000).preview_url.split('/preview/')[1];
    assert.equal(own.verify(ownToken, 1_000_000_000_000 + 899_000), 7);
    assert.equal(own.verify(ownToken, 1_000_000_000_000 + 901_000), undefined);
    // Tampering with the expiry breaks the signature.
    assert.equal((await fetch(url.replace(`.${expires}.`, `.${Number(expires) + 3600}.`))).status, 404);
  });
});
