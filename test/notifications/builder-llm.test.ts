/**
 * The rule builder through a language model (LLM_URL set) against a local fake of the OpenAI
 * chat-completions wire format, driven by the real `openai` client; and its fall back to the
 * offline parser when the model fails or answers something that is not a valid rule.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { forEachEngine, startTestApp, type TestApp } from '../support/app.js';
import { makeAgent } from './helpers.js';
import { startFakeLlm, type FakeLlm } from '../brain/support/fake-llm.js';

forEachEngine('rule builder with a language model', (engine) => {
  let t: TestApp;
  let llm: FakeLlm;
  let agent: number;
  before(async () => {
    llm = await startFakeLlm();
    t = await startTestApp(engine, { LLM_URL: llm.url, LLM_MODEL: 'rules-model', LLM_API_KEY: 'sk-test' });
    agent = await makeAgent(t, { name: 'Builder agent' });
  });
  after(async () => {
    await t.close();
    await llm.close();
  });

  const build = (body: unknown) => t.request('POST', `/v1/notifications/rules/${agent}/builder`, { body });

  test('the model reads the request; its rule is answered for confirmation', async () => {
    llm.plain = {
      kind: 'json',
      content:
        '```json\n{"name": "Refund or cancellation", "category": "support", "when": {"keywords": ["Refund", "cancel my order", "refund"], "min_visitor_turns": 2}, "reply": "I will tell you when a visitor asks for a refund or to cancel.", "understood": true}\n```',
    };
    const before = llm.requests.length;
    const res = await build({ message: 'ping me when people want their money back or to cancel' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.engine, 'llm');
    assert.equal(res.body.understood, true);
    assert.deepEqual(res.body.rule, {
      name: 'Refund or cancellation',
      category: 'support',
      when: { keywords: ['refund', 'cancel my order'], min_visitor_turns: 2 },
      destination_ids: [],
      enabled: true,
    });
    assert.equal(res.body.reply, 'I will tell you when a visitor asks for a refund or to cancel.');
    const request = llm.requests[before]!;
    assert.equal(request.body.model, 'rules-model');
    assert.equal(request.headers.authorization, 'Bearer sk-test');
    assert.equal(request.body.messages[0].role, 'system');
    assert.match(request.body.messages[0].content, /JSON object/);
    assert.deepEqual(request.body.messages.at(-1), { role: 'user', content: 'ping me when people want their money back or to cancel' });
    // The proposal saves as it is.
    assert.equal((await t.request('POST', `/v1/notifications/rules/${agent}`, { body: res.body.rule })).status, 201);
  });

  test('a draft goes to the model with the request that refines it', async () => {
    llm.plain = {
      kind: 'json',
      content: '{"name": "Long refund talks", "category": "support", "when": {"keywords": ["refund"], "min_duration_seconds": 300}}',
    };
    const before = llm.requests.length;
    const res = await build({
      message: 'only if longer than five minutes',
      draft: { name: 'Refunds', category: 'support', when: { keywords: ['refund'] }, destination_ids: [] },
    });
    assert.deepEqual(res.body.rule.when, { keywords: ['refund'], min_duration_seconds: 300 });
    assert.match(res.body.reply, /5 min/);
    const messages = llm.requests[before]!.body.messages;
    assert.match(messages[1].content, /Draft rule: .*"keywords":\["refund"\]/);
  });

  test('a model that fails, or answers no valid rule, leaves the request to the offline parser, which says so', async () => {
    llm.plain = { kind: 'error', status: 500 };
    const failed = await build({ message: 'tell me when someone asks about refunds' });
    assert.equal(failed.status, 200);
    assert.equal(failed.body.engine, 'offline');
    assert.deepEqual(failed.body.rule.when, { keywords: ['refunds'] });
    assert.match(failed.body.fallback_reason, /language model could not be used/);

    llm.plain = { kind: 'json', content: '{"name": "x", "category": "Big Deal!", "when": {}}' };
    const invalid = await build({ message: 'a visitor leaves their phone number' });
    assert.equal(invalid.body.engine, 'offline');
    assert.deepEqual(invalid.body.rule.when, { detail_collected: 'phone' });
    assert.match(invalid.body.fallback_reason, /not valid/);

    llm.plain = { kind: 'json', content: 'Sure! I would set up a rule for that.' };
    const prose = await build({ message: 'conversations over 10 minutes' });
    assert.equal(prose.body.engine, 'offline');
    assert.deepEqual(prose.body.rule.when, { min_duration_seconds: 600 });
  });
});
