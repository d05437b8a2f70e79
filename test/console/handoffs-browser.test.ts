/**
 * Agent › Handoffs and Agent › Alerts in Debian's Chromium, as a business owner uses them, every
 * control found by role and accessible name: build a webhook handoff to a receiver on 127.0.0.1
 * (a variable inserted at the cursor), reveal its secret, send a test the receiver gets signed, read
 * the delivery log, meet a 422 beside the URL field with the typed values kept, rotate the secret;
 * create an alert rule with keywords, test it, set quiet hours. Each step is checked through the
 * API, and axe reports no serious or critical issue on either page.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import http from 'node:http';
import type { Browser, Page } from 'playwright-core';
import { startTestApp, type TestApp } from '../support/app.js';
import { hasChromium, launch } from '../player/support/browser.js';
import { consolePage, expectAccessible, signIn } from './support/console-page.js';

const skip = hasChromium() ? false : 'Debian chromium is not installed';

interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A webhook receiver on 127.0.0.1 that answers 200 and hands over each request it gets. */
function receiver(): Promise<{ url: string; next: () => Promise<Received>; close: () => Promise<void> }> {
  const got: Received[] = [];
  const waiting: Array<(r: Received) => void> = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const r = { method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      res.writeHead(200, { 'content-type': 'text/plain' }).end('thanks');
      const w = waiting.shift();
      if (w) w(r);
      else got.push(r);
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      resolve({
        url: `http://127.0.0.1:${port}/hook`,
        next: () => (got.length ? Promise.resolve(got.shift()!) : new Promise((r) => waiting.push(r))),
        close: () => new Promise((r) => server.close(() => r())),
      });
    }),
  );
}

describe('Agent › Handoffs and Alerts in a browser', { skip, timeout: 180_000 }, () => {
  let t: TestApp;
  let hook: Awaited<ReturnType<typeof receiver>>;
  let browser: Browser;
  let page: Page;
  let agentId: number;
  let cspViolations: string[] = [];

  before(async () => {
    t = await startTestApp('pglite', { WEBHOOK_ALLOW_PRIVATE: '1' });
    hook = await receiver();
    browser = await launch();
    ({ page, cspViolations } = await consolePage(browser));
  });
  after(async () => {
    await browser?.close();
    await hook?.close();
    await t?.close();
  });

  const axe = (label: string) => expectAccessible(page, label);

  const rulesOf = async () => (await t.request('GET', `/v1/agent/${agentId}/v2/rules`)).body.rules as any[];

  it("signs in and opens the agent's Handoffs page", async () => {
    const created = await t.request('POST', '/v1/agent/create', { body: { name: 'Crumb & Co' } });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    agentId = created.body.id;
    await signIn(t, page);
    await page.goto(`${t.url}/console/agents/${agentId}/handoffs`);
    await page.getByRole('heading', { level: 1, name: 'Crumb & Co › Handoffs' }).waitFor();
    await page.getByRole('table', { name: 'Handoff rules' }).getByRole('cell', { name: 'No handoff rules yet.' }).waitFor();
    await axe('handoffs, empty');
  });

  it('builds a webhook rule with two details, a header and a template with a variable inserted at the cursor', async () => {
    await page.getByRole('button', { name: 'New handoff rule' }).click();
    const form = page.getByRole('form', { name: 'New handoff rule' });
    await form.getByLabel('Rule name').fill('New lead');
    assert.equal(await form.getByLabel('Detail 1 name').inputValue(), 'email');
    await form.getByRole('button', { name: 'Add detail' }).click();
    await form.getByLabel('Detail 2 name').fill('phone');
    await form.getByLabel('Detail 2 description').fill('a phone number to call back');
    await form.getByLabel('Webhook URL').fill(hook.url);
    await form.getByRole('button', { name: 'Add header' }).click();
    await form.getByLabel('Header 1 name').fill('X-Api-Key');
    await form.getByLabel('Header 1 value').fill('bakery-123');
    const template = form.getByLabel(/^Template/);
    await template.fill('{"email": "", "phone": "{{phone}}", "agent": "{{agent_name}}"}');
    await template.evaluate((el: HTMLTextAreaElement) => el.setSelectionRange(11, 11));
    await form.getByRole('group', { name: 'Insert a variable into the template' }).getByRole('button', { name: '{{email}}' }).click();
    assert.equal(await template.inputValue(), '{"email": "{{email}}", "phone": "{{phone}}", "agent": "{{agent_name}}"}');
    await axe('handoffs, rule builder');
    await form.getByRole('button', { name: 'Create rule' }).click();
    await page.getByRole('status').filter({ hasText: 'Created “New lead”.' }).waitFor();

    const rules = await rulesOf();
    assert.equal(rules.length, 1);
    const rule = rules[0];
    assert.equal(rule.name, 'New lead');
    assert.deepEqual(
      rule.details.map((d: any) => [d.name, d.required]),
      [
        ['email', true],
        ['phone', false],
      ],
    );
    assert.deepEqual(
      { ...rule.destination, template: undefined },
      { type: 'webhook', url: hook.url, method: 'POST', format: 'json', headers: { 'X-Api-Key': 'bakery-123' }, template: undefined },
    );
    assert.equal(rule.destination.template, '{"email": "{{email}}", "phone": "{{phone}}", "agent": "{{agent_name}}"}');
    assert.equal(rule.state, 'active');
    await page.getByRole('table', { name: 'Handoff rules' }).getByRole('cell', { name: 'active' }).waitFor();
  });

  let secret: string;
  it('reveals the secret, sends a test the receiver gets signed, and shows it delivered with its attempt', async () => {
    const card = page.getByRole('region', { name: 'New lead' });
    const field = card.getByLabel('Signing secret');
    secret = (await rulesOf())[0].secret;
    assert.match(secret, /^whsec_/);
    assert.notEqual(await field.inputValue(), secret, 'masked until revealed');
    await card.getByRole('button', { name: 'Reveal' }).click();
    assert.equal(await field.inputValue(), secret);

    const received = hook.next();
    await card.getByRole('button', { name: 'Send test' }).click();
    const request = await received;
    assert.equal(request.method, 'POST');
    const body = JSON.parse(request.body);
    assert.equal(body.email, 'jane.doe@example.com');
    assert.equal(body.agent, 'Crumb & Co');
    assert.equal(request.headers['x-api-key'], 'bakery-123');
    const signature = String(request.headers['x-service-signature']);
    const timestamp = String(request.headers['x-service-timestamp']);
    assert.match(signature, /^sha256=[0-9a-f]{64}$/);
    assert.equal(signature, `sha256=${crypto.createHmac('sha256', secret).update(`${timestamp}.${request.body}`).digest('hex')}`);
    await card.getByRole('status').filter({ hasText: 'Test delivered: HTTP 200' }).waitFor();

    await card.getByRole('button', { name: 'Delivery log' }).click();
    const log = card.getByRole('table', { name: 'Deliveries of “New lead”, newest first' });
    await log.getByRole('cell', { name: 'delivered', exact: true }).waitFor();
    await log.getByText(/HTTP 200, \d+ ms/).waitFor();
    const deliveries = (await t.request('GET', `/v1/agent/${agentId}/v2/rules/${(await rulesOf())[0].id}/deliveries`)).body.deliveries;
    assert.equal(deliveries.length, 1);
    assert.equal(deliveries[0].status, 'delivered');
    assert.equal(deliveries[0].delivery_id, request.headers['x-service-delivery']);
    assert.equal(deliveries[0].attempts[0].response_excerpt, 'thanks');
    await log.getByText('thanks', { exact: true }).waitFor();
    await log.getByText(deliveries[0].delivery_id).waitFor();
    await axe('handoffs, delivery log');
  });

  it("shows a bad URL's 422 beside the URL field and keeps what was typed", async () => {
    await page.getByRole('button', { name: 'New handoff rule' }).click();
    const form = page.getByRole('form', { name: 'New handoff rule' });
    await form.getByLabel('Rule name').fill('Broken');
    await form.getByLabel('Detail 1 description').fill('where to write back');
    await form.getByLabel('Webhook URL').fill('ftp://example.com/hook');
    await form.getByRole('button', { name: 'Create rule' }).click();
    const urlField = form.locator('.field', { has: page.getByLabel('Webhook URL') });
    await urlField.getByRole('alert').filter({ hasText: 'must be http or https' }).waitFor();
    assert.equal(await form.getByLabel('Webhook URL').inputValue(), 'ftp://example.com/hook');
    assert.equal(await form.getByLabel('Rule name').inputValue(), 'Broken');
    assert.equal(await form.getByLabel('Detail 1 description').inputValue(), 'where to write back');
    assert.equal((await rulesOf()).length, 1, 'nothing was saved');
    await axe('handoffs, 422');

    // A validation 422 (a detail name that is not one) lands beside that detail.
    await form.getByLabel('Webhook URL').fill(hook.url);
    await form.getByLabel('Detail 1 name').fill('9lives');
    await form.getByRole('button', { name: 'Create rule' }).click();
    await form
      .getByRole('row')
      .filter({ has: page.getByLabel('Detail 1 name') })
      .getByRole('alert')
      .filter({ hasText: 'a detail name is letters' })
      .waitFor();
    assert.equal(await urlField.getByRole('alert').count(), 0, 'the URL field no longer shows an error');
    await form.getByRole('button', { name: 'Cancel' }).click();
    await form.waitFor({ state: 'detached' });
  });

  it('edits the rule: the form starts from what is saved, and a PATCH changes only what was changed', async () => {
    const card = page.getByRole('region', { name: 'New lead' });
    await card.getByRole('button', { name: 'Edit' }).click();
    const form = card.getByRole('form', { name: 'Edit “New lead”' });
    assert.equal(await form.getByLabel('Webhook URL').inputValue(), hook.url);
    assert.equal(await form.getByLabel('Header 1 value').inputValue(), 'bakery-123');
    await form.getByLabel('Header 1 value').fill('bakery-456');
    await form.getByLabel('Detail 2 required').check();
    await form.getByRole('button', { name: 'Save rule' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved “New lead”.' }).waitFor();
    const rule = (await rulesOf())[0];
    assert.deepEqual(rule.destination.headers, { 'X-Api-Key': 'bakery-456' });
    assert.deepEqual(
      rule.details.map((d: any) => [d.name, d.required]),
      [
        ['email', true],
        ['phone', true],
      ],
    );
    assert.equal(rule.destination.template, '{"email": "{{email}}", "phone": "{{phone}}", "agent": "{{agent_name}}"}');
  });

  it('rotates the secret after a named confirmation', async () => {
    const card = page.getByRole('region', { name: 'New lead' });
    await card.getByRole('button', { name: 'Rotate' }).click();
    const dialog = page.getByRole('dialog', { name: 'Rotate the secret of “New lead”?' });
    await dialog.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByRole('status').filter({ hasText: 'Rotated the secret of “New lead”' }).waitFor();
    const rotated = (await rulesOf())[0].secret;
    assert.match(rotated, /^whsec_/);
    assert.notEqual(rotated, secret);
    assert.equal(await card.getByLabel('Signing secret').inputValue(), rotated);
  });

  it('Developers lists every webhook at a glance, the rule among them with its address and state', async () => {
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Developers' }).click();
    const table = page.getByRole('table', { name: 'Every webhook this account sends to' });
    const row = table.getByRole('row').filter({ hasText: 'New lead' });
    await row.waitFor();
    assert.match((await row.textContent())!, new RegExp(`Handoff.*New lead.*${hook.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}.*active`));
    await row.getByRole('link').click();
    await page.getByRole('region', { name: 'New lead' }).waitFor();
  });

  it('disables the rule, then deletes it after a named confirmation', async () => {
    const card = page.getByRole('region', { name: 'New lead' });
    await card.getByRole('button', { name: 'Disable' }).click();
    await card.getByRole('button', { name: 'Enable' }).waitFor();
    assert.equal((await rulesOf())[0].enabled, false);
    await card.getByRole('button', { name: 'Delete' }).click();
    // By keyboard: the question opens with the focus on Cancel, and Escape leaves the rule alone.
    const question = page.getByRole('dialog', { name: 'Delete handoff rule “New lead”?' });
    await question.waitFor();
    assert.equal(await page.evaluate(() => document.activeElement?.textContent?.trim()), 'Cancel');
    await page.keyboard.press('Escape');
    await question.waitFor({ state: 'hidden' });
    assert.equal((await rulesOf()).length, 1, 'Escape deleted nothing');
    await card.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog', { name: 'Delete handoff rule “New lead”?' }).getByRole('button', { name: 'Delete rule' }).click();
    await page.getByRole('status').filter({ hasText: 'Deleted “New lead”' }).waitFor();
    assert.equal((await rulesOf()).length, 0);
  });

  it('the Alerts page: creates a keyword rule, tests it on a sample, sets quiet hours', async () => {
    await page.getByRole('navigation', { name: 'Agent pages' }).getByRole('link', { name: 'Alerts' }).click();
    await page.getByRole('heading', { level: 1, name: 'Crumb & Co › Alerts' }).waitFor();
    await page.getByRole('table', { name: 'Alert rules' }).getByRole('cell', { name: 'No alert rules yet.' }).waitFor();
    await axe('alerts, empty');
    await page.getByRole('button', { name: 'New alert rule' }).click();
    const form = page.getByRole('form', { name: 'New alert rule' });
    await form.getByLabel('Rule name').fill('Refund requests');
    await form.getByLabel('Category').fill('complaint');
    await form.getByLabel('Keywords (comma-separated)').fill('refund, money back');
    await form.getByLabel('Visitor spoke at least (times)').fill('2');
    await form.getByRole('button', { name: 'Create alert rule' }).click();
    await page.getByRole('status').filter({ hasText: 'Created “Refund requests”.' }).waitFor();
    const rules = (await t.request('GET', `/v1/notifications/rules/${agentId}`)).body.rules;
    assert.equal(rules.length, 1);
    assert.equal(rules[0].name, 'Refund requests');
    assert.equal(rules[0].category, 'complaint');
    assert.deepEqual(rules[0].when, { keywords: ['refund', 'money back'], min_visitor_turns: 2 });
    assert.equal(rules[0].enabled, true);

    const card = page.getByRole('region', { name: 'Refund requests' });
    await card.getByText('Test “Refund requests” on a sample conversation').click();
    await card.getByLabel('What the visitor said (one line a turn)').fill('Hello\nI would like my money back please');
    await card.getByRole('button', { name: 'Test this rule' }).click();
    await card.getByRole('status').filter({ hasText: 'It would fire.' }).waitFor();
    await card.getByLabel('What the visitor said (one line a turn)').fill('Just one question about bread');
    await card.getByRole('button', { name: 'Test this rule' }).click();
    await card.getByRole('status').filter({ hasText: 'It would not fire.' }).waitFor();

    // The builder turns a sentence into a proposal in the form, saved only when the owner says so.
    await page.getByLabel('Or describe the alert in your words').fill('Tell me when someone asks about cake, longer than 2 minutes');
    await page.getByRole('button', { name: 'Propose a rule' }).click();
    const proposal = page.getByRole('form', { name: 'New alert rule' });
    await proposal.waitFor();
    assert.equal(await proposal.getByLabel('Keywords (comma-separated)').inputValue(), 'cake');
    assert.equal(await proposal.getByLabel('Lasted at least (seconds)').inputValue(), '120');
    await proposal.getByRole('button', { name: 'Cancel' }).click();
    await proposal.waitFor({ state: 'detached' });
    assert.equal((await t.request('GET', `/v1/notifications/rules/${agentId}`)).body.rules.length, 1, 'a proposal is not saved');

    const prefs = page.getByRole('form', { name: 'Alert preferences' });
    await prefs.getByRole('checkbox', { name: /Hold sends during quiet hours/ }).check();
    await prefs.getByLabel('From').fill('21:30');
    await prefs.getByLabel('Until').fill('07:00');
    await prefs.getByLabel('Time zone').fill('Europe/Paris');
    await prefs.getByRole('button', { name: 'Save preferences' }).click();
    await prefs.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    const saved = (await t.request('GET', `/v1/notifications/prefs/${agentId}`)).body;
    assert.deepEqual(saved.quiet_hours, { start: '21:30', end: '07:00', timezone: 'Europe/Paris' });
    assert.equal(saved.categories.complaint, true);

    // A bad time zone: the 422 beside the field, what was typed kept.
    await prefs.getByLabel('Time zone').fill('Mars/Olympus');
    await prefs.getByRole('button', { name: 'Save preferences' }).click();
    await prefs
      .locator('.field', { has: page.getByLabel('Time zone') })
      .getByRole('alert')
      .filter({ hasText: 'IANA time zone' })
      .waitFor();
    assert.equal(await prefs.getByLabel('Time zone').inputValue(), 'Mars/Olympus');
    await axe('alerts');
    assert.deepEqual(cspViolations, [], 'no CSP violation');
  });

  it('a read-only sign-in sees the rules with the secret masked, and every change disabled with the reason', async () => {
    const created = await t.request('POST', `/v1/agent/${agentId}/v2/rules`, {
      body: { name: 'Viewer rule', details: [], destination: { type: 'webhook', url: hook.url } },
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const realSecret = created.body.rule.secret;
    const key = (await t.request('POST', '/v1/keys', { body: { name: 'Viewer', permissions: ['read'] } })).body.key;
    const context = await browser.newContext();
    const viewer = await context.newPage();
    try {
      await viewer.goto(`${t.url}/console/`);
      await viewer.getByLabel('Or paste an API key').fill(key);
      await viewer.getByRole('button', { name: 'Sign in' }).click();
      await viewer.getByRole('navigation', { name: 'Console' }).waitFor();
      await viewer.goto(`${t.url}/console/agents/${agentId}/handoffs`);
      await viewer.getByRole('heading', { level: 1, name: 'Crumb & Co › Handoffs' }).waitFor();
      const reason = 'Your sign-in lacks the "setup" permission.';
      const add = viewer.getByRole('button', { name: 'New handoff rule' });
      assert.equal(await add.isDisabled(), true);
      assert.equal(await add.getAttribute('title'), reason);
      const card = viewer.getByRole('region', { name: 'Viewer rule' });
      for (const name of ['Reveal', 'Rotate', 'Edit', 'Disable', 'Send test']) {
        const button = card.getByRole('button', { name });
        assert.equal(await button.isDisabled(), true, name);
        assert.equal(await button.getAttribute('title'), reason, name);
      }
      assert.equal(await card.getByRole('button', { name: 'Delete' }).getAttribute('title'), 'Your sign-in lacks the "delete" permission.');
      const shown = await card.getByLabel('Signing secret').inputValue();
      assert.ok(!shown.includes(realSecret.slice(6, -4)), `the secret is not in the page: ${shown}`);
      await card.getByRole('button', { name: 'Delivery log' }).click();
      await card.getByRole('table', { name: 'Deliveries of “Viewer rule”, newest first' }).waitFor();
      await viewer.goto(`${t.url}/console/agents/${agentId}/alerts`);
      await viewer.getByRole('heading', { level: 1, name: 'Crumb & Co › Alerts' }).waitFor();
      assert.equal(await viewer.getByRole('button', { name: 'New alert rule' }).isDisabled(), true);
      await viewer.getByText('Test “Refund requests” on a sample conversation').click();
      assert.equal(await viewer.getByRole('button', { name: 'Test this rule' }).getAttribute('title'), reason);
    } finally {
      await context.close();
    }
  });
});
