// @timed: measures real time; the runner gives it the machine to itself.
/**
 * The whole product path in a real browser: a real server, a real render session driven over its
 * WebSocket, and the player page in Debian's Chromium (software GL). The page goes live, lips move
 * with the speech and rest in silence, interrupt closes the mouth, the cameras cut (screenshots
 * kept as artefacts for two faces), and the page reconnects when the server drops its socket.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { startTestApp, type TestApp } from '../support/app.js';
import { RenderClient, voiced, silence, concat, pieces, sleep } from '../support/render-client.js';
import { launch, hasChromium, artifact } from './support/browser.js';

// Page-side expressions are passed as source text (window.presence is the page's test hook, docs/player.md).

const skip = hasChromium() ? false : 'Debian chromium is not installed (.ci/run installs it)';

// Page-side recorder as source text: [session time heard, jawOpen] every few milliseconds.
const RECORDER = `(() => {
  window.__jaw = [];
  const sample = () => {
    window.__jaw.push([window.presence.audioTime(), window.presence.morphs().jawOpen || 0]);
    if (window.__jaw.length < 20000) setTimeout(sample, 5);
  };
  sample();
})()`;

describe('player page on a real render session', { skip, timeout: 240_000 }, () => {
  let t: TestApp;
  let browser: Browser;

  before(async () => {
    t = await startTestApp('pglite');
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  async function session(avatarId: string, voiceId: string, camera = 'mid') {
    const agent = (
      await t.request('POST', '/v1/agent/create', {
        body: { name: `Face ${avatarId}`, avatar_id: avatarId, voice_id: voiceId, concurrency_limit: 5, studio: { backdrop: 'warm_office' } },
      })
    ).body;
    const started = await t.request('POST', '/v1/sessions', { body: { agent_id: agent.id, mode: 'render', look: { camera } } });
    assert.equal(started.status, 201);
    const client = await RenderClient.open(started.body.ws_url);
    const page: Page = await browser.newPage({ viewport: { width: 640, height: 360 } });
    page.on('pageerror', (e) => console.error('page error:', e));
    await page.goto(started.body.player_url);
    await page.waitForFunction('window.presence?.state === "live"', null, { timeout: 60_000 });
    return { client, page, sessionId: started.body.session_id as string };
  }

  test('lips move with the speech and rest in silence; interrupt closes the mouth', async () => {
    const { client, page } = await session('face01', 'af_bella');
    await page.evaluate(RECORDER);
    const audio = concat(silence(0.3), voiced(0.8), silence(0.8), voiced(0.8), silence(0.5));
    for (const piece of pieces(audio, 0.1)) client.speak(piece, { event_id: 'speech' });
    client.send({ type: 'agent.speak_end' });
    const started = (await client.waitForType('agent.speak_started')).event.at as number;
    await client.waitForType('agent.speak_ended', 1, 15_000);
    await sleep(800); // the page hears it a little later than it leaves
    const rows = (await page.evaluate('window.__jaw')) as number[][];
    const at = (from: number, to: number) => rows.filter(([time]) => time >= started + from && time <= started + to).map(([, jaw]) => jaw);
    const speaking = [...at(0.45, 1.0), ...at(2.05, 2.8)];
    const quiet = [...at(1.25, 1.85), ...at(2.95, 3.1)];
    assert.ok(speaking.length > 10 && quiet.length > 5, `samples: ${speaking.length} speaking, ${quiet.length} quiet`);
    const mean = speaking.reduce((a, b) => a + b, 0) / speaking.length;
    assert.ok(mean > 0.2, `jawOpen during speech: mean ${mean.toFixed(2)}`);
    assert.ok(Math.max(...quiet) < 0.08, `jawOpen in silence: max ${Math.max(...quiet).toFixed(2)}`);

    // Interrupt mid-utterance: voice and lips stop together.
    client.speak(voiced(4), { event_id: 'long' });
    await page.waitForFunction('(window.presence.morphs().jawOpen ?? 0) > 0.25', null, { timeout: 10_000, polling: 10 });
    client.send({ type: 'agent.interrupt' });
    await client.waitForType('agent.audio_buffer_cleared');
    await page.waitForFunction('window.presence.lastInterrupt.closed !== null', null, { timeout: 3_000, polling: 10 });
    const { received, closed } = (await page.evaluate('window.presence.lastInterrupt')) as { received: number; closed: number };
    assert.ok(closed - received <= 150, `mouth closed ${Math.round(closed - received)} ms after the interrupt reached the page`);
    await sleep(300);
    assert.ok(((await page.evaluate('window.presence.morphs().jawOpen ?? 0')) as number) < 0.05, 'and stays closed');
    await page.close();
    client.close();
  });

  test('each camera cuts on command; screenshots of two faces', async () => {
    for (const [face, voice] of [
      ['face01', 'af_bella'],
      ['face02', 'am_michael'],
    ] as const) {
      const { client, page } = await session(face, voice, 'mid');
      for (const camera of ['far', 'mid', 'close'] as const) {
        client.send({ type: 'stage.camera', camera });
        await page.waitForFunction(`window.presence.camera === '${camera}'`, null, { timeout: 10_000 });
        await sleep(1500); // eased moves settle
        await page.screenshot({ path: artifact(`real-${face}-${camera}.png`) });
      }
      await page.close();
      client.close();
    }
  });

  test('the page reconnects by itself when the server drops its socket, and keeps playing', async () => {
    const { client, page, sessionId } = await session('face01', 'af_bella');
    const live = t.context.realtime.get(sessionId)!;
    const players = () => live.player.connections.size;
    assert.equal(players(), 1);
    for (const c of live.player.connections) c.socket.terminate();
    await sleep(200);
    const deadline = Date.now() + 20_000;
    while (players() === 0 && Date.now() < deadline) await sleep(100);
    assert.equal(players(), 1, 'the page came back');
    await page.waitForFunction('window.presence.state === "live"', null, { timeout: 20_000 });
    client.speak(voiced(0.8), { event_id: 'after-reconnect' });
    client.send({ type: 'agent.speak_end' });
    await page.waitForFunction('(window.presence.morphs().jawOpen ?? 0) > 0.2', null, { timeout: 10_000, polling: 10 });
    await page.close();
    client.close();
  });
});
