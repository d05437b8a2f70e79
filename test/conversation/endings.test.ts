/**
 * How a live conversation ends on its own, both database engines: the page gone past the grace
 * period (`visitor_left`; a page back in time carries on), and a visitor who says nothing for too
 * long (`idle`, after a spoken goodbye). Each ending fires the one conversation-ended hook.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { forEachEngine, startTestApp, type TestApp } from '../support/app.js';
import type { EndedConversation } from '../../src/conversation/types.js';
import { talkingAgent, startConversation, TalkingPage, turnsOf } from './support.js';

forEachEngine('live conversation endings', (engine) => {
  let t: TestApp;
  const ended: EndedConversation[] = [];
  before(async () => {
    t = await startTestApp(engine, { STT_ENGINE: 'none', VISITOR_LEFT_SECONDS: '2', CONVERSATION_IDLE_SECONDS: '6' });
    await t.context.speech.start();
    t.context.conversations.onEnded.push((conversation) => void ended.push(conversation));
  });
  after(async () => t.close());

  async function session(id: string) {
    return (await t.request('GET', `/v1/sessions/${id}`)).body;
  }
  async function waitEnded(id: string, timeoutMs: number) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const s = await session(id);
      if (s.status === 'ended') return s;
      if (Date.now() > deadline) throw new Error(`session still ${s.status}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  async function hookFor(id: string, timeoutMs = 15_000) {
    const deadline = Date.now() + timeoutMs;
    while (!ended.some((c) => c.conversationId === id)) {
      if (Date.now() > deadline) throw new Error('the ended hook did not fire');
      await new Promise((r) => setTimeout(r, 100));
    }
    return ended.filter((c) => c.conversationId === id);
  }

  test('a page that comes back within the grace period carries on; one gone past it ends the conversation visitor_left', async () => {
    const agent = await talkingAgent(t);
    const { id, playerUrl } = await startConversation(t, agent);
    const first = await TalkingPage.open(playerUrl);
    first.send({ type: 'visitor_text', text: 'What is your phone number?' });
    await first.waitFor(() => /555/.test(first.captions()), 30_000, 'the answer');
    first.close();
    await new Promise((r) => setTimeout(r, 500));
    const again = await TalkingPage.open(playerUrl); // a network drop: the page reconnects
    await new Promise((r) => setTimeout(r, 2500));
    assert.equal((await session(id)).status, 'active', 'a reconnect within the grace keeps the conversation');
    const closedAt = Date.now();
    again.close();
    const s = await waitEnded(id, 15_000);
    assert.equal(s.end_reason, 'visitor_left');
    assert.ok(Date.now() - closedAt >= 1900, 'not before the grace period');
    const hooks = await hookFor(id);
    assert.equal(hooks.length, 1);
    assert.equal(hooks[0].endReason, 'visitor_left');
    assert.equal(hooks[0].visitorTurns, 1);
    assert.deepEqual(
      hooks[0].transcript.map((x) => x.role),
      ['visitor', 'agent'],
    );
  });

  test('a visitor who says nothing hears a goodbye and the conversation ends idle', async () => {
    const agent = await talkingAgent(t, { welcome_message: 'Hello! Ask me anything about Rosa Bakery.' });
    const { id, playerUrl } = await startConversation(t, agent);
    const page = await TalkingPage.open(playerUrl);
    await page.waitFor(() => /anything/i.test(page.captions()), 20_000, 'the welcome');
    const s = await waitEnded(id, 40_000);
    assert.equal(s.end_reason, 'idle');
    assert.match(page.captions(), /goodbye/i, 'the goodbye was spoken before the end');
    const ended = page.of('ended');
    assert.equal(ended[0]?.reason, 'idle');
    const turns = await turnsOf(t, id);
    assert.deepEqual(
      turns.map((x) => (x.details as any).source),
      ['welcome', 'goodbye'],
    );
    const hooks = await hookFor(id);
    assert.equal(hooks.length, 1);
    assert.equal(hooks[0].endReason, 'idle');
    page.close();
  });
});
