/**
 * The console's budgets (issue 24): the JavaScript a first visit loads (the entry and the chunks
 * it imports statically, gzipped) ≤ 60 KB, and each page interactive ≤ 1 s after sign-in in this
 * machine's Chromium (a full load of the page's URL until its h1 shows and nothing is loading).
 */
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { ensureConsoleBuild } from '../src/console/build.js';
import { hasChromium } from '../test/player/support/browser.js';
import { CONSOLE_PAGES, openConsole } from './console-walk.js';

type Add = (budget: string, limit: string, measured: string, ok: boolean) => void;

/** The entry's file and every chunk it imports statically (not the pages loaded on demand). */
export function initialFiles(dir: string, entry: string): string[] {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const code = fs.readFileSync(path.join(dir, file), 'utf8');
    for (const m of code.matchAll(/(?:from|import)\s*"\.\/([\w-]+\.js)"/g)) visit(m[1]);
  };
  visit(entry);
  return [...seen];
}

export async function consoleBudgets(add: Add): Promise<void> {
  const build = await ensureConsoleBuild();
  const files = initialFiles(build.dir, build.entry);
  const gz = files.reduce((n, f) => n + zlib.gzipSync(fs.readFileSync(path.join(build.dir, f)), { level: 9 }).length, 0);
  add('console initial JavaScript (gzipped)', '≤ 60 KB', `${(gz / 1024).toFixed(1)} KB (${files.length} files)`, gz <= 60 * 1024);
  if (!hasChromium()) {
    add('console page interactive', '-', 'chromium not installed', false);
    return;
  }
  const walk = await openConsole();
  try {
    let worst = 0;
    let worstName = '';
    for (const [name, p] of CONSOLE_PAGES) {
      await walk.visit(p(walk.agentId)); // warm: the server's first answers, not the browser's cache
      const ms = await walk.visit(p(walk.agentId));
      if (ms > worst) (worst = ms), (worstName = name);
    }
    add(`console page interactive, slowest of ${CONSOLE_PAGES.length}`, '≤ 1000 ms', `${Math.round(worst)} ms (${worstName})`, worst <= 1000);
  } finally {
    await walk.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  let ok = true;
  await consoleBudgets((budget, limit, measured, passed) => {
    ok &&= passed;
    console.log(`${budget}  ${limit}  ${measured}  ${passed ? 'ok' : 'MISSED'}`);
  });
  process.exit(ok ? 0 : 1);
}
