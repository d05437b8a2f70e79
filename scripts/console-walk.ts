/**
 * A console to look at, for the budgets and the screenshots: a test server (embedded database)
 * with an agent, its knowledge read from a small site on 127.0.0.1 and an open gap, and Chromium
 * signed in through a one-time link. `visit` opens a console path and waits until the page has
 * its h1 and nothing left loading.
 */
import http from 'node:http';
import type { Browser, Page } from 'playwright-core';
import { startTestApp, type TestApp } from '../test/support/app.js';
import { launch } from '../test/player/support/browser.js';

export const CONSOLE_PAGES: Array<[name: string, path: (agentId: number) => string]> = [
  ['overview', () => '/console/'],
  ['agents', () => '/console/agents'],
  ['look', (id) => `/console/agents/${id}/look`],
  ['try', (id) => `/console/agents/${id}/try`],
  ['knowledge', (id) => `/console/agents/${id}/knowledge`],
  ['review', (id) => `/console/agents/${id}/review`],
  ['gaps', (id) => `/console/agents/${id}/gaps`],
  ['embed', (id) => `/console/agents/${id}/embed`],
  ['handoffs', (id) => `/console/agents/${id}/handoffs`],
  ['alerts', (id) => `/console/agents/${id}/alerts`],
  ['conversations', () => '/console/conversations'],
  ['reports', () => '/console/reports'],
  ['inbox', () => '/console/inbox'],
  ['billing', () => '/console/billing'],
  ['developers', () => '/console/developers'],
];

export interface ConsoleWalk {
  t: TestApp;
  browser: Browser;
  page: Page;
  agentId: number;
  /** Opens a console path; the milliseconds until it is ready (h1 shown, nothing loading). */
  visit(path: string): Promise<number>;
  close(): Promise<void>;
}

export async function openConsole(viewport = { width: 1280, height: 860 }): Promise<ConsoleWalk> {
  const site = http.createServer((req, res) => {
    const pages: Record<string, string> = {
      '/': '<h1>Crumb &amp; Co bakery</h1><p>A family bakery in Lyon baking sourdough every morning since 1998, open Tuesday to Sunday 7am to 7pm.</p><a href="/prices">Prices</a>',
      '/prices': '<h1>Prices</h1><p>A sourdough loaf costs 4.50 euros; birthday cakes start at 28 euros.</p>',
    };
    const body = pages[req.url ?? '/'];
    res.writeHead(body ? 200 : 404, { 'content-type': 'text/html' }).end(body ? `<!doctype html><title>Crumb</title><main>${body}</main>` : 'not found');
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', () => r()));
  const siteUrl = `http://127.0.0.1:${(site.address() as { port: number }).port}/`;
  const t = await startTestApp('pglite', { CRAWL_ALLOW_PRIVATE: '1' });
  const agent = (await t.request('POST', '/v1/agent/create', { body: { name: 'Crumb & Co', website_url: siteUrl } })).body;
  await t.request('PATCH', `/v1/agent/${agent.id}`, { body: { welcome_message: 'Hello! Ask me about our bread.' } });
  const built = async () => {
    for (let i = 0; i < 100; i++) {
      const s = (await t.request('GET', `/v1/agent/${agent.id}/brain-status`)).body;
      if (s.brain_status === 'complete' || s.brain_status === 'failed') break;
      await new Promise((r) => setTimeout(r, 200));
    }
  };
  await t.request('POST', `/v1/agent/${agent.id}/generate-brain`, { body: {} });
  await built();
  // Knowledge v2 (the Review page): the questions a bakery is asked, and the answers its pages give.
  await t.request('POST', `/v1/agent/${agent.id}/v2/schema/generate`);
  await built();
  await t.request('POST', `/v1/agent/${agent.id}/v2/extract`, { body: {} });
  await built();
  await t.context.gaps.record({ accountId: t.accountId, agentId: agent.id, question: 'Do you deliver wedding cakes?' });
  await t.request('POST', '/v1/keys', { body: { name: 'Website server', permissions: ['read', 'sessions'] } });

  const browser = await launch();
  const page = await browser.newPage({ viewport });
  const link = await t.context.consoleSignIns.createLink(t.accountId);
  await page.goto(link.url);
  await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();

  const visit = async (path: string) => {
    const started = performance.now();
    await page.goto(t.url + path);
    await page.waitForFunction(
      () => {
        const main = document.querySelector('main');
        return !!document.querySelector('h1') && !!main && !/Loading/.test(main.textContent ?? '') && document.querySelector('nav') !== null;
      },
      null,
      { timeout: 15_000, polling: 16 },
    );
    return performance.now() - started;
  };
  return {
    t,
    browser,
    page,
    agentId: agent.id,
    visit,
    async close() {
      await browser.close();
      await t.close();
      await new Promise((r) => site.close(() => r(undefined)));
    },
  };
}
