/**
 * /embed.js on a website, in Debian's Chromium: the snippet of the embed config draws the button
 * on an allowed site, one click starts a conversation-mode session and shows its player in a
 * frame (live), the anonymous visitor id stays the same for this browser and site across pages,
 * and a site that is not allowed gets nothing drawn.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { startTestApp, type TestApp } from '../support/app.js';
import { launch, hasChromium, artifact } from './support/browser.js';

const skip = hasChromium() ? false : 'Debian chromium is not installed (.ci/run installs it)';

describe('embed widget on a website', { skip, timeout: 240_000 }, () => {
  let t: TestApp;
  let browser: Browser;
  let site: http.Server;
  let sitePort = 0;
  let snippet = '';
  let agentId = 0;

  before(async () => {
    t = await startTestApp('pglite');
    site = http.createServer((request, response) => {
      response.setHeader('content-type', 'text/html; charset=utf-8');
      response.end(`<!doctype html><html><head><title>Shop</title></head><body style="height:900px;background:#f5f5f4">
<h1>Coffee shop</h1><p>Welcome.</p>
${snippet}
</body></html>`);
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    sitePort = (site.address() as AddressInfo).port;
    const agent = (await t.request('POST', '/v1/agent/create', { body: { name: 'Ava', concurrency_limit: 5 } })).body;
    agentId = agent.id;
    // Only the site as http://localhost:<port> is allowed; http://127.0.0.1:<port> is another origin.
    const embed = await t.request('PATCH', `/v1/agent/${agent.id}/embed`, {
      body: { allowed_origins: [`http://localhost:${sitePort}`], button_text: 'Ask Ava', width: 360, height: 520 },
    });
    assert.equal(embed.status, 200);
    snippet = embed.body.script_snippet;
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
    await new Promise((r) => site?.close(r));
  });

  const widget = (page: Page) => page.evaluate('window.PresenceWidget && window.PresenceWidget.state') as Promise<any>;

  test('draws the button on an allowed site; one click starts a conversation and shows the live player', async () => {
    const context = await browser.newContext({ viewport: { width: 1000, height: 760 } });
    await context.grantPermissions(['microphone'], { origin: t.url });
    const page = await context.newPage();
    page.on('pageerror', (e) => console.error('page error:', e));
    await page.goto(`http://localhost:${sitePort}/`);
    await page.waitForFunction('window.PresenceWidget && window.PresenceWidget.state.drawn');
    const button = page.locator('[data-presence-widget] >> button.open');
    assert.equal(await button.textContent(), 'Ask Ava');
    const visitor = (await page.evaluate('window.PresenceWidget.visitorId')) as string;
    assert.match(visitor, /^v_[0-9a-f]{32}$/);
    await button.click();
    await page.waitForFunction('window.PresenceWidget.state.sessionId !== null', null, { timeout: 20_000 });
    const sessionId = (await widget(page)).sessionId as string;
    const frame = page.frameLocator('[data-presence-widget] >> iframe');
    await frame.locator('body[data-state="live"]').waitFor({ timeout: 60_000 });
    assert.equal(await page.locator('[data-presence-widget] >> iframe').getAttribute('allow'), 'microphone; autoplay');
    const session = await t.request('GET', `/v1/sessions/${sessionId}`);
    assert.equal(session.body.mode, 'conversation');
    assert.equal(session.body.agent_id, agentId);
    const record = await t.database.db.selectFrom('conversations').select('visitor_id').where('id', '=', sessionId).executeTakeFirstOrThrow();
    assert.equal(record.visitor_id, visitor);
    await page.screenshot({ path: artifact('embed-open.png') });

    // Closing removes the player; the same browser on another page of the site is the same visitor.
    await page.locator('[data-presence-widget] >> button.close').click();
    assert.equal(await page.locator('[data-presence-widget] >> iframe').count(), 0);
    await page.reload();
    await page.waitForFunction('window.PresenceWidget && window.PresenceWidget.state.drawn');
    assert.equal(await page.evaluate('window.PresenceWidget.visitorId'), visitor);
    await context.close();

    // Another browser (a fresh profile) is another visitor.
    const other = await browser.newContext();
    const second = await other.newPage();
    await second.goto(`http://localhost:${sitePort}/`);
    await second.waitForFunction('window.PresenceWidget && window.PresenceWidget.state.drawn');
    assert.notEqual(await second.evaluate('window.PresenceWidget.visitorId'), visitor);
    await other.close();
  });

  test('a site that is not allowed gets nothing drawn and cannot start', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`http://127.0.0.1:${sitePort}/`);
    await page.waitForFunction('window.PresenceWidget && window.PresenceWidget.state.error !== null');
    const state = await widget(page);
    assert.equal(state.error, 'origin_not_allowed');
    assert.equal(state.drawn, false);
    assert.equal(await page.locator('[data-presence-widget]').count(), 0);
    // A direct start from that page is refused too.
    const status = await page.evaluate(
      `fetch(${JSON.stringify(t.url)} + '/v1/embed/sessions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ embed_key: ${JSON.stringify(snippet.match(/data-embed-key="([^"]+)"/)![1])} }) }).then((r) => r.status)`,
    );
    assert.equal(status, 403);
    await context.close();
  });
});
