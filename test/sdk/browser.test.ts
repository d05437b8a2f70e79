/**
 * The SDK in a real browser (Debian's Chromium): examples/conversation.html, served over http
 * with the built package, starts a conversation-mode session with the agent's public embed key
 * through the typed client and shows its player page in a frame; a wrong key shows the server's
 * code from the typed exception.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { startTestApp, type TestApp } from '../support/app.js';
import { launch, hasChromium } from '../player/support/browser.js';
import { compileSdk } from '../../scripts/sdk-build.js';

const ROOT = path.join(import.meta.dirname, '../..');
const skip = hasChromium() ? false : 'Debian chromium is not installed';

describe('@presence/sdk in a browser', { skip }, () => {
  let t: TestApp;
  let browser: Browser;
  let pages: http.Server;
  let pagesUrl: string;
  let embedKey: string;
  const dist = fs.mkdtempSync(path.join(os.tmpdir(), 'sdk-dist-'));

  before(async () => {
    t = await startTestApp('pglite');
    const agent = (await t.request('POST', '/v1/agent/create', { body: { name: 'Greeter', concurrency_limit: 5 } })).body;
    embedKey = (await t.request('PATCH', `/v1/agent/${agent.id}/embed`, { body: {} })).body.embed_key;
    // Its own build (the package test builds sdk/dist at the same time).
    compileSdk(dist);
    // The page at /examples/, the package at /dist/, as the example's import map expects.
    pages = http.createServer((request, response) => {
      const url = new URL(request.url!, 'http://x');
      const file = url.pathname.startsWith('/dist/') ? path.join(dist, url.pathname.slice(6)) : path.join(ROOT, 'sdk', url.pathname);
      if (!file.startsWith(dist) && !file.startsWith(path.join(ROOT, 'sdk'))) return void response.writeHead(403).end();
      if (!fs.existsSync(file)) return void response.writeHead(404).end();
      response.writeHead(200, { 'Content-Type': file.endsWith('.html') ? 'text/html' : 'text/javascript' }).end(fs.readFileSync(file));
    });
    await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
    pagesUrl = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
    pages?.close();
    await t?.close();
    fs.rmSync(dist, { recursive: true, force: true });
  });

  it('starts a conversation with the embed key and frames its player page; a wrong key shows the typed error', async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    // The import map's CDN copy of openapi-fetch, served from the installed package (no network in tests).
    await page.route('https://esm.sh/openapi-fetch@0.17.0', (route) =>
      route.fulfill({ contentType: 'text/javascript', body: fs.readFileSync(path.join(ROOT, 'node_modules/openapi-fetch/dist/index.mjs'), 'utf8') }),
    );
    await page.goto(`${pagesUrl}/examples/conversation.html`);
    await page.fill('input[name=url]', t.url);
    await page.fill('input[name=key]', 'pk_wrong');
    await page.click('button');
    await page.waitForFunction(() => document.getElementById('error')!.textContent !== '');
    const shown = await page.textContent('#error');
    assert.match(shown!, /^(embed_key_not_found|validation_error): /, shown!);

    await page.fill('input[name=key]', embedKey);
    await page.click('button');
    const frame = await page.waitForSelector('#stage iframe', { timeout: 15_000 });
    const src = await frame.getAttribute('src');
    assert.match(src!, new RegExp(`^${t.url}/p/`));
    assert.equal(await frame.getAttribute('allow'), 'microphone; autoplay');
    const sessions = await t.database.db.selectFrom('sessions').select(['mode', 'status']).execute();
    assert.deepEqual(
      sessions.map((s) => [s.mode, s.status]),
      [['conversation', 'active']],
    );
    assert.deepEqual(errors, []);
    await page.close();
  });
});
