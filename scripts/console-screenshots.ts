/**
 * Takes the screenshots in docs/console.md (docs/console-<page>.png): a fresh test server with an
 * agent that has read a small local website, each console page opened in Chromium after signing
 * in with a one-time link. Usage: node --import tsx scripts/console-screenshots.ts
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CONSOLE_PAGES, openConsole } from './console-walk.js';

const DOCS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'docs');
const walk = await openConsole({ width: 1200, height: 800 });
try {
  for (const [name, p] of CONSOLE_PAGES) {
    await walk.visit(p(walk.agentId));
    await walk.page.screenshot({ path: path.join(DOCS, `console-${name}.png`), fullPage: false });
    console.log(`docs/console-${name}.png`);
  }
  // Try it with a conversation running: a visitor's question and the agent's answer in the log.
  await walk.visit(`/console/agents/${walk.agentId}/try`);
  await walk.page.getByRole('button', { name: 'Start a conversation' }).click();
  await walk.page.getByLabel('Send as visitor').fill('How much is a sourdough loaf?');
  await walk.page.getByRole('button', { name: 'Send', exact: true }).click();
  await walk.page
    .getByRole('log', { name: 'Transcript' })
    .getByRole('listitem')
    .filter({ hasText: 'Crumb & Co' })
    .filter({ hasText: /4[.,]50/ })
    .first()
    .waitFor({ timeout: 30_000 });
  await walk.page.screenshot({ path: path.join(DOCS, 'console-try-live.png'), fullPage: false });
  console.log('docs/console-try-live.png');
  await walk.page.getByRole('button', { name: 'Stop', exact: true }).click();
  await walk.page.getByText(/Ended \(stopped\)/).waitFor();
  // The sign-in page, as someone without a session sees it.
  await walk.page.getByRole('button', { name: 'Sign out' }).click();
  await walk.page.getByRole('heading', { level: 1, name: 'Sign in to Presence' }).waitFor();
  await walk.page.screenshot({ path: path.join(DOCS, 'console-signin.png') });
  console.log('docs/console-signin.png');
} finally {
  await walk.close();
}
