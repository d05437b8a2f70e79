/**
 * What every console browser test does alike: a page that records Content-Security-Policy
 * violations, a sign-in with a one-time link as the operator's `console-link` makes, and axe on
 * the page as it is.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import type { TestApp } from '../../support/app.js';

const AXE = fs.readFileSync(path.resolve('node_modules/axe-core/axe.min.js'), 'utf8');

/** A new page, and the CSP violations its console reports (a test asserts there are none). */
export async function consolePage(browser: Browser): Promise<{ page: Page; cspViolations: string[] }> {
  const page = await browser.newPage();
  const cspViolations: string[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text());
  });
  return { page, cspViolations };
}

/** Signs the page in to the test app's account with a one-time link; resolves once the console shows. */
export async function signIn(t: TestApp, page: Page): Promise<void> {
  const link = await t.context.consoleSignIns.createLink(t.accountId);
  await page.goto(link.url);
  await page.getByRole('navigation', { name: 'Console' }).waitFor();
}

/** axe on the page as it is: no serious or critical issue; one main landmark and one h1. */
export async function expectAccessible(page: Page, label: string): Promise<void> {
  const results: any = await page.evaluate(`${AXE}; axe.run(document, { resultTypes: ['violations'] })`);
  const bad = results.violations.filter((v: any) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(
    bad.map((v: any) => `${v.id}: ${v.help} (${v.nodes.map((n: any) => n.target.join(' ')).join(', ')})`),
    [],
    `axe on ${label}`,
  );
  assert.equal(await page.locator('main').count(), 1, `one main on ${label}`);
  assert.equal(await page.locator('h1').count(), 1, `one h1 on ${label}`);
}
