/**
 * The live caption of what the agent hears, in a real browser: Chromium's fake microphone plays a
 * recorded visitor (LibriVox, pocketsphinx-testdata), the page streams it, the server hears it
 * (Silero VAD) and streams it to Deepgram, here a local fake that speaks Deepgram's wire format
 * (interim `Results` as audio arrives, finals after `Finalize`). The page must show the growing
 * words while the visitor still speaks (in its own polite live region, marked not final), replace
 * them with the final words, and clear them once the agent answers.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Browser, chromium } from 'playwright-core';
import { WebSocketServer } from 'ws';
import { encodeWav } from '../../src/speech/audio.js';
import { concat, librivox, silence, speechSpan, testdataInstalled } from '../recognition/recordings.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { artifact, CHROMIUM, CHROMIUM_ARGS, hasChromium } from './support/browser.js';

const skip = !hasChromium()
  ? 'Debian chromium is not installed (.ci/run installs it)'
  : !testdataInstalled()
    ? 'pocketsphinx-testdata is not installed'
    : false;

const WORDS = ['do', 'you', 'have', 'free', 'parking', 'behind', 'the', 'shop'];
const FINAL = 'Do you have free parking behind the shop?';

interface Shown {
  text: string;
  final: string | undefined;
  at: number;
}

describe('live caption of what the agent hears', { skip, timeout: 240_000 }, () => {
  let t: TestApp;
  let browser: Browser;
  let server: http.Server;
  /** When the fake Deepgram was asked to finalise (the server's end of the visitor's turn). */
  let finalizedAt = 0;
  let interimsSent = 0;

  before(async () => {
    server = http.createServer();
    const wss = new WebSocketServer({ server, path: '/v1/listen' });
    wss.on('connection', (socket) => {
      let bytes = 0;
      let heard = 0;
      const results = (text: string, isFinal: boolean) =>
        JSON.stringify({
          type: 'Results',
          channel_index: [0, 1],
          duration: 0.4,
          start: 0,
          is_final: isFinal,
          speech_final: isFinal,
          from_finalize: isFinal,
          channel: { alternatives: [{ transcript: text, confidence: 0.95, words: [] }] },
          metadata: { request_id: 'r', model_uuid: 'm', model_info: { name: 'nova-3', version: '1', arch: 'x' } },
        });
      socket.on('message', (data, isBinary) => {
        if (isBinary) {
          bytes += (data as Buffer).length;
          // One more word per 0.4 s of audio (16 kHz s16: 12,800 bytes), as interim results.
          const due = Math.min(WORDS.length - 1, Math.floor(bytes / 12_800));
          if (due > heard) {
            heard = due;
            interimsSent++;
            socket.send(results(WORDS.slice(0, heard).join(' '), false));
          }
          return;
        }
        const message = JSON.parse(String(data));
        if (message.type === 'Finalize') {
          finalizedAt = Date.now();
          socket.send(results(FINAL, true));
        } else if (message.type === 'CloseStream') socket.close(1000);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const deepgram = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    // Either database: PostgreSQL when TEST_DATABASE_URL is set.
    t = await startTestApp(process.env.TEST_DATABASE_URL ? 'postgres' : 'pglite', {
      STT_ENGINE: 'deepgram',
      DEEPGRAM_API_KEY: 'dg-test',
      DEEPGRAM_URL: deepgram,
    });

    // A LibriVox sentence (about 5 s of speech) after a second of silence, then a long silence:
    // Chromium loops the file, and one turn is enough.
    const clip = librivox()[2];
    const audio = concat(silence(1000), clip.pcm, silence(40_000));
    const wav = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'presence-live-caption-')), 'visitor.wav');
    fs.writeFileSync(wav, encodeWav(audio, 16000));
    assert.ok(speechSpan(clip.pcm).endMs - speechSpan(clip.pcm).startMs > 3000);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [...CHROMIUM_ARGS, '--use-fake-device-for-media-stream', `--use-file-for-fake-audio-capture=${wav}`, '--use-fake-ui-for-media-stream'],
    });
  });
  after(async () => {
    await browser?.close();
    await t?.close();
    server?.closeAllConnections();
    server?.close();
  });

  test('partial words show while the visitor speaks, the final words replace them, the answer clears them', async () => {
    const agent = (
      await t.request('POST', '/v1/agent/create', {
        body: { name: 'Ava', system_prompt: 'You are Ava, the assistant of the Corner Coffee shop. Yes, we have free parking behind the shop for 20 cars.' },
      })
    ).body;
    const started = await t.request('POST', '/v1/sessions', { body: { agent_id: agent.id, mode: 'conversation' } });
    assert.equal(started.status, 201, JSON.stringify(started.body));
    const context = await browser.newContext({ viewport: { width: 480, height: 640 } });
    await context.grantPermissions(['microphone']);
    const page = await context.newPage();
    page.on('pageerror', (e) => console.error('page error:', e));
    // Every change of the visitor's caption, with the wall clock (the same machine as the fake).
    await page.addInitScript(() => {
      const w = window as unknown as { shown: Shown[] };
      w.shown = [];
      document.addEventListener('DOMContentLoaded', () => {
        const line = document.getElementById('caption-visitor');
        if (!line) return;
        new MutationObserver(() => w.shown.push({ text: line.textContent ?? '', final: line.dataset.final, at: Date.now() })).observe(line, {
          childList: true,
          characterData: true,
          subtree: true,
          attributes: true,
        });
      });
    });
    await page.goto(started.body.player_url);
    await page.waitForFunction('window.presence?.state === "live" && window.presence.microphone === "granted"', null, { timeout: 60_000 });

    // The live region: its own, polite, apart from the agent's captions.
    const line = page.locator('#caption-visitor');
    assert.equal(await line.getAttribute('aria-live'), 'polite');
    assert.ok(await line.getAttribute('aria-label'));
    assert.equal(await page.locator('#caption-agent').getAttribute('aria-live'), 'polite');

    // A partial caption, while the visitor still speaks.
    await page.waitForFunction('window.presence.conversation.visitorCaption.split(" ").length >= 3', null, { timeout: 90_000, polling: 20 });
    assert.equal(await line.getAttribute('data-final'), 'false');
    assert.ok(await line.isVisible());
    await page.screenshot({ path: artifact('live-caption-partial.png') });
    // With both captions on screen, axe finds no serious or critical issue on the page.
    const axe: any = await page.evaluate(
      `${fs.readFileSync(path.resolve('node_modules/axe-core/axe.min.js'), 'utf8')}; axe.run(document, { resultTypes: ['violations'] })`,
    );
    assert.deepEqual(
      axe.violations
        .filter((v: any) => v.impact === 'serious' || v.impact === 'critical')
        .map((v: any) => `${v.id}: ${v.nodes.map((n: any) => n.target.join(' '))}`),
      [],
    );

    // The final words replace it; then the agent's answer clears it.
    await page.waitForFunction(`window.presence.conversation.visitorCaption === ${JSON.stringify(FINAL)}`, null, { timeout: 60_000, polling: 20 });
    await page.waitForFunction(`/20 cars/.test(window.presence.conversation.caption)`, null, { timeout: 120_000, polling: 50 });
    await page.waitForFunction('window.presence.conversation.visitorCaption === ""', null, { timeout: 5000 });

    const shown = (await page.evaluate('window.shown')) as Shown[];
    const partials = shown.filter((s) => s.final === 'false' && s.text);
    const finalAt = shown.find((s) => s.text === FINAL && s.final === 'true')?.at;
    assert.ok(interimsSent >= 3, `${interimsSent} interim results`);
    assert.ok(partials.length >= 2, `partial captions: ${JSON.stringify(shown)}`);
    // Growing words, each one a prefix of the next, all before the turn was finalised.
    for (let i = 1; i < partials.length; i++) assert.ok(partials[i].text.startsWith(partials[i - 1].text), JSON.stringify(partials));
    assert.ok(finalizedAt > 0 && partials.every((p) => p.at <= finalizedAt + 50), 'partials came before the end of the turn');
    assert.ok(finalAt && finalAt >= partials[partials.length - 1].at, 'the final words replaced the partial ones');
    assert.equal(shown[shown.length - 1].text, '', 'cleared when the agent answered');
    await context.close();
  });
});
