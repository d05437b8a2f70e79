/**
 * The live loop over the LLM answering engine, against a local stand-in that speaks the
 * OpenAI-compatible streaming wire format (the one cloud part faked), both database engines:
 * the first sentence is voiced while the model still writes, a thinking sound fills a slow start,
 * and a visitor who speaks over the agent stops its voice and the answer being generated.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { forEachEngine, startTestApp, type TestApp } from '../support/app.js';
import { startFakeLlm, type FakeLlm } from '../brain/support/fake-llm.js';
import { librivox, silence, concat, testdataInstalled } from '../recognition/recordings.js';
import { talkingAgent, startConversation, TalkingPage, waitForTurns } from './support.js';

forEachEngine('live conversation over the LLM engine', (engine) => {
  let t: TestApp;
  let llm: FakeLlm;
  before(async () => {
    llm = await startFakeLlm();
    t = await startTestApp(engine, { STT_ENGINE: 'pocketsphinx', LLM_URL: llm.url, LLM_MODEL: 'test-model' });
    await t.context.speech.start();
  });
  after(async () => {
    await t.close();
    await llm.close();
  });

  test('a slow first token gets a thinking sound; the first sentence is voiced before the model finishes', async () => {
    const agent = await talkingAgent(t, { fillers_enabled: true, welcome_message: 'Hello, this is Rosa Bakery.' });
    const { id, playerUrl } = await startConversation(t, agent);
    const page = await TalkingPage.open(playerUrl);
    await page.waitFor(() => page.of('utterance_end').length >= 1, 30_000, 'the welcome played');
    await new Promise((r) => setTimeout(r, 1500)); // fillers are synthesised at the start
    llm.stream = {
      kind: 'stream',
      steps: [
        { text: 'We deliver cakes', delayMs: 1600 },
        { text: ' within the city for five euros.' },
        { text: ' Orders need a day of notice.', delayMs: 6000 },
      ],
    };
    page.send({ type: 'visitor_text', text: 'Do you deliver cakes?' });
    await page.waitFor(() => /notice/i.test(page.captions()), 40_000, 'the whole answer');
    const tracks = page.of('track');
    const filler = tracks.findIndex((m) => /^filler_/.test(m.utterance));
    const answer = tracks.findIndex((m) => /^answer_/.test(m.utterance));
    assert.ok(filler >= 0, 'a filler played');
    assert.ok(answer > filler, 'before the answer');
    const firstSentence = page.of('caption').find((c) => /deliver/i.test(c.text));
    const lastSentence = page.of('caption').find((c) => /notice/i.test(c.text));
    assert.ok(firstSentence && lastSentence && lastSentence.t > firstSentence.t);
    const turns = await waitForTurns(t, id, 3);
    const details = turns[2].details as any;
    assert.equal(details.engine, 'llm');
    assert.equal(details.filler, true);
    const w = details.latency_ms;
    assert.ok(w.filler >= 600 && w.filler < w.first_audio, JSON.stringify(w));
    assert.ok(w.first_text >= 1500, JSON.stringify(w));
    // The first sentence left toward the player before the model wrote its last words (6 s later).
    assert.ok(w.first_audio < w.first_text + 6000, JSON.stringify(w));
    page.close();
  });

  test('barge-in cancels the answer being generated, not only its voice', {
    skip: !testdataInstalled() && 'pocketsphinx-testdata is not installed',
  }, async () => {
    const agent = await talkingAgent(t);
    const { id, playerUrl } = await startConversation(t, agent);
    const page = await TalkingPage.open(playerUrl);
    // The model writes for 25 s: the visitor interrupts long before it is done.
    const steps = Array.from({ length: 26 }, (_, i) => ({ text: ` Sentence number ${i + 1} about our many breads and cakes.`, delayMs: i === 0 ? 0 : 1000 }));
    llm.stream = { kind: 'stream', steps };
    page.send({ type: 'visitor_text', text: 'Tell me everything about your bakery.' });
    await page.waitFor(() => page.of('state').some((s) => s.state === 'talking'), 30_000, 'the agent talking');
    // As in a real call, the visitor cuts in once the agent has been talking a moment (about 2 s of
    // its audio sent): the echo guard has then heard that none of it comes back through the microphone.
    await page.waitFor(() => page.of('track').reduce((sum, m) => sum + m.duration, 0) >= 2, 30_000, 'two seconds of the answer');
    await page.speak(concat(librivox()[4].pcm, silence(1500)));
    await page.waitFor(() => page.of('interrupt').length > 0, 15_000, 'the interrupt');
    const turns = await waitForTurns(t, id, 2);
    const answer = turns.find((x) => x.role === 'agent')!;
    const details = answer.details as any;
    assert.equal(details.interrupted, true);
    assert.ok(!/Sentence number 26/.test(answer.text), `the model's later words were never taken: ${answer.text}`);
    page.close();
  });

  test("the business's agent.interrupt cancels the answer being generated too", async () => {
    const agent = await talkingAgent(t);
    const { id, playerUrl } = await startConversation(t, agent);
    const page = await TalkingPage.open(playerUrl);
    const steps = Array.from({ length: 26 }, (_, i) => ({ text: ` Sentence number ${i + 1} about our many breads and cakes.`, delayMs: i === 0 ? 0 : 1000 }));
    llm.stream = { kind: 'stream', steps };
    page.send({ type: 'visitor_text', text: 'Tell me everything about your bakery.' });
    await page.waitFor(() => page.of('track').reduce((sum, m) => sum + m.duration, 0) >= 2, 30_000, 'two seconds of the answer');
    const cut = await t.request('POST', `/v1/sessions/${id}/commands`, { body: { type: 'agent.interrupt' } });
    assert.equal(cut.status, 202, JSON.stringify(cut.body));
    await page.waitFor(() => page.of('interrupt').length > 0, 15_000, 'the interrupt');
    const turns = await waitForTurns(t, id, 2, 15_000);
    const answer = turns.find((x) => x.role === 'agent')!;
    const details = answer.details as any;
    assert.equal(details.interrupted, true);
    // The model was stopped: what it had generated ends long before its 26th sentence.
    assert.ok(!/Sentence number 2[0-6]/.test(details.generated ?? answer.text), `generated: ${details.generated}`);
    // And nothing of this answer is voiced after the cut.
    const framesAtCut = page.of('track').length;
    await new Promise((r) => setTimeout(r, 2500));
    assert.equal(
      page.of('track').filter((m) => /^answer_/.test(m.utterance)).length,
      page
        .of('track')
        .slice(0, framesAtCut)
        .filter((m) => /^answer_/.test(m.utterance)).length,
    );
    page.close();
  });
});
