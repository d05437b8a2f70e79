// @timed: measures real time (a stalled event loop; a caption that lingers, then clears); the runner gives it the machine to itself.
/**
 * The visitor's side of the player page in conversation mode, in Debian's Chromium with its fake
 * microphone playing a real recording (pocketsphinx-testdata): the page captures after the sound
 * starts, resamples to 16 kHz in its AudioWorklet and the frames reach the server carrying the
 * recording; the "type instead" box; captions and the listening / thinking / speaking indication;
 * mute; a network drop and reconnect; a refused microphone; and render mode never asking for it.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { startTestApp, type TestApp } from '../support/app.js';
import { RecordingInputs } from '../support/recording-inputs.js';
import { CHROMIUM, CHROMIUM_ARGS, hasChromium, artifact } from './support/browser.js';
import { librivox, testdataInstalled, silence, concat } from '../recognition/recordings.js';
import { encodeWav } from '../../src/speech/audio.js';

const skip = !hasChromium()
  ? 'Debian chromium is not installed (.ci/run installs it)'
  : !testdataInstalled()
    ? 'pocketsphinx-testdata is not installed'
    : false;

/** Log energy per 20 ms window of 16 kHz audio. */
function envelope(samples: ArrayLike<number>, from = 0, to = samples.length): number[] {
  const out: number[] = [];
  for (let i = from; i + 320 <= to; i += 320) {
    let e = 0;
    for (let k = 0; k < 320; k++) e += samples[i + k] * samples[i + k];
    out.push(Math.log10(1 + e / 320));
  }
  return out;
}

/** Best Pearson correlation of `a` against `b` at any lag (b loops: the fake microphone repeats its file). */
function bestCorrelation(a: number[], b: number[]): number {
  let best = -1;
  for (let lag = 0; lag < b.length; lag++) {
    const x: number[] = [];
    const y: number[] = [];
    for (let i = 0; i < a.length; i++) {
      x.push(a[i]);
      y.push(b[(i + lag) % b.length]);
    }
    const mx = x.reduce((s, v) => s + v, 0) / x.length;
    const my = y.reduce((s, v) => s + v, 0) / y.length;
    let sxy = 0,
      sxx = 0,
      syy = 0;
    for (let i = 0; i < x.length; i++) {
      sxy += (x[i] - mx) * (y[i] - my);
      sxx += (x[i] - mx) ** 2;
      syy += (y[i] - my) ** 2;
    }
    best = Math.max(best, sxy / Math.sqrt(sxx * syy || 1));
  }
  return best;
}

describe('player page, conversation mode (fake microphone)', { skip, timeout: 300_000 }, () => {
  let t: TestApp;
  let browser: Browser;
  let context: BrowserContext;
  const inputs = new RecordingInputs();
  let recording: Int16Array;

  before(async () => {
    // The visitor's question: a LibriVox sentence and a second of silence, looped by Chromium.
    const sentence = librivox()[0];
    recording = concat(sentence.pcm, silence(1000));
    const wav = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'presence-mic-')), 'visitor.wav');
    fs.writeFileSync(wav, encodeWav(recording, 16000));
    t = await startTestApp('pglite', {}, { visitorInputs: inputs.hook });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [...CHROMIUM_ARGS, '--use-fake-device-for-media-stream', `--use-file-for-fake-audio-capture=${wav}`, '--use-fake-ui-for-media-stream'],
    });
    context = await browser.newContext({ viewport: { width: 480, height: 640 } });
    await context.grantPermissions(['microphone']);
    // Counts getUserMedia calls (render mode must make none).
    await context.addInitScript(`(() => {
      window.__gum = 0;
      const md = navigator.mediaDevices;
      if (md && md.getUserMedia) {
        const original = md.getUserMedia.bind(md);
        md.getUserMedia = (c) => { window.__gum++; window.__constraints = c; return original(c); };
      }
    })()`);
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  async function open(mode: 'conversation' | 'render', on: BrowserContext = context) {
    const agent = (await t.request('POST', '/v1/agent/create', { body: { name: `Visitor ${mode}`, concurrency_limit: 10 } })).body;
    const started = await t.request('POST', '/v1/sessions', { body: { agent_id: agent.id, mode } });
    assert.equal(started.status, 201);
    const id = started.body.session_id as string;
    if (mode === 'conversation') inputs.live.add(id);
    const page: Page = await on.newPage();
    page.on('pageerror', (e) => console.error('page error:', e));
    await page.goto(started.body.player_url);
    await page.waitForFunction('window.presence?.state === "live"', null, { timeout: 60_000 });
    return { id, page };
  }

  const conv = (page: Page) => page.evaluate('window.presence.conversation') as Promise<any>;

  test("the microphone streams 16 kHz frames that carry the visitor's speech to the server", async (tc) => {
    const { id, page } = await open('conversation');
    await page.waitForFunction('window.presence.microphone === "granted"', null, { timeout: 20_000 });
    const constraints = (await page.evaluate('window.__constraints')) as { audio: Record<string, boolean> };
    assert.equal(constraints.audio.echoCancellation, true);
    assert.equal(constraints.audio.noiseSuppression, true);
    assert.equal(constraints.audio.autoGainControl, true);
    // Six seconds of the looped recording.
    const need = 16000 * 6;
    const deadline = Date.now() + 30_000;
    while (inputs.of(id).samples.length < need && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const got = inputs.of(id).samples;
    assert.ok(got.length >= need, `${got.length} samples arrived`);
    assert.ok(inputs.of(id).pieces >= 50, `${inputs.of(id).pieces} frames (20 ms each)`);
    assert.equal(inputs.of(id).connected, 1);
    // The content is the recording: its loudness contour over 3 s matches the file's at some lag.
    const heard = envelope(got, got.length - 16000 * 3, got.length);
    const correlation = bestCorrelation(heard, envelope(recording));
    tc.diagnostic(`envelope correlation with the recording: ${correlation.toFixed(3)}`);
    assert.ok(correlation > 0.6, `envelope correlation with the recording ${correlation.toFixed(2)}`);
    assert.equal((await conv(page)).indication, 'listening');
    assert.equal(await page.locator('#indicator .label').textContent(), 'Listening…');
    await page.screenshot({ path: artifact('conversation-listening.png') });
    await page.close();
  });

  test('the "type instead" box sends a visitor turn and shows it', async () => {
    const { id, page } = await open('conversation');
    await page.fill('#typed', '  What time do you open on Saturday?  ');
    await page.press('#typed', 'Enter');
    await new Promise((r) => setTimeout(r, 200));
    const deadline = Date.now() + 5000;
    while (inputs.of(id).typed.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(inputs.of(id).typed, ['What time do you open on Saturday?']);
    assert.equal(await page.inputValue('#typed'), '');
    assert.equal(await page.locator('#caption-visitor').textContent(), 'What time do you open on Saturday?');
    // Empty input sends nothing.
    await page.press('#typed', 'Enter');
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(inputs.of(id).typed.length, 1);
    await page.close();
  });

  test('captions of what the agent says (on by default, can be turned off) and the thinking / speaking indication', async () => {
    const { id, page } = await open('conversation');
    const session = t.context.realtime.get(id)!;
    session.player.json({ type: 'visitor_transcript', text: 'what time do you', final: false });
    await page.waitForFunction('window.presence.conversation.visitorCaption === "what time do you"');
    assert.equal(await page.locator('#caption-visitor').getAttribute('data-final'), 'false');
    session.player.json({ type: 'state', t: session.now(), state: 'thinking' });
    await page.waitForFunction('window.presence.conversation.indication === "thinking"');
    assert.equal(await page.locator('#indicator .label').textContent(), 'Thinking…');
    session.player.json({ type: 'caption', t: session.now(), utterance: 'u1', text: 'We open at nine on Saturdays.' });
    session.player.json({ type: 'state', t: session.now(), state: 'talking' });
    await page.waitForFunction('window.presence.conversation.caption === "We open at nine on Saturdays."');
    await page.waitForFunction('window.presence.conversation.indication === "speaking"');
    assert.equal(await page.locator('#caption-agent').textContent(), 'We open at nine on Saturdays.');
    assert.ok(await page.locator('#caption-agent').isVisible());
    assert.equal(await page.locator('#caption-visitor').textContent(), '', "the answer replaces the visitor's words");
    await page.screenshot({ path: artifact('conversation-caption.png') });
    // The caption clears after its utterance ends.
    session.player.json({ type: 'utterance_end', t: session.now(), utterance: 'u1' });
    session.player.json({ type: 'state', t: session.now(), state: 'listening' });
    await page.waitForFunction('window.presence.conversation.caption === ""', null, { timeout: 5000 });
    // Turned off: hidden, and remembered on the next page of this browser.
    await page.click('#cc');
    assert.equal((await conv(page)).captions, false);
    session.player.json({ type: 'caption', t: session.now(), utterance: 'u2', text: 'Anything else?' });
    await page.waitForFunction('window.presence.conversation.caption === "Anything else?"');
    assert.equal(await page.locator('#captions').isVisible(), false);
    const second = await open('conversation');
    assert.equal((await conv(second.page)).captions, false);
    await second.page.click('#cc');
    assert.equal((await conv(second.page)).captions, true);
    await second.page.close();
    await page.close();
  });

  test('mute stops the audio at the page and tells the server; unmute resumes it', async () => {
    const { id, page } = await open('conversation');
    await page.waitForFunction('window.presence.conversation.framesSent > 5', null, { timeout: 20_000 });
    await page.click('#mute');
    await page.waitForFunction('window.presence.conversation.indication === "muted"');
    const deadline = Date.now() + 5000;
    while (inputs.of(id).muted.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(inputs.of(id).muted, [true]);
    assert.equal(await page.locator('#mute').getAttribute('aria-pressed'), 'true');
    await new Promise((r) => setTimeout(r, 300));
    const before = inputs.of(id).samples.length;
    await new Promise((r) => setTimeout(r, 800));
    assert.equal(inputs.of(id).samples.length, before, 'no audio while muted');
    await page.click('#mute');
    await page.waitForFunction('window.presence.conversation.indication === "listening"');
    const resumed = Date.now() + 5000;
    while (inputs.of(id).samples.length < before + 8000 && Date.now() < resumed) await new Promise((r) => setTimeout(r, 50));
    assert.ok(inputs.of(id).samples.length >= before + 8000, 'audio again after unmute');
    assert.deepEqual(inputs.of(id).muted, [true, false]);
    await page.close();
  });

  test('after a network drop the page reconnects and the same conversation carries on hearing it', async () => {
    const { id, page } = await open('conversation');
    await page.waitForFunction('window.presence.conversation.framesSent > 5', null, { timeout: 20_000 });
    const session = t.context.realtime.get(id)!;
    session.player.close(1012, 'network drop (test)');
    await page.waitForFunction('window.presence.reconnects >= 1 && window.presence.state === "live"', null, { timeout: 20_000 });
    const dropped = inputs.of(id).samples.length;
    const deadline = Date.now() + 10_000;
    while (inputs.of(id).samples.length < dropped + 16000 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.ok(inputs.of(id).samples.length >= dropped + 16000, 'audio flows again on the new socket');
    assert.equal(inputs.of(id).connected, 2);
    assert.equal(inputs.of(id).disconnected, 1);
    assert.equal(await page.evaluate('window.presence.microphone'), 'granted', 'the microphone was not asked again');
    assert.equal(await page.evaluate('window.__gum'), 1);
    await page.close();
  });

  test('a visitor who refuses the microphone is offered the text box', async () => {
    const refusing = await browser.newContext({ viewport: { width: 480, height: 640 } });
    await refusing.addInitScript(`navigator.mediaDevices.getUserMedia = () => Promise.reject(new DOMException('denied', 'NotAllowedError'));`);
    const { id, page } = await open('conversation', refusing);
    await page.waitForFunction('window.presence.microphone === "denied"');
    assert.equal((await conv(page)).indication, 'typing-only');
    assert.equal(await page.locator('#mute').isVisible(), false);
    assert.equal(await page.evaluate('document.activeElement && document.activeElement.id'), 'typed');
    await page.keyboard.type('Do you deliver?');
    await page.keyboard.press('Enter');
    const deadline = Date.now() + 5000;
    while (inputs.of(id).typed.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(inputs.of(id).typed, ['Do you deliver?']);
    await page.screenshot({ path: artifact('conversation-typing-only.png') });

    // Framed in a page where someone is typing (the console's "Send as visitor" box, a website's
    // form), the player does not take the focus when it learns it has no microphone: its keystrokes
    // would land in the player's box instead.
    const started = await t.request('POST', '/v1/sessions', {
      body: { agent_id: (await t.request('POST', '/v1/agent/create', { body: { name: 'Framed' } })).body.id },
    });
    inputs.live.add(started.body.session_id);
    const host = await refusing.newPage();
    const hostUrl = `${new URL(started.body.player_url).origin}/__host-page`;
    await host.route(hostUrl, (route) =>
      route.fulfill({
        contentType: 'text/html',
        body: `<!doctype html><input id="host" aria-label="host"><iframe allow="microphone; autoplay" src="${started.body.player_url}"></iframe>`,
      }),
    );
    await host.goto(hostUrl);
    await host.focus('#host');
    const player = (await (await host.waitForSelector('iframe')).contentFrame())!;
    await player.waitForFunction('window.presence?.state === "live" && window.presence.microphone === "denied"', null, { timeout: 60_000 });
    assert.equal(await host.evaluate('document.activeElement && document.activeElement.id'), 'host', 'the page keeps its focus');
    await host.keyboard.type('hello');
    assert.equal(await host.inputValue('#host'), 'hello');
    assert.equal(await player.inputValue('#typed'), '');
    await refusing.close();
  });

  test('where sound needs a tap, the microphone waits for it: "Tap to start talking" starts both', async () => {
    // Headless Chromium does not enforce the autoplay policy (measured: an AudioContext runs under
    // --autoplay-policy=user-gesture-required), so this page sees what a blocking browser shows it:
    // a context that reports 'suspended' and does not resume until the visitor's first tap.
    const ctx = await browser.newContext({ viewport: { width: 480, height: 640 } });
    await ctx.grantPermissions(['microphone']);
    await ctx.addInitScript(`(() => {
      let gesture = false;
      addEventListener('pointerdown', () => { gesture = true; }, true);
      const state = Object.getOwnPropertyDescriptor(BaseAudioContext.prototype, 'state');
      Object.defineProperty(BaseAudioContext.prototype, 'state', { configurable: true, get() { return gesture ? state.get.call(this) : 'suspended'; } });
      const resume = AudioContext.prototype.resume;
      AudioContext.prototype.resume = function () { return gesture ? resume.call(this) : Promise.resolve(); };
    })()`);
    try {
      const { id, page } = await open('conversation', ctx);
      await new Promise((r) => setTimeout(r, 1000));
      assert.equal(await page.evaluate('window.presence.audioUnlocked'), false);
      assert.equal(await page.evaluate('window.presence.microphone'), 'not-asked', 'nothing captured before the tap');
      assert.equal(await page.locator('#sound span').textContent(), 'Tap to start talking');
      await page.click('#sound');
      await page.waitForFunction('window.presence.microphone === "granted" && window.presence.audioUnlocked', null, { timeout: 20_000 });
      const deadline = Date.now() + 15_000;
      while (inputs.of(id).samples.length < 16000 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.ok(inputs.of(id).samples.length >= 16000, 'audio flows after the tap');
      assert.equal(await page.locator('#sound').isVisible(), false);
    } finally {
      await ctx.close();
    }
  });

  test('render mode never asks for the microphone and shows no conversation controls', async () => {
    const { page } = await open('render');
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(await page.evaluate('window.__gum'), 0);
    assert.equal(await page.evaluate('window.presence.microphone'), 'not-asked');
    assert.equal(await page.locator('#conversation').isVisible(), false);
    await page.close();
  });
});
