/**
 * The whole conversation loop in a real browser: Chromium's fake microphone plays a visitor's
 * spoken question (synthesised by the offline speech engine, 16 kHz), the page streams it over the
 * player channel, the server hears it (Silero VAD, end of turn, Debian's pocketsphinx), the offline
 * brain answers it from the agent's system prompt, and the answer is spoken back through the
 * real-time path: the page plays it (audio heard), captions it, and both turns are recorded.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { startTestApp, type TestApp } from '../support/app.js';
import { CHROMIUM, CHROMIUM_ARGS, hasChromium, artifact } from './support/browser.js';
import { encodeWav } from '../../src/speech/audio.js';
import { pocketsphinxMissing } from '../../src/speech/recognition/pocketsphinx.js';

const skip = !hasChromium() ? 'Debian chromium is not installed (.ci/run installs it)' : pocketsphinxMissing() ? 'pocketsphinx is not installed' : false;

const QUESTION = 'Do you have free parking?';
const FACT = /20 cars/;

describe('a spoken question answered in the browser', { skip, timeout: 300_000 }, () => {
  let t: TestApp;
  let browser: Browser;

  before(async () => {
    t = await startTestApp('pglite', { STT_ENGINE: 'pocketsphinx' });
    // The question in the offline engine's male voice (pocketsphinx hears it word for word), then a
    // long silence: Chromium loops the file, and one question per test is enough.
    const { pcm } = await t.context.speech.synthesizeAll({ text: QUESTION, provider: 'kokoro', voiceId: 'am_adam', sampleRate: 16000 } as never);
    const audio = new Int16Array(16000 * 1 + pcm.length + 16000 * 30);
    audio.set(pcm, 16000);
    const wav = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'presence-question-')), 'question.wav');
    fs.writeFileSync(wav, encodeWav(audio, 16000));
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [...CHROMIUM_ARGS, '--use-fake-device-for-media-stream', `--use-file-for-fake-audio-capture=${wav}`, '--use-fake-ui-for-media-stream'],
    });
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  test('the agent answers the spoken question with the right fact, heard, captioned and recorded', async () => {
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
    await page.goto(started.body.player_url);
    await page.waitForFunction('window.presence?.state === "live" && window.presence.microphone === "granted"', null, { timeout: 60_000 });

    // The answer's caption carries the fact.
    await page.waitForFunction(`/20 cars/.test(window.presence.conversation.caption)`, null, { timeout: 150_000, polling: 50 });
    await page.screenshot({ path: artifact('conversation-answer.png') });
    // And it was heard: the page played audio after the question.
    await page.waitForFunction('window.presence.audioLevels().some(([, level]) => level > 0.02)', null, { timeout: 20_000 });

    const id = started.body.session_id as string;
    let turns: { role: string; text: string }[] = [];
    for (let i = 0; i < 100 && !turns.some((turn) => turn.role === 'agent' && FACT.test(turn.text)); i++) {
      turns = await t.context.conversations.transcript(id);
      await new Promise((r) => setTimeout(r, 100));
    }
    const visitor = turns.find((turn) => turn.role === 'visitor');
    assert.ok(visitor, `a visitor turn: ${JSON.stringify(turns)}`);
    assert.match(visitor.text.toLowerCase(), /free parking/);
    assert.ok(
      turns.some((turn) => turn.role === 'agent' && FACT.test(turn.text)),
      `the agent's answer recorded: ${JSON.stringify(turns)}`,
    );
    await context.close();
  });
});
