/**
 * The live conversation loop on a real server, both database engines: the offline brain answers,
 * the offline speech engine voices, the real-time path plays to a real player channel; recorded
 * speech goes through the real Silero VAD and pocketsphinx. Welcome first, typed turns and
 * `visitor.message`, captions and states, the latency waterfall in the record, recorded speech
 * heard as a turn, barge-in over the agent (its voice paused at once, then cut, or resumed after a
 * back-channel), language switching on typed text, and the existing
 * commands steering a live conversation.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { forEachEngine, startTestApp, type TestApp } from '../support/app.js';
import { librivox, silence, concat, mix, speechSpan, testdataInstalled } from '../recognition/recordings.js';
import { talkingAgent, startConversation, TalkingPage, turnsOf, waitForTurns } from './support.js';

/** A quiet room's noise (about -45 dBFS peak), deterministic. */
function roomNoise(ms: number): Int16Array {
  let seed = 11;
  return Int16Array.from({ length: ms * 16 }, () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return ((seed / 0x7fffffff) * 2 - 1) * 300;
  });
}

forEachEngine('live conversation', (engine) => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(engine, { STT_ENGINE: 'pocketsphinx' });
    await t.context.speech.start();
  });
  after(async () => t.close());

  test('the welcome is spoken once the page opens, then a typed turn is answered with the fact, captioned and recorded with its waterfall', async () => {
    const agent = await talkingAgent(t, { welcome_message: 'Hello, I am Ava from Rosa Bakery. How can I help?' });
    const { id, playerUrl } = await startConversation(t, agent);
    const page = await TalkingPage.open(playerUrl);
    await page.waitFor(() => /rosa bakery/i.test(page.captions()), 20_000, 'the welcome caption');
    // Heard to its end (a turn typed over it would cut it, and the record would keep only what was heard).
    await page.waitFor(() => page.of('utterance_end').some((m) => /^welcome_/.test(m.utterance)), 20_000, 'the welcome heard');
    assert.ok(
      page.of('state').some((s) => s.state === 'talking'),
      'talking while welcoming',
    );
    assert.ok(page.player.frames.length > 0, 'welcome audio reached the page');
    const welcomeFrames = page.player.frames.length;

    page.send({ type: 'visitor_text', text: 'When are you open on Saturday?' });
    await page.waitFor(() => page.of('visitor_transcript').some((m) => m.final && /saturday/i.test(m.text)), 10_000, 'the visitor transcript');
    await page.waitFor(
      () =>
        /8|eight|6|six/i.test(
          page
            .captions()
            .split(/how can i help\?*/i)
            .pop() ?? '',
        ),
      30_000,
      'the answer caption',
    );
    assert.ok(
      page.of('state').some((s) => s.state === 'thinking'),
      'thinking shown',
    );
    assert.ok(page.player.frames.length > welcomeFrames, 'answer audio reached the page');
    const caption = page.of('caption').at(-1);
    assert.equal(typeof caption.t, 'number');
    assert.match(caption.utterance, /^answer_/);

    const turns = await waitForTurns(t, id, 3);
    assert.deepEqual(
      turns.map((x) => x.role),
      ['agent', 'visitor', 'agent'],
    );
    assert.match(turns[0].text, /Rosa Bakery/);
    assert.equal((turns[0].details as any).source, 'welcome');
    assert.equal(turns[1].text, 'When are you open on Saturday?');
    assert.equal((turns[1].details as any).source, 'typed');
    const answer = turns[2];
    assert.match(answer.text, /8|6/, answer.text);
    const details = answer.details as any;
    assert.equal(details.source, 'answer');
    assert.equal(details.engine, 'offline');
    const w = details.latency_ms;
    assert.ok(w.first_text !== null && w.first_audio !== null, JSON.stringify(w));
    assert.ok(w.first_text >= 0 && w.first_audio >= w.first_text && w.heard > w.first_audio, JSON.stringify(w));
    page.close();
  });

  test('visitor.message: answered in the agent voice without a page, after the welcome; both turns recorded; 422 wrong_mode in render mode', async () => {
    const agent = await talkingAgent(t, { welcome_message: 'Hi there, welcome to Rosa Bakery.' });
    const { id } = await startConversation(t, agent);
    const sent = await t.request('POST', `/v1/sessions/${id}/commands`, { body: { type: 'visitor.message', text: 'What is your phone number?' } });
    assert.equal(sent.status, 202, JSON.stringify(sent.body));
    assert.match(sent.body.event_id, /^evt_/);
    const turns = await waitForTurns(t, id, 3);
    assert.deepEqual(
      turns.map((x) => [x.role, (x.details as any).source]),
      [
        ['agent', 'welcome'],
        ['visitor', 'typed'],
        ['agent', 'answer'],
      ],
    );
    assert.match(turns[2].text, /555/);
    assert.ok((turns[2].details as any).latency_ms.first_audio > 0, 'voiced even without a page');

    const empty = await t.request('POST', `/v1/sessions/${id}/commands`, { body: { type: 'visitor.message', text: '   ' } });
    assert.equal(empty.status, 422);
    const long = await t.request('POST', `/v1/sessions/${id}/commands`, { body: { type: 'visitor.message', text: 'x'.repeat(2001) } });
    assert.equal(long.status, 422);

    const render = await t.request('POST', '/v1/sessions', { body: { agent_id: agent, mode: 'render' } });
    const wrong = await t.request('POST', `/v1/sessions/${render.body.session_id}/commands`, { body: { type: 'visitor.message', text: 'hello' } });
    assert.equal(wrong.status, 422);
    assert.match(JSON.stringify(wrong.body), /wrong_mode/);
    await t.request('POST', `/v1/sessions/${render.body.session_id}/stop`);
    await t.request('POST', `/v1/sessions/${id}/stop`);
  });

  test('visitor values and the visitor id reach the conversation: the welcome names the visitor, the answering engine gets them', async () => {
    const agent = await talkingAgent(t, { welcome_message: 'Hello {{visitor.first_name}}, welcome back to Rosa Bakery!' });
    const { row } = await t.context.sessions.start(
      t.accountId,
      { agent_id: agent, mode: 'conversation' },
      { id: 'visitor-42', values: { first_name: 'Maria' } },
    );
    const seen: any[] = [];
    t.context.conversationLoop.missingDetails = async (conversation) => {
      seen.push(conversation);
      return [];
    };
    try {
      await t.request('POST', `/v1/sessions/${row.id}/commands`, { body: { type: 'visitor.message', text: 'Hi!' } });
      const turns = await waitForTurns(t, row.id, 3);
      assert.equal(turns[0].text, 'Hello Maria, welcome back to Rosa Bakery!');
      assert.deepEqual(seen[0].visitor, { first_name: 'Maria' });
      const record = await t.database.db.selectFrom('conversations').select(['visitor_id', 'visitor']).where('id', '=', row.id).executeTakeFirstOrThrow();
      assert.equal(record.visitor_id, 'visitor-42');
      assert.deepEqual(record.visitor, { first_name: 'Maria' });
      await t.request('POST', `/v1/sessions/${row.id}/stop`);
    } finally {
      t.context.conversationLoop.missingDetails = undefined;
    }
  });

  test('the missingDetails hook sees the conversation before each answer, and the agent asks for the detail', async () => {
    const agent = await talkingAgent(t);
    const seen: any[] = [];
    t.context.conversationLoop.missingDetails = async (conversation) => {
      seen.push(conversation);
      return [{ name: 'email', description: "The visitor's email address" }];
    };
    try {
      const { id } = await startConversation(t, agent);
      await t.request('POST', `/v1/sessions/${id}/commands`, { body: { type: 'visitor.message', text: 'Do you deliver cakes?' } });
      const turns = await waitForTurns(t, id, 2);
      assert.match(turns[1].text, /may I have your email address/i, turns[1].text);
      assert.equal(seen.length, 1);
      assert.equal(seen[0].conversationId, id);
      assert.equal(seen[0].agentId, agent);
      assert.deepEqual(seen[0].history, [{ role: 'visitor', text: 'Do you deliver cakes?' }]);
      await t.request('POST', `/v1/sessions/${id}/stop`);
    } finally {
      t.context.conversationLoop.missingDetails = undefined;
    }
  });

  test("agent.speak_text steers a live conversation (recorded as the agent's turn); a typed Spanish turn switches the answer to Spanish", async () => {
    const agent = await talkingAgent(t, { languages: { main: 'en', also: ['es'] } });
    const { id, playerUrl } = await startConversation(t, agent);
    const page = await TalkingPage.open(playerUrl);
    const said = await t.request('POST', `/v1/sessions/${id}/commands`, { body: { type: 'agent.speak_text', text: 'We have fresh pastel de nata today.' } });
    assert.equal(said.status, 202);
    await page.waitFor(() => /pastel/i.test(page.captions()), 20_000, 'the business text spoken');
    page.send({ type: 'visitor_text', text: '¿Cuál es vuestro número de teléfono, por favor?' });
    const turns = await waitForTurns(t, id, 3);
    assert.deepEqual(
      turns.map((x) => [x.role, (x.details as any).source]),
      [
        ['agent', 'command'],
        ['visitor', 'typed'],
        ['agent', 'answer'],
      ],
    );
    assert.equal(turns[1].language, 'es');
    assert.equal(turns[2].language, 'es');
    page.send({ type: 'visitor_text', text: 'And do you deliver cakes in the city?' });
    const more = await waitForTurns(t, id, 5);
    assert.equal(more[4].language, 'en', 'back to English when the visitor is');
    page.close();
  });

  test('recorded speech through the microphone is heard as a turn (VAD, end of turn, pocketsphinx) and answered, with the full waterfall', {
    skip: !testdataInstalled() && 'pocketsphinx-testdata is not installed',
  }, async () => {
    const agent = await talkingAgent(t);
    const { id, playerUrl } = await startConversation(t, agent);
    const page = await TalkingPage.open(playerUrl);
    const clip = librivox()[1]; // "he was not an ill disposed young man"
    await page.speak(concat(silence(300), clip.pcm, silence(1500)));
    // Recognition runs in a child process: on a loaded machine it can take many seconds.
    const turns = await waitForTurns(t, id, 2, 90_000);
    const visitor = turns.find((x) => x.role === 'visitor')!;
    assert.equal((visitor.details as any).source, 'voice');
    assert.equal((visitor.details as any).engine, 'pocketsphinx');
    assert.ok(visitor.text.split(' ').length >= 3, `heard: ${visitor.text}`);
    assert.ok(page.of('visitor_transcript').some((m) => m.final && m.text === visitor.text));
    const answer = (await waitForTurns(t, id, 2)).find((x) => x.role === 'agent')!;
    const w = (answer.details as any).latency_ms;
    assert.ok(w.end_of_turn > 0 && w.recognised >= w.end_of_turn && w.first_audio >= w.recognised && w.first_audio >= w.first_text, JSON.stringify(w));
    // Prepared ahead (the decoder's words came during the pause), the answer began before the turn ended.
    if (typeof w.prepared === 'number') assert.ok(w.prepared > 0 && w.first_text >= w.prepared, JSON.stringify(w));
    else assert.ok(w.first_text >= w.recognised, JSON.stringify(w));
    page.close();
  });

  test('barge-in: the visitor speaking over the agent stops its voice and lips, and the agent listens again', {
    skip: !testdataInstalled() && 'pocketsphinx-testdata is not installed',
  }, async () => {
    const agent = await talkingAgent(t);
    const { id, playerUrl } = await startConversation(t, agent);
    const page = await TalkingPage.open(playerUrl);
    const long =
      'Let me tell you about our bakery. We bake bread every morning before dawn. Our cakes are made with butter and fresh eggs. We also sell coffee, tea and juice. Many people come every day for our custard tarts, and we are proud of them.';
    await t.request('POST', `/v1/sessions/${id}/commands`, { body: { type: 'agent.speak_text', event_id: 'long-talk', text: long } });
    await page.waitFor(() => page.of('state').some((s) => s.state === 'talking'), 20_000, 'the agent talking');
    const clip = librivox()[4]; // "he might even have been made amiable himself"
    await page.speak(concat(clip.pcm, silence(1200)));
    await page.waitFor(() => page.of('interrupt').length > 0, 10_000, 'the interrupt');
    await page.waitFor(() => page.of('state').at(-1)?.state !== 'talking', 10_000, 'the agent stops talking');
    const messages = page.player.messages.map((m) => m.event);
    const cut = messages.findIndex((m) => m.type === 'interrupt');
    // The voice paused at the visitor's first words, then the barge-in was confirmed: no resume between.
    const paused = messages.findIndex((m) => m.type === 'pause');
    assert.ok(paused >= 0 && paused < cut, 'paused before the interrupt');
    assert.equal(messages.slice(paused, cut).filter((m) => m.type === 'resume').length, 0, 'not resumed before the interrupt');
    assert.equal(messages.slice(paused, cut).filter((m) => m.type === 'track').length, 0, 'nothing of the voice left between the pause and the interrupt');
    const spokenBefore = messages.slice(0, cut).filter((m) => m.type === 'track' && m.utterance === 'long-talk');
    const spokenAfter = messages.slice(cut).filter((m) => m.type === 'track' && m.utterance === 'long-talk');
    assert.ok(spokenBefore.length > 10, 'the agent had been talking');
    assert.equal(spokenAfter.length, 0, 'nothing of the interrupted speech after the interrupt');
    const played = spokenBefore.reduce((s, m) => s + m.duration, 0);
    assert.ok(played < 12, `cut short (${played.toFixed(1)} s of a ~15 s text)`);
    const turns = await turnsOf(t, id);
    assert.deepEqual(
      turns.slice(0, 1).map((x) => [x.role, (x.details as any).source]),
      [['agent', 'command']],
    );
    page.close();
  });

  test('a short sound over the agent (a back-channel) pauses its voice, which then goes on where it paused: nothing lost or said twice', {
    skip: !testdataInstalled() && 'pocketsphinx-testdata is not installed',
  }, async () => {
    const agent = await talkingAgent(t);
    const { id, playerUrl } = await startConversation(t, agent);
    const page = await TalkingPage.open(playerUrl);
    const text = 'We bake bread every morning before dawn. Our cakes are made with butter and fresh eggs, and we sell coffee and tea.';
    await t.request('POST', `/v1/sessions/${id}/commands`, { body: { type: 'agent.speak_text', event_id: 'talk', text } });
    await page.waitFor(() => page.of('state').some((s) => s.state === 'talking'), 20_000, 'the agent talking');
    // A room's quiet noise for 2 s (the echo guard learns that the microphone does not carry the
    // agent's voice), a quarter of a second of a real voice ("mm-hm" is about that long), quiet again.
    const clip = librivox()[4];
    const onset = speechSpan(clip.pcm).startMs * 16;
    const burst = clip.pcm.subarray(onset, onset + 250 * 16);
    await page.speak(mix(roomNoise(2000 + 250 + 1500), concat(silence(2000), burst)));
    await page.waitFor(() => page.of('utterance_end').some((m) => m.utterance === 'talk'), 30_000, 'the talk heard to its end');
    const messages = page.player.messages.map((m) => m.event);
    const paused = messages.findIndex((m) => m.type === 'pause');
    const resumed = messages.findIndex((m) => m.type === 'resume');
    assert.ok(paused >= 0, 'the voice paused');
    assert.ok(resumed > paused, 'and resumed');
    assert.equal(page.of('interrupt').length, 0, 'never interrupted');
    // The talk's audio is continuous on the session clock except for one step: the pause.
    const tracks = messages.filter((m) => m.type === 'track' && m.utterance === 'talk');
    const shift = messages[resumed].shift as number;
    assert.ok(shift > 0.05 && shift < 2, `paused for ${shift} s`);
    // A frame's `t` and `duration` travel rounded to the millisecond: a gap computed from them reads
    // up to 1.5 ms off.
    const rounding = 2e-3;
    let steps = 0;
    for (let i = 1; i < tracks.length; i++) {
      const gap = tracks[i].t - (tracks[i - 1].t + tracks[i - 1].duration);
      if (Math.abs(gap) < rounding) continue;
      steps++;
      assert.ok(
        Math.abs(gap - shift) < rounding,
        `a step of ${gap} s between frames ${i - 1} and ${i} (${JSON.stringify(tracks.slice(Math.max(0, i - 2), i + 2).map((m) => [m.t, m.duration]))}), the pause was ${shift} s`,
      );
    }
    assert.equal(steps, 1, 'one step in the talk, at the pause');
    const before = messages.slice(0, paused).filter((m) => m.type === 'track' && m.utterance === 'talk').length;
    assert.ok(before > 5 && before < tracks.length, 'paused mid-talk');
    const turns = await turnsOf(t, id);
    assert.equal(turns.filter((x) => x.role === 'visitor').length, 0, 'the sound was no turn');
    page.close();
  });
});
