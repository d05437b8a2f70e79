/**
 * Premium speech that the conversation loop voices (its answers) is charged like speak_text's:
 * the loop speaks through the same billing-aware speaker factory. A stand-in speaker voices every
 * text as exactly 2.5 s of audio, so the charge is known to the cent.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { forEachEngine, startTestApp, type TestApp } from '../support/app.js';
import { until } from '../support/until.js';
import { makeAgent, PREMIUM_VOICE, started, stopSession } from '../sessions/helpers.js';
import type { SpeakerFactory } from '../../src/realtime/service.js';

/** 2.5 s of quiet per request, in two pieces, whatever the text (read to its end, as an engine would). */
const speakerFor: SpeakerFactory = () =>
  async function* (request) {
    if (typeof request.text !== 'string') for await (const _ of request.text) void _;
    const half = Math.round(request.sampleRate * 1.25);
    yield { pcm: new Int16Array(half) };
    yield { pcm: new Int16Array(half) };
  };

forEachEngine('premium speech of the conversation loop', (engine) => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(
      engine,
      { PRICE_PER_MINUTE: '6.00', PREMIUM_VOICE_PRICE_PER_MINUTE: '3.00', BILLING_CHARGE_INTERVAL_SECONDS: '0.3' },
      { speakerFor },
    );
  });
  after(() => t?.close());

  test("a conversation's premium answers are charged per second voiced; a free voice's are not", async () => {
    const paid = await t.account('paid', { balance: '20.00' });
    const agentId = await makeAgent(
      t,
      { name: 'Ava', system_prompt: 'You are Ava of Rosa Bakery. We are open Monday to Saturday from 8 am to 6 pm.', concurrency_limit: 5 },
      paid.key,
    );
    const talk = async (voice: string | undefined) => {
      const s = await started(t, { agent_id: agentId, mode: 'conversation', ...(voice && { voice_id: voice }) }, paid.key);
      const agentTurns = () =>
        t.request('GET', `/v1/reports/conversations/${s.session_id}`, { key: paid.key }).then((r) => r.body.agent_turns as number | undefined);
      for (const text of ['When are you open?', 'And on Sunday?']) {
        const before = (await agentTurns()) ?? 0;
        const sent = await t.request('POST', `/v1/sessions/${s.session_id}/commands`, { key: paid.key, body: { type: 'visitor.message', text } });
        assert.equal(sent.status, 202, JSON.stringify(sent.body));
        await until(async () => ((await agentTurns()) ?? 0) > before || undefined, 30_000, 'the agent answer');
      }
      return stopSession(t, s.session_id, paid.key);
    };
    const premium = await talk(PREMIUM_VOICE);
    const free = await talk(undefined);
    const items = await until(
      async () => {
        const res = await t.request('GET', '/v1/billing/line-items', { key: paid.key });
        const voice = res.body.items.filter((i: any) => i.kind === 'premium_voice');
        const sessions = res.body.items.filter((i: any) => i.kind === 'session');
        return voice.length && sessions.length === 2 ? res.body.items : undefined;
      },
      30_000,
      'the charges',
    );
    const voice = items.filter((i: any) => i.kind === 'premium_voice');
    // Two answers of 2.5 s each: 5 s at 3.00 a minute = 0.25, on the premium session only.
    assert.deepEqual(
      voice.map((i: any) => [i.session_id, i.seconds, i.amount]),
      [[premium.session_id, 5, '0.25']],
    );
    assert.ok(!items.some((i: any) => i.kind === 'premium_voice' && i.session_id === free.session_id));
  });
});
