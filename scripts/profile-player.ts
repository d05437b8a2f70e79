/**
 * Where the player's time goes under software GL (issue 14's budgets): the face-load steps the page
 * marks (`window.presence.timings.steps`), and per-frame CPU time of every Chromium thread while
 * it talks, from /proc (a busy machine lowers the frame rate far more than the cost per frame).
 * Usage: node --import tsx scripts/profile-player.ts [query, e.g. "detail=full"] [face] [seconds]
 * Environment: CAMERA (far|mid|close), BACKDROP, FACES_DIR; SHOT=file.png (first face frame),
 * EVAL=js (run in the page before measuring; its result is printed), SHOT_AFTER=file.png (after
 * EVAL), SHOT_TALK=file.png (while the jaw is open); UNCAPPED=1 lifts the 60 Hz frame-rate limit.
 */
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { FACES_DIR } from '../src/player/routes.js';
import { FakeChannel } from '../test/player/support/fake-channel.js';
import { CHROMIUM, CHROMIUM_ARGS } from '../test/player/support/browser.js';
import { synthSpeech } from '../test/player/support/speech.js';

const query = process.argv[2] ?? '';
const face = process.argv[3] ?? 'face01';
const seconds = Number(process.argv[4] ?? 6);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const TICK = 100; // clock ticks per second (USER_HZ)

/** CPU seconds by "process type/thread name" for every descendant of this process. */
function threads(): Map<string, number> {
  const parent = new Map<number, number>();
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      parent.set(Number(d), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      /* gone */
    }
  }
  const mine = new Set([process.pid]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const [pid, pp] of parent) if (!mine.has(pid) && mine.has(pp)) mine.add(pid), (grew = true);
  }
  mine.delete(process.pid);
  const out = new Map<string, number>();
  for (const pid of mine) {
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (!cmd.includes('chrom')) continue;
      const type = /--type=([a-z-]+)/.exec(cmd)?.[1] ?? 'browser';
      for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
        const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
        const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')).replace(/\d+$/, '#');
        const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        const key = `${type}/${name}`;
        out.set(key, (out.get(key) ?? 0) + (Number(f[11]) + Number(f[12])) / TICK);
      }
    } catch {
      /* gone */
    }
  }
  return out;
}

const fake = new FakeChannel({
  facesDir: process.env.FACES_DIR ?? FACES_DIR,
  face,
  backdrop: process.env.BACKDROP ?? 'warm_office',
  camera: process.env.CAMERA ?? 'mid',
});
await fake.listen();
await fetch(fake.pageUrl);
const args = [...CHROMIUM_ARGS, ...(process.env.UNCAPPED ? ['--disable-frame-rate-limit', '--disable-gpu-vsync'] : [])];
const browser = await chromium.launch({ executablePath: CHROMIUM, args, headless: true });
try {
  const page = await browser.newPage({ viewport: { width: 640, height: 360 } });
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning' || m.text().startsWith('programs')) console.log('page:', m.text());
  });
  await page.goto(`${fake.pageUrl}?fixed${query ? `&${query}` : ''}`);
  await page.waitForFunction('window.presence && window.presence.timings.faceFrame !== null', null, { timeout: 60_000 });
  const timings = await page.evaluate('window.presence.timings');
  const glb = await page.evaluate(
    `performance.getEntriesByType('resource').filter((e) => e.name.includes('.glb')).map((e) => ({ start: Math.round(e.startTime), end: Math.round(e.responseEnd), bytes: e.transferSize }))`,
  );
  const main = await page.evaluate(
    `performance.getEntriesByType('resource').filter((e) => e.name.includes('main.js')).map((e) => ({ start: Math.round(e.startTime), end: Math.round(e.responseEnd) }))`,
  );
  console.log('timings', JSON.stringify(timings), 'glb', JSON.stringify(glb), 'main.js', JSON.stringify(main));
  console.log('detail', JSON.stringify(await page.evaluate('window.presence.detail')));
  if (process.env.SHOT) await page.screenshot({ path: path.resolve(process.env.SHOT) });
  if (process.env.EVAL) console.log('eval', await page.evaluate(process.env.EVAL));
  if (process.env.SHOT_AFTER) await sleep(300), await page.screenshot({ path: path.resolve(process.env.SHOT_AFTER) });
  await sleep(1000);
  void fake.speak(synthSpeech(24000, [3, 2, 4, 0, 2, 3, 3, 0, 4, 2, 3, 2, 3, 3, 2, 4, 0, 2, 3], 0.2));
  await sleep(1000);
  await page.evaluate('window.__frames = 0; (function f() { window.__frames++; requestAnimationFrame(f); })()');
  const a = threads();
  const t0 = performance.now();
  const f0 = Number(await page.evaluate('window.__frames'));
  if (process.env.SHOT_TALK)
    await page.waitForFunction('(window.presence.morphs().jawOpen ?? 0) > 0.3', null, { polling: 5, timeout: 10_000 }),
      await page.screenshot({ path: path.resolve(process.env.SHOT_TALK) });
  await sleep(seconds * 1000);
  const f1 = Number(await page.evaluate('window.__frames'));
  const wall = (performance.now() - t0) / 1000;
  const b = threads();
  const frameMs = await page.evaluate('window.presence.frameMs()');
  const frames = f1 - f0;
  console.log(`${query || 'default'} ${face}: ${(frames / wall).toFixed(1)} fps over ${wall.toFixed(1)} s; page frameMs ${JSON.stringify(frameMs)}`);
  const rows = [...b]
    .map(([k, v]) => [k, v - (a.get(k) ?? 0)] as const)
    .filter(([, v]) => v > 0.005)
    .sort((x, y) => y[1] - x[1]);
  let total = 0;
  for (const [k, v] of rows) {
    total += v;
    console.log(`  ${k.padEnd(40)} ${((v * 1000) / frames).toFixed(2).padStart(7)} ms/frame  ${((v / wall) * 100).toFixed(0).padStart(4)} % of a core`);
  }
  console.log(
    `  ${'total'.padEnd(40)} ${((total * 1000) / frames).toFixed(2).padStart(7)} ms/frame  ${((total / wall) * 100).toFixed(0).padStart(4)} % of a core`,
  );
} finally {
  await browser.close();
  await fake.close();
}
