/**
 * Agent › Try it and Agent › Review in Debian's Chromium, found by role and accessible name as a
 * screen reader would: start a real conversation, send a visitor's question, see both turns in the
 * live log, Stop (the session ends, through the API too); then Review: completion, a correction
 * previewed and applied (the fact changed, through the API), a question answered. axe reports no
 * serious or critical issue on either page, and no CSP violation happens (the player's frame included).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { Browser, Page } from 'playwright-core';
import { startTestApp, type TestApp } from '../support/app.js';
import { hasChromium, launch } from '../player/support/browser.js';
import { consolePage, expectAccessible, signIn } from './support/console-page.js';
import { awaitBuild } from '../knowledge/support/brain.js';

const skip = hasChromium() ? false : 'Debian chromium is not installed';

const HOURS = 'We are open Monday to Friday from 8 am to 6 pm. On Saturdays we open at 9 am and close at 5 pm. We are closed on Sundays.';

/** The bakery's one-page website on 127.0.0.1 (the questions are generated from the agent's website). */
function bakerySite(): Promise<{ url: string; close: () => Promise<void> }> {
  const home =
    '<!doctype html><html><head><title>Crumb & Co bakery</title></head><body><main><h1>Crumb &amp; Co bakery</h1>' +
    '<p>Crumb &amp; Co is a family bakery in Lyon baking sourdough bread every morning since 1998.</p>' +
    '<p>A sourdough loaf costs 4.50 euros. A croissant costs 1.40 euros.</p></main></body></html>';
  const server = http.createServer((req, res) => {
    if (req.url === '/robots.txt') return res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nAllow: /\n');
    if ((req.url ?? '/').split('?')[0] !== '/') return res.writeHead(404).end('not found');
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(home);
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      resolve({ url: `http://127.0.0.1:${port}/`, close: () => new Promise((r) => server.close(() => r())) });
    }),
  );
}

describe('Try it and Review in a browser', { skip, timeout: 240_000 }, () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let agentId: number;
  let site: Awaited<ReturnType<typeof bakerySite>>;
  let cspViolations: string[] = [];
  const v2 = (p: string) => `/v1/agent/${agentId}/v2${p}`;

  before(async () => {
    t = await startTestApp('pglite', { CRAWL_ALLOW_PRIVATE: '1' });
    site = await bakerySite();
    // An agent with a knowledge base, through the API: a section with the opening hours, the
    // questions a business is asked (schema), and the facts that answer them (extract).
    const created = await t.request('POST', '/v1/agent/create', { body: { name: 'Crumb & Co', website_url: site.url } });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    agentId = created.body.id;
    const section = await t.request('POST', `/v1/agent/${agentId}/kb-sections`, { body: { title: 'Opening hours', content: HOURS } });
    assert.equal(section.status, 200, JSON.stringify(section.body));
    assert.equal((await t.request('POST', v2('/schema/generate'))).status, 200);
    assert.equal((await awaitBuild(t, agentId)).last.brain_status, 'complete');
    assert.equal((await t.request('POST', v2('/extract'), { body: { pages: [{ url: site.url, is_primary: true }] } })).status, 200);
    assert.equal((await awaitBuild(t, agentId)).last.brain_status, 'complete');

    browser = await launch();
    ({ page, cspViolations } = await consolePage(browser));
    await signIn(t, page);
  });
  after(async () => {
    await browser?.close();
    await t?.close();
    await site?.close();
  });

  const axe = (label: string) => expectAccessible(page, label);

  const activeSessions = async () => (await t.request('GET', `/v1/sessions?status=active&agent_id=${agentId}`)).body as any[];

  it('Try it: starts a real conversation, sends a visitor turn, shows the answer live, and Stop ends the session', async () => {
    await page.goto(`${t.url}/console/agents/${agentId}/try`);
    await page.getByRole('heading', { level: 1, name: 'Crumb & Co › Try it' }).waitFor();
    await axe('try it, before starting');
    await page.getByRole('button', { name: 'Start a conversation' }).click();

    const frame = page.getByTitle('Conversation with Crumb & Co');
    await frame.waitFor();
    const [session] = await activeSessions();
    assert.ok(session, 'a session runs');
    assert.equal(session.mode, 'conversation');
    assert.equal(await frame.getAttribute('src'), session.player_url);
    assert.match((await frame.getAttribute('allow')) ?? '', /microphone/);
    await page
      .getByRole('timer')
      .filter({ hasText: /^0:0[1-9]|^0:[1-5]\d/ })
      .waitFor({ timeout: 10_000 });

    await page.getByLabel('Send as visitor').fill('What are your opening hours?');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    const log = page.getByRole('log', { name: 'Transcript' });
    await log.getByRole('listitem').filter({ hasText: 'Visitor' }).filter({ hasText: 'What are your opening hours?' }).waitFor({ timeout: 20_000 });
    const answer = log
      .getByRole('listitem')
      .filter({ hasText: 'Crumb & Co' })
      .filter({ hasText: /8 am|Monday/ });
    await answer.first().waitFor({ timeout: 30_000 });
    assert.equal(await page.getByLabel('Send as visitor').inputValue(), '', 'a sent message leaves the box');
    await axe('try it, live');

    await page.getByRole('button', { name: 'Stop', exact: true }).click();
    await page.getByText(/Ended \(stopped\)/).waitFor();
    const ended = (await t.request('GET', `/v1/sessions/${session.session_id}`)).body;
    assert.equal(ended.status, 'ended');
    assert.equal(ended.end_reason, 'stopped');
    const conversation = (await t.request('GET', `/v1/reports/conversations/${session.session_id}`)).body;
    assert.deepEqual(
      conversation.transcript.filter((x: any) => x.role === 'visitor').map((x: any) => x.text),
      ['What are your opening hours?'],
    );
    await page.getByRole('button', { name: 'Start a new conversation' }).waitFor();
  });

  it('Try it: leaving the page ends a running conversation', async () => {
    await page.getByRole('button', { name: 'Start a new conversation' }).click();
    await page.getByTitle('Conversation with Crumb & Co').waitFor();
    const [session] = await activeSessions();
    assert.ok(session);
    await page.getByRole('navigation', { name: 'Agent pages' }).getByRole('link', { name: 'Review' }).click();
    await page.getByRole('heading', { level: 1, name: 'Crumb & Co › Review' }).waitFor();
    const deadline = Date.now() + 10_000;
    while ((await t.request('GET', `/v1/sessions/${session.session_id}`)).body.status !== 'ended') {
      assert.ok(Date.now() < deadline, 'the session ended after the page was left');
      await new Promise((r) => setTimeout(r, 100));
    }
  });

  it('Try it: closing or navigating the browser away from the console ends a running conversation', async () => {
    const other = page;
    await other.goto(`${t.url}/console/agents/${agentId}/try`);
    await other.getByRole('button', { name: 'Start a conversation' }).click();
    await other.getByTitle('Conversation with Crumb & Co').waitFor();
    const [session] = await activeSessions();
    assert.ok(session);
    // A full navigation: no page cleanup runs, only pagehide (its keepalive request).
    await other.goto('about:blank');
    const deadline = Date.now() + 10_000;
    while ((await t.request('GET', `/v1/sessions/${session.session_id}`)).body.status !== 'ended') {
      assert.ok(Date.now() < deadline, 'the session ended after the browser left the console');
      await new Promise((r) => setTimeout(r, 100));
    }
    await page.goto(`${t.url}/console/agents/${agentId}/review`);
    await page.getByRole('heading', { level: 1, name: 'Crumb & Co › Review' }).waitFor();
  });

  it('Review: completion, a correction previewed then applied, a question answered', async () => {
    const before = (await t.request('GET', v2('/completion'))).body;
    const region = (name: string) => page.getByRole('region', { name });
    await region('Completion').getByText(`${before.answered} of ${before.total} questions answered`).waitFor();
    assert.equal(Number(await page.getByRole('meter', { name: 'Questions answered' }).getAttribute('value')), before.percent);
    await axe('review');

    // A blank correction: the API's 422 shows beside the field.
    await page.getByLabel('Correction', { exact: true }).fill('   ');
    await page.getByRole('button', { name: 'Preview correction' }).click();
    await region('Corrections')
      .getByRole('alert')
      .filter({ hasText: /empty or blank/ })
      .waitFor();

    await page.getByLabel('Correction', { exact: true }).fill('On Saturdays we now close at 4 pm');
    await page.getByRole('button', { name: 'Preview correction' }).click();
    const preview = page.getByRole('table', { name: 'What the correction changes' });
    await preview.waitFor();
    const rows = preview.getByRole('row');
    await rows.filter({ hasText: /4 pm/ }).first().waitFor();
    const factsBefore = (await t.request('GET', v2('/brain'))).body.facts;
    assert.ok(!factsBefore.some((f: any) => /4 pm/.test(f.text)), 'the preview changes nothing');
    await axe('review, correction preview');
    await page.getByRole('button', { name: 'Apply correction' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /Applied \d+ change/ })
      .waitFor();
    const factsAfter = (await t.request('GET', v2('/brain'))).body.facts;
    const corrected = factsAfter.filter((f: any) => f.sources.some((s: any) => s.kind === 'correction'));
    assert.ok(corrected.length >= 1 && corrected.some((f: any) => /4 pm/.test(f.text)), JSON.stringify(factsAfter));

    // The first question still to answer, answered from the page.
    const missing = before.missing[0];
    assert.ok(missing, 'a question is still missing');
    await page.getByLabel(`Answer to “${missing.question}”`).fill('Call us on 555 0142 or write to hello@crumb.example.');
    await page.getByRole('heading', { level: 3, name: missing.question }).locator('..').getByRole('button', { name: 'Save answer' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Answered: “${missing.question}”` })
      .waitFor();
    const after = (await t.request('GET', v2('/completion'))).body;
    assert.equal(after.answered, before.answered + 1);
    assert.ok(!after.missing.some((q: any) => q.question_id === missing.question_id));
    await region('Completion').getByText(`${after.answered} of ${after.total} questions answered`).waitFor();
    await axe('review, after edits');
    assert.deepEqual(cspViolations, [], 'no CSP violation on either page');
  });

  it('Review: an agent without questions generates them, then finds their answers in its pages', async () => {
    const created = await t.request('POST', '/v1/agent/create', { body: { name: 'Second shop', website_url: site.url } });
    const id = created.body.id;
    await t.request('POST', `/v1/agent/${id}/kb-sections`, { body: { title: 'Opening hours', content: HOURS } });
    await page.goto(`${t.url}/console/agents/${id}/review`);
    await page.getByRole('heading', { level: 1, name: 'Second shop › Review' }).waitFor();
    await page.getByText('No questions yet').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Find answers in the pages' }).isDisabled(), true);
    await page.getByRole('button', { name: 'Generate questions' }).click();
    const questions = page.getByRole('region', { name: 'Questions to answer' });
    await questions.getByRole('heading', { level: 3 }).first().waitFor({ timeout: 60_000 });
    const generated = (await t.request('GET', `/v1/agent/${id}/v2/completion`)).body;
    assert.ok(generated.total > 0 && generated.answered === 0, JSON.stringify(generated));
    await page.getByText(`0 of ${generated.total} questions answered`).waitFor();

    await page.getByRole('button', { name: 'Find answers in the pages' }).click();
    const extracted = async () => (await t.request('GET', `/v1/agent/${id}/v2/completion`)).body;
    await page.getByText(/^[1-9]\d* of \d+ questions answered/).waitFor({ timeout: 60_000 });
    const done = await extracted();
    assert.ok(done.answered > 0, JSON.stringify(done));
    await page.getByText(`${done.answered} of ${done.total} questions answered`).waitFor();
    await axe('review, questions generated');
  });
});
