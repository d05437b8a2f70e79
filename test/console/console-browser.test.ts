/**
 * The console in Debian's Chromium, walked as a business owner would, finding every control by
 * its role and accessible name: sign in with a one-time link, create the first agent, build its
 * knowledge from a website served on 127.0.0.1, answer a gap, create and revoke a key, reload a
 * deep URL, meet the "not found" view, sign out. Each step is checked through the API, and axe
 * reports no serious or critical issue on any page visited.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { startTestApp, type TestApp } from '../support/app.js';
import { hasChromium, launch } from '../player/support/browser.js';
import { consolePage, expectAccessible } from './support/console-page.js';

const skip = hasChromium() ? false : 'Debian chromium is not installed';

/** A small bakery website on 127.0.0.1. */
function bakerySite(): Promise<{ url: string; close: () => Promise<void> }> {
  const page = (title: string, body: string) =>
    `<!doctype html><html><head><title>${title}</title></head><body><nav><a href="/">Home</a> <a href="/about">About us</a> <a href="/prices">Prices</a></nav><main><h1>${title}</h1>${body}</main></body></html>`;
  const pages: Record<string, string> = {
    '/': page(
      'Crumb & Co bakery',
      '<p>Crumb &amp; Co is a family bakery in Lyon baking sourdough bread every morning since 1998. We are open Tuesday to Sunday from 7am to 7pm.</p>',
    ),
    '/about': page('About us', '<p>Marie and Paul Durand run the bakery. Everything is baked on site with organic flour from a mill in the Drôme.</p>'),
    '/prices': page(
      'Prices',
      '<p>A sourdough loaf costs 4.50 euros. A croissant costs 1.40 euros. Birthday cakes start at 28 euros and are ordered two days ahead.</p>',
    ),
  };
  const server = http.createServer((req, res) => {
    const body = pages[(req.url ?? '/').split('?')[0]];
    if (req.url === '/robots.txt') return res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nAllow: /\n');
    if (!body) return res.writeHead(404).end('not found');
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body);
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      resolve({ url: `http://127.0.0.1:${port}/`, close: () => new Promise((r) => server.close(() => r())) });
    }),
  );
}

describe('the console in a browser', { skip, timeout: 180_000 }, () => {
  let t: TestApp;
  let site: Awaited<ReturnType<typeof bakerySite>>;
  let browser: Browser;
  let page: Page;
  let cspViolations: string[] = [];

  before(async () => {
    t = await startTestApp('pglite', { CRAWL_ALLOW_PRIVATE: '1' });
    site = await bakerySite();
    browser = await launch();
    ({ page, cspViolations } = await consolePage(browser));
  });
  after(async () => {
    await browser?.close();
    await site?.close();
    await t?.close();
  });

  const axe = (label: string) => expectAccessible(page, label);

  it("the client's TypeScript checks (its own DOM and JSX settings)", () => {
    execFileSync(process.execPath, [path.resolve('node_modules/typescript/bin/tsc'), '--noEmit', '-p', 'src/console/client'], { stdio: 'pipe' });
  });

  it('signs in with a link, once; the token leaves the address bar; a second use shows the sign-in page with an error', async () => {
    const link = await t.context.consoleSignIns.createLink(t.accountId);
    await page.goto(link.url);
    await page.getByRole('heading', { level: 1, name: 'Welcome to Presence' }).waitFor();
    assert.ok(!page.url().includes('token='), page.url());
    assert.ok(new URL(page.url()).pathname.startsWith('/console'));
    const cookies = await page.context().cookies();
    const cookie = cookies.find((c) => c.name === 'presence_console');
    assert.ok(cookie?.httpOnly && cookie.sameSite === 'Strict', JSON.stringify(cookies));
    assert.equal(await page.evaluate(() => document.cookie), '', 'the page cannot read the cookie');
    await axe('first-run overview');

    const other = await browser.newPage();
    await other.goto(link.url);
    await other.getByRole('heading', { level: 1, name: 'Sign in to Presence' }).waitFor();
    await other.getByRole('alert').filter({ hasText: 'already been used' }).waitFor();
    await other.close();
  });

  let agentId: number;
  it('creates the first agent', async () => {
    await page.getByLabel('Agent name').fill('Crumb & Co');
    await page.getByLabel('Your website (optional)').fill(site.url);
    await page.getByRole('button', { name: 'Create agent' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    const agents = (await t.request('GET', '/v1/agent/list')).body;
    assert.equal(agents.length, 1);
    assert.equal(agents[0].name, 'Crumb & Co');
    assert.equal(agents[0].website_url, site.url);
    agentId = agents[0].id;
    await axe('overview');
  });

  it('builds knowledge from the website with a progress bar and a page table', async () => {
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Agents' }).click();
    await page.getByRole('heading', { level: 1, name: 'Agents' }).waitFor();
    await page.getByRole('table', { name: 'Your agents and what they know' }).getByRole('cell', { name: 'not built' }).waitFor();
    await axe('agents');
    await page.getByRole('link', { name: 'Crumb & Co' }).click();
    await page.getByRole('heading', { level: 1, name: 'Crumb & Co › Look' }).waitFor();
    await page.getByLabel('Voice', { exact: true }).waitFor();
    await axe('agent look');
    await page.getByRole('navigation', { name: 'Agent pages' }).getByRole('link', { name: 'Knowledge' }).click();
    await page.getByRole('heading', { level: 1, name: 'Crumb & Co › Knowledge' }).waitFor();
    await page.getByRole('button', { name: 'Find pages' }).click();
    await page.getByRole('table', { name: 'Pages found on the website' }).waitFor();
    await page.getByLabel('Read /prices as').selectOption('primary');
    await page.getByRole('button', { name: 'Build knowledge' }).click();
    // The build shows progress while it runs (it may finish before the first poll on a fast machine).
    await page.getByRole('table', { name: 'Pages the agent reads' }).getByRole('cell', { name: 'read', exact: true }).first().waitFor({ timeout: 60_000 });
    await page.getByText('Knowledge: complete').waitFor({ timeout: 60_000 });
    const status = (await t.request('GET', `/v1/agent/${agentId}/brain-status`)).body;
    assert.equal(status.brain_status, 'complete');
    const pages = (await t.request('GET', `/v1/agent/${agentId}/pages/list`)).body;
    assert.ok(
      pages.some((p: any) => p.url.endsWith('/prices') && p.is_primary && p.status === 'read'),
      JSON.stringify(pages),
    );
    await axe('knowledge');
  });

  it('answers a gap', async () => {
    await t.context.gaps.record({ accountId: t.accountId, agentId, question: 'Do you deliver wedding cakes?' });
    await page.getByRole('navigation', { name: 'Agent pages' }).getByRole('link', { name: 'Gaps' }).click();
    await page.getByRole('heading', { level: 2, name: 'Do you deliver wedding cakes?' }).waitFor();
    await axe('gaps');
    await page.getByLabel('Answer to “Do you deliver wedding cakes?”').fill('Yes, within Lyon, for 15 euros.');
    await page.getByRole('button', { name: 'Save answer' }).click();
    await page.getByRole('status').filter({ hasText: 'Answered' }).waitFor();
    const answered = (await t.request('GET', `/v1/agent/${agentId}/v2/gaps?status=answered`)).body.gaps;
    assert.equal(answered.length, 1);
    assert.equal(answered[0].answer, 'Yes, within Lyon, for 15 euros.');
  });

  it('creates a key (shown once) and revokes it', async () => {
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Developers' }).click();
    await page.getByRole('heading', { level: 1, name: 'Developers' }).waitFor();
    await page.getByRole('table', { name: 'API keys' }).waitFor();
    await axe('developers');
    await page.getByLabel('Key name').fill('Website server');
    await page.getByRole('checkbox', { name: 'sessions' }).check();
    await page.getByRole('button', { name: 'Create key' }).click();
    const dialog = page.getByRole('dialog', { name: 'Your new API key' });
    const secret = await dialog.getByLabel('API key').inputValue();
    assert.match(secret, /^sk_live_/);
    assert.equal((await t.request('GET', '/v1/agent/list', { key: secret })).status, 200);
    await dialog.getByRole('button', { name: 'Done' }).click();
    await page.getByRole('button', { name: 'Revoke Website server' }).click();
    await page.getByRole('dialog', { name: 'Revoke Website server?' }).getByRole('button', { name: 'Revoke key' }).click();
    await page.getByRole('button', { name: 'Revoke Website server' }).waitFor({ state: 'detached' });
    assert.equal((await t.request('GET', '/v1/agent/list', { key: secret })).status, 401);
  });

  it('reloads a deep URL to the same view; an unknown path shows "not found"; signing out ends the session', async () => {
    await page.goto(`${t.url}/console/agents/${agentId}/knowledge`);
    await page.getByRole('heading', { level: 1, name: 'Crumb & Co › Knowledge' }).waitFor();
    await page.goto(`${t.url}/console/no/such/page`);
    await page.getByRole('heading', { level: 1, name: 'Page not found' }).waitFor();
    await axe('not found');
    const root = await page.goto(`${t.url}/`);
    assert.ok(root && new URL(root.url()).pathname.startsWith('/console'));
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();

    const cookie = (await page.context().cookies()).find((c) => c.name === 'presence_console')!;
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { level: 1, name: 'Sign in to Presence' }).waitFor();
    await axe('sign-in');
    const after = await t.request('GET', '/v1/agent/list', { key: null, headers: { cookie: `presence_console=${cookie.value}` } });
    assert.equal(after.status, 401);
    assert.deepEqual(cspViolations, [], 'no CSP violation on any page');
  });
});
