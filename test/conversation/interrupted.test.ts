/**
 * Agent turns cut off while spoken, on a real server, both database engines: the record keeps what
 * the visitor heard of them (not what was generated) and marks them `interrupted`, whether the cut
 * came from the business's agent.interrupt or from a new visitor turn; a turn heard to its end is
 * not marked, and later turns stay after the cut one in the transcript.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { forEachEngine, startTestApp, type TestApp } from '../support/app.js';
import { talkingAgent, startConversation, TalkingPage, waitForTurns } from './support.js';

const LONG_WELCOME =
  'Hello and welcome to Rosa Bakery in Lisbon. We bake bread every morning before dawn, our cakes are made with butter and fresh eggs, ' +
  'and we also sell coffee, tea and juice. Many people come every day for our custard tarts, and we are very proud of them. How can I help you today?';

forEachEngine('interrupted agent turns', (engine) => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(engine);
    await t.context.speech.start();
  });
  after(async () => t.close());

  /** Seconds of an utterance's audio that reached the page before its interrupt. */
  function playedBeforeInterrupt(page: TalkingPage, utterance: RegExp): number {
    const messages = page.player.messages.map((m) => m.event);
    const cut = messages.findIndex((m) => m.type === 'interrupt');
    return messages
      .slice(0, cut < 0 ? undefined : cut)
      .filter((m) => m.type === 'track' && utterance.test(m.utterance))
      .reduce((sum, m) => sum + m.duration, 0);
  }

  test('agent.interrupt during the welcome: the record keeps the words heard and marks the turn interrupted', async () => {
    const agent = await talkingAgent(t, { welcome_message: LONG_WELCOME });
    const { id, playerUrl } = await startConversation(t, agent);
    const page = await TalkingPage.open(playerUrl);
    await page.waitFor(() => playedBeforeInterrupt(page, /^welcome_/) >= 2.5, 30_000, 'some seconds of the welcome');
    const interrupted = await t.request('POST', `/v1/sessions/${id}/commands`, { body: { type: 'agent.interrupt' } });
    assert.equal(interrupted.status, 202, JSON.stringify(interrupted.body));
    await page.waitFor(() => page.of('interrupt').length > 0, 10_000, 'the interrupt');
    const played = playedBeforeInterrupt(page, /^welcome_/);
    const [welcome] = await waitForTurns(t, id, 1);
    const details = welcome.details as any;
    assert.equal(details.source, 'welcome');
    assert.equal(details.interrupted, true);
    assert.equal(details.generated, LONG_WELCOME);
    assert.ok(welcome.text.length > 0 && welcome.text.length < LONG_WELCOME.length, `heard: ${welcome.text}`);
    assert.ok(LONG_WELCOME.startsWith(welcome.text), `a prefix of the welcome: ${welcome.text}`);
    // Words heard match the audio played: about 2–4 words a second, never more than was played.
    const words = welcome.text.split(' ').length;
    assert.ok(words >= 2 && words <= Math.ceil(played * 4.5), `${words} words for ${played.toFixed(2)} s played`);
    const transcript = await t.context.conversations.transcript(id);
    assert.equal(transcript[0].interrupted, true);
    assert.equal(transcript[0].text, welcome.text);
    page.close();
  });

  test('a typed turn over the agent cuts it; the cut turn stays before the visitor turn, and a turn heard to its end is not marked', async () => {
    const agent = await talkingAgent(t, { welcome_message: LONG_WELCOME });
    const { id, playerUrl } = await startConversation(t, agent);
    const page = await TalkingPage.open(playerUrl);
    await page.waitFor(() => playedBeforeInterrupt(page, /^welcome_/) >= 1.5, 30_000, 'the welcome under way');
    page.send({ type: 'visitor_text', text: 'What is your phone number?' });
    await page.waitFor(
      () =>
        /555/.test(
          page
            .of('caption')
            .filter((c) => /^answer_/.test(c.utterance))
            .map((c) => c.text)
            .join(' '),
        ),
      30_000,
      'the answer',
    );
    await page.waitFor(() => page.of('utterance_end').some((m) => /^answer_/.test(m.utterance)), 30_000, 'the answer heard to its end');
    const turns = await waitForTurns(t, id, 3);
    assert.deepEqual(
      turns.map((x) => [x.role, (x.details as any).source]),
      [
        ['agent', 'welcome'],
        ['visitor', 'typed'],
        ['agent', 'answer'],
      ],
    );
    assert.equal((turns[0].details as any).interrupted, true);
    assert.ok(LONG_WELCOME.startsWith(turns[0].text) && turns[0].text.length < LONG_WELCOME.length, turns[0].text);
    assert.equal((turns[2].details as any).interrupted, undefined);
    assert.match(turns[2].text, /555/);
    const transcript = await t.context.conversations.transcript(id);
    assert.deepEqual(
      transcript.map((x) => x.interrupted ?? false),
      [true, false, false],
    );
    assert.deepEqual(Object.keys(transcript[2]).sort(), ['at', 'role', 'text']);
    page.close();
  });
});
