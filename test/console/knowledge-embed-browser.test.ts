/**
 * The Knowledge tab's editing and the Embed tab's visitor values in Debian's Chromium, as an owner
 * would use them: add a page by its address, replace its text with their own, remove it; write a
 * knowledge-base section, edit it, delete it; declare a visitor value, reveal and rotate the
 * signing secret, and check sample values. Each step is checked through the API; axe reports no
 * serious or critical issue.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { Browser, Page } from 'playwright-core';
import { startTestApp, type TestApp } from '../support/app.js';
import { hasChromium, launch } from '../player/support/browser.js';
import { consolePage, expectAccessible, signIn } from './support/console-page.js';

const skip = hasChromium() ? false : 'Debian chromium is not installed';

function hoursSite(): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    if (req.url === '/robots.txt') return res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nAllow: /\n');
    if (req.url === '/hours')
      return res
        .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        .end(
          '<!doctype html><html><head><title>Opening hours</title></head><body><main><h1>Opening hours</h1><p>We are open Tuesday to Sunday from 7am to 7pm, and closed on Mondays all year round.</p></main></body></html>',
        );
    res.writeHead(404).end('not found');
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      resolve({ url: `http://127.0.0.1:${port}`, close: () => new Promise((r) => server.close(() => r())) });
    }),
  );
}

describe('knowledge editing and visitor values in the console', { skip, timeout: 180_000 }, () => {
  let t: TestApp;
  let site: Awaited<ReturnType<typeof hoursSite>>;
  let browser: Browser;
  let page: Page;
  let agentId: number;

  before(async () => {
    t = await startTestApp('pglite', { CRAWL_ALLOW_PRIVATE: '1' });
    site = await hoursSite();
    browser = await launch();
    ({ page } = await consolePage(browser));
    agentId = (await t.request('POST', '/v1/agent/create', { body: { name: 'Crumb & Co' } })).body.id;
    await signIn(t, page);
  });
  after(async () => {
    await browser?.close();
    await site?.close();
    await t?.close();
  });

  const axe = (label: string) => expectAccessible(page, label);

  it('adds a page by its address, replaces its text, then removes it', async () => {
    await page.goto(`${t.url}/console/agents/${agentId}/knowledge`);
    await page.getByRole('heading', { level: 1, name: 'Crumb & Co › Knowledge' }).waitFor();
    const form = page.getByRole('form', { name: 'Add a page' });
    await form.getByLabel('Add a page (its address)').fill(`${site.url}/hours`);
    await form.getByRole('button', { name: 'Add page' }).click();
    const pages = page.getByRole('table', { name: 'Pages the agent reads' });
    await pages.getByRole('cell', { name: /^Opening hours http/ }).waitFor({ timeout: 60_000 });
    let listed = (await t.request('GET', `/v1/agent/${agentId}/pages/list`)).body;
    assert.equal(listed.length, 1);
    assert.ok(listed[0].url.endsWith('/hours') && listed[0].is_primary, JSON.stringify(listed));
    // Wait until it is read, so the editor shows its text.
    for (let i = 0; i < 100 && listed[0].status !== 'read'; i++) {
      await new Promise((r) => setTimeout(r, 200));
      listed = (await t.request('GET', `/v1/agent/${agentId}/pages/list`)).body;
    }
    assert.equal(listed[0].status, 'read');
    await axe('knowledge with a page');

    await page.reload();
    await pages.getByRole('button', { name: 'Edit Opening hours' }).click();
    const editor = page.getByRole('dialog', { name: 'Edit Opening hours' });
    const text = editor.getByLabel('What the agent knows from this page');
    await text.waitFor();
    assert.match(await text.inputValue(), /closed on Mondays/, 'the editor shows what was read');
    await text.fill('Open every day from 8am to 6pm, including Mondays.');
    await editor.getByLabel('About the business (primary)').uncheck();
    await editor.getByRole('button', { name: 'Save page' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved Opening hours' }).waitFor();
    const edited = (await t.request('GET', `/v1/agent/${agentId}/pages/${listed[0].id}`)).body;
    assert.equal(edited.has_override, true);
    assert.equal(edited.is_primary, false);
    assert.match(edited.content, /including Mondays/);
    await pages.getByRole('cell', { name: 'background' }).waitFor();

    await pages.getByRole('button', { name: 'Remove Opening hours' }).click();
    await page.getByRole('dialog', { name: 'Remove this page?' }).getByRole('button', { name: 'Remove page' }).click();
    await page.getByRole('status').filter({ hasText: 'Removed Opening hours' }).waitFor();
    assert.deepEqual((await t.request('GET', `/v1/agent/${agentId}/pages/list`)).body, []);
  });

  it('writes, edits and deletes a knowledge-base section; a blank title shows the 422 beside it and keeps the text', async () => {
    const form = page.getByRole('form', { name: 'Add a section' });
    await form.getByLabel('Section title').fill('   ');
    await form.getByLabel('Section text').fill('Birthday cakes are ordered two days ahead.');
    await form.getByRole('button', { name: 'Add section' }).click();
    await form.getByRole('alert').first().waitFor();
    assert.equal(await form.getByLabel('Section text').inputValue(), 'Birthday cakes are ordered two days ahead.', 'what was typed is kept');
    assert.deepEqual((await t.request('GET', `/v1/agent/${agentId}/kb-sections`)).body.sections, []);

    await form.getByLabel('Section title').fill('Cakes');
    await form.getByRole('button', { name: 'Add section' }).click();
    await page.getByRole('heading', { level: 3, name: 'Cakes' }).waitFor();
    let sections = (await t.request('GET', `/v1/agent/${agentId}/kb-sections`)).body.sections;
    assert.equal(sections.length, 1);
    assert.equal(sections[0].content, 'Birthday cakes are ordered two days ahead.');
    await axe('knowledge with a section');

    await page.getByRole('button', { name: 'Edit “Cakes”' }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit “Cakes”' });
    await dialog.getByLabel('Text').fill('Birthday cakes are ordered three days ahead.');
    await dialog.getByRole('button', { name: 'Save section' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved “Cakes”' }).waitFor();
    sections = (await t.request('GET', `/v1/agent/${agentId}/kb-sections`)).body.sections;
    assert.equal(sections[0].content, 'Birthday cakes are ordered three days ahead.');

    await page.getByRole('button', { name: 'Delete “Cakes”' }).click();
    await page.getByRole('dialog', { name: 'Delete this section?' }).getByRole('button', { name: 'Delete section' }).click();
    await page.getByRole('status').filter({ hasText: 'Deleted “Cakes”' }).waitFor();
    assert.deepEqual((await t.request('GET', `/v1/agent/${agentId}/kb-sections`)).body.sections, []);
  });

  it('declares a visitor value, reveals and rotates the signing secret, and checks sample values', async () => {
    await page.goto(`${t.url}/console/agents/${agentId}/embed`);
    await page.getByRole('heading', { level: 2, name: 'Visitor values' }).waitFor();
    await page.getByRole('button', { name: 'Add a value' }).click();
    await page.getByLabel('Name of value 1').fill('Plan!');
    await page.getByRole('button', { name: 'Save visitor values' }).click();
    await page.getByRole('alert').first().waitFor();
    assert.deepEqual((await t.request('GET', `/v1/agent/${agentId}/visitor-values`)).body.fields, [], 'a bad name is refused and nothing saved');
    assert.equal(await page.getByLabel('Name of value 1').inputValue(), 'Plan!', 'what was typed is kept');

    await page.getByLabel('Name of value 1').fill('plan');
    await page.getByLabel('Description of value 1').fill("the visitor's subscription");
    await page.getByRole('button', { name: 'Save visitor values' }).click();
    await page.getByRole('status').filter({ hasText: 'Visitor values saved' }).waitFor();
    const declared = (await t.request('GET', `/v1/agent/${agentId}/visitor-values`)).body;
    assert.deepEqual(
      declared.fields.map((f: any) => [f.name, f.description]),
      [['plan', "the visitor's subscription"]],
    );
    await axe('embed with visitor values');

    const secretShown = page.getByLabel('Signing secret', { exact: true });
    assert.ok(
      !(await secretShown.textContent())!.includes((await t.request('GET', `/v1/agent/${agentId}/visitor-values/secret`)).body.secret),
      'masked until revealed',
    );
    await page.getByRole('button', { name: 'Reveal secret' }).click();
    const first = (await t.request('GET', `/v1/agent/${agentId}/visitor-values/secret`)).body.secret;
    await page.getByLabel('Signing secret', { exact: true }).filter({ hasText: first }).waitFor();

    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByRole('dialog', { name: 'Rotate the signing secret?' }).getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByRole('status').filter({ hasText: 'A new signing secret is in use' }).waitFor();
    const second = (await t.request('GET', `/v1/agent/${agentId}/visitor-values/secret`)).body.secret;
    assert.notEqual(second, first);
    await page.getByLabel('Signing secret', { exact: true }).filter({ hasText: second }).waitFor();

    await page.getByLabel('Sample values (JSON)').fill('{"plan": "gold", "colour": "blue"}');
    await page.getByRole('button', { name: 'Check values' }).click();
    const received = page.getByRole('table', { name: 'What the agent would receive' });
    await received.waitFor();
    assert.equal(await received.getByRole('row').filter({ hasText: '{{visitor.plan}}' }).getByRole('cell').nth(1).textContent(), 'gold');
  });
});
