/**
 * The face's still picture (issue 27, item 1): rendered on the server without a browser, it is in
 * the page's HTML and on screen before the live head (whose GLB the test holds back), in the same
 * place as the live head; once the live head has drawn the still is gone, and `window.presence`
 * says when each happened. Also: the rasteriser's picture (a face, transparent around it) and the
 * still route. Chromium (software GL) through playwright-core.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { decodePng, renderStill } from '../../src/faces/still.js';
import { artifact, hasChromium, launch } from './support/browser.js';
import { FakeChannel } from './support/fake-channel.js';
import { facesDir } from './support/faces.js';

const skip = hasChromium() ? false : 'chromium is not installed (apt-get install chromium)';

interface StillState {
  url: string | null;
  painted: number | null;
  hidden: number | null;
}
// Page-side code as source text (window.presence is typed by player.test.ts for its own members).
const STILL_PAINTED = 'window.presence && window.presence.still.painted !== null';
const LIVE_AND_HIDDEN = 'window.presence.liveFace && window.presence.still.hidden !== null';
// The canvas has drawn its first frame (the backdrop under the still): the page is past its first paint.
const FIRST_FRAME = 'window.presence.timings.firstFrame !== null';
/** Two animation frames: what was drawn has reached the screen, whatever the machine's load. */
const TWO_FRAMES = 'new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))';

/** Where the picture differs from the backdrop (each row's own left edge): top row, centre and width of the head. */
function silhouette(png: Buffer): { top: number; centre: number; width: number; height: number; w: number } {
  const img = decodePng(new Uint8Array(png));
  assert.ok(img);
  const { width: W, height: H, data } = img;
  const differs = (x: number, y: number) => {
    const o = (y * W + x) * 4;
    const b = (y * W + 3) * 4;
    return Math.abs(data[o] - data[b]) + Math.abs(data[o + 1] - data[b + 1]) + Math.abs(data[o + 2] - data[b + 2]) > 60;
  };
  const rows: { y: number; min: number; max: number }[] = [];
  for (let y = 0; y < Math.floor(H * 0.6); y++) {
    let min = -1;
    let max = -1;
    let count = 0;
    for (let x = 6; x < W - 6; x++) {
      if (!differs(x, y)) continue;
      count++;
      if (min < 0) min = x;
      max = x;
    }
    if (count > 4) rows.push({ y, min, max });
  }
  assert.ok(rows.length > 20, 'something stands out from the backdrop');
  const top = rows[0].y;
  // the head's width and centre a fifth of the frame below its top (through the eyes)
  const at = rows.find((r) => r.y >= top + Math.round(H * 0.2)) ?? rows[rows.length - 1];
  return { top, centre: (at.min + at.max) / 2, width: at.max - at.min, height: H, w: W };
}

describe('the face still', { skip, timeout: 180_000 }, () => {
  let browser: Browser;
  let fake: FakeChannel;
  let dir: string;

  before(async () => {
    // A faces directory of our own: face01 (generated, or the fixture) and its still.
    const faces = await facesDir();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'presence-still-'));
    const glb = fs.readFileSync(path.join(faces.dir, 'face01.glb'));
    fs.writeFileSync(path.join(dir, 'face01.glb'), glb);
    const still = await renderStill(new Uint8Array(glb), { skin: '#d9a98a' });
    fs.writeFileSync(path.join(dir, 'face01.still.png'), still.png);
    fs.writeFileSync(path.join(dir, 'face01.still.json'), JSON.stringify({ width: still.width, height: still.height, placement: still.placement }));
    fake = new FakeChannel({ facesDir: dir, backdrop: 'studio_white', camera: 'mid', cameras: ['mid'], mode: 'render' });
    await fake.listen();
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
    await fake?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  test('the rasteriser draws a face on a transparent ground', async () => {
    const png = fs.readFileSync(path.join(dir, 'face01.still.png'));
    const img = decodePng(new Uint8Array(png));
    assert.ok(img, 'a PNG we can read');
    const { width, height, data } = img;
    assert.ok(png.length < 150_000, `compact: ${png.length} bytes`);
    const alphaAt = (x: number, y: number) => data[(y * width + x) * 4 + 3];
    assert.equal(alphaAt(0, 0), 0, 'transparent corner');
    assert.equal(alphaAt(width - 1, 0), 0, 'transparent corner');
    // The middle of the face (a third down) is opaque and lit: neither black nor background.
    const cx = Math.round(width / 2);
    const cy = Math.round(height * 0.3);
    const o = (cy * width + cx) * 4;
    assert.equal(alphaAt(cx, cy), 255);
    assert.ok(data[o] > 60 && data[o] >= data[o + 2], `skin-like at the face's centre: rgb(${data[o]}, ${data[o + 1]}, ${data[o + 2]})`);
  });

  test('the still is served with the page, on screen before the live face, then replaced by it', async () => {
    const html = await (await fetch(fake.pageUrl)).text();
    const img = /<img id="still" src="([^"]+)"/.exec(html);
    assert.ok(img, 'the page carries the still');
    assert.match(html, new RegExp(`<link rel="preload" href="${img[1].replace(/[?]/g, '\\?')}" as="image"`), 'and preloads it');
    const served = await fetch(new URL(img[1], fake.url));
    assert.equal(served.status, 200);
    assert.equal(served.headers.get('content-type'), 'image/png');
    assert.deepEqual(Buffer.from(await served.arrayBuffer()), fs.readFileSync(path.join(dir, 'face01.still.png')));
    assert.equal((await fetch(`${fake.url}/assets/faces/nobody.still.png`)).status, 404);

    const page: Page = await browser.newPage({ viewport: { width: 640, height: 360 } });
    page.on('pageerror', (e) => console.error('page error:', e));
    // Hold the live face back until the still has been looked at.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    await page.route('**/assets/faces/face01.glb', async (route) => {
      await held;
      await route.continue();
    });
    await page.goto(fake.pageUrl);
    await page.waitForFunction(STILL_PAINTED, null, { timeout: 20_000 });
    // the backdrop has painted under it; the live face has not drawn
    await page.waitForFunction(FIRST_FRAME, null, { timeout: 20_000 });
    await page.evaluate(TWO_FRAMES);
    const before = (await page.evaluate(
      `({ still: window.presence.still, live: window.presence.liveFace, display: getComputedStyle(document.getElementById('still')).display, complete: document.getElementById('still').complete })`,
    )) as { still: StillState; live: boolean; display: string; complete: boolean };
    assert.equal(before.live, false, 'the live face has not drawn yet');
    assert.notEqual(before.display, 'none', 'the still is shown');
    assert.ok(before.complete);
    assert.ok(before.still.url?.startsWith('/assets/faces/face01.still.png'));
    assert.equal(before.still.hidden, null);
    const shotStill = await page.screenshot({ type: 'png' });
    fs.writeFileSync(artifact('still-before-live.png'), shotStill);

    release();
    await page.waitForFunction(LIVE_AND_HIDDEN, null, { timeout: 60_000 });
    const afterward = (await page.evaluate(
      `({ still: window.presence.still, faceFrame: window.presence.timings.faceFrame, display: getComputedStyle(document.getElementById('still')).display })`,
    )) as { still: StillState; faceFrame: number; display: string };
    assert.equal(afterward.display, 'none', 'the still is gone once the live head drew');
    assert.ok(afterward.still.painted! < afterward.faceFrame, `still painted (${afterward.still.painted} ms) before the live face (${afterward.faceFrame} ms)`);
    assert.ok(afterward.still.hidden! >= afterward.faceFrame, 'hidden after the live face drew, never before');
    await page.evaluate(TWO_FRAMES);
    const shotLive = await page.screenshot({ type: 'png' });
    fs.writeFileSync(artifact('still-then-live.png'), shotLive);

    // The same person in the same place: the head's top, centre and width agree.
    const a = silhouette(shotStill);
    const b = silhouette(shotLive);
    assert.ok(Math.abs(a.top - b.top) <= a.height * 0.05, `top of the head: still ${a.top}, live ${b.top}`);
    assert.ok(Math.abs(a.centre - b.centre) <= a.w * 0.04, `centre: still ${a.centre}, live ${b.centre}`);
    assert.ok(a.width / b.width > 0.8 && a.width / b.width < 1.25, `width: still ${a.width}, live ${b.width}`);
    await page.close();
  });

  test('in a portrait frame the still is scaled and placed by the same rule as the camera', async () => {
    const page: Page = await browser.newPage({ viewport: { width: 360, height: 640 } });
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    await page.route('**/assets/faces/face01.glb', async (route) => {
      await held;
      await route.continue();
    });
    await page.goto(fake.pageUrl);
    await page.waitForFunction(STILL_PAINTED, null, { timeout: 20_000 });
    await page.waitForFunction(FIRST_FRAME, null, { timeout: 20_000 });
    await page.evaluate(TWO_FRAMES);
    const shotStill = await page.screenshot({ type: 'png' });
    release();
    await page.waitForFunction(LIVE_AND_HIDDEN, null, { timeout: 60_000 });
    await page.evaluate(TWO_FRAMES);
    const shotLive = await page.screenshot({ type: 'png' });
    fs.writeFileSync(artifact('still-portrait.png'), shotStill);
    fs.writeFileSync(artifact('still-portrait-then-live.png'), shotLive);
    const a = silhouette(shotStill);
    const b = silhouette(shotLive);
    assert.ok(Math.abs(a.top - b.top) <= a.height * 0.05, `top of the head: still ${a.top}, live ${b.top}`);
    assert.ok(Math.abs(a.centre - b.centre) <= a.w * 0.05, `centre: still ${a.centre}, live ${b.centre}`);
    assert.ok(a.width / b.width > 0.8 && a.width / b.width < 1.25, `width: still ${a.width}, live ${b.width}`);
    await page.close();
  });
});
