/**
 * The language-model engine, driven by the real `openai` client against a local server speaking
 * the chat-completions streaming wire format (support/fake-llm.ts): streaming, the prompt, honest
 * "I don't know" answers as gaps, time-outs and failures with a spoken fallback, the LLM-written
 * instructions of a build, and the engine chosen by LLM_URL.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { forEachEngine, startTestApp, type TestApp } from '../support/app.js';
import { startTestSite, type TestSite } from '../knowledge/support/site.js';
import { agentWithWebsite, ask, awaitBuild } from '../knowledge/support/brain.js';
import { startFakeLlm, type FakeLlm } from './support/fake-llm.js';
import { LLM_FALLBACK } from '../../src/brain/llm.js';
import { createBrain } from '../../src/brain/factory.js';
import { loadConfig } from '../../src/core/config.js';

forEachEngine('LLM brain', (engine) => {
  let t: TestApp;
  let site: TestSite;
  let llm: FakeLlm;
  let agent: number;
  before(async () => {
    site = await startTestSite();
    llm = await startFakeLlm();
    t = await startTestApp(engine, {
      CRAWL_ALLOW_PRIVATE: '1',
      LLM_URL: llm.url,
      LLM_API_KEY: 'sk-test-123',
      LLM_MODEL: 'test-model',
      LLM_TIMEOUT_SECONDS: '1',
    });
    agent = await agentWithWebsite(t, `${site.url}/`);
  });
  after(async () => {
    await t.close();
    await llm.close();
    await site.close();
  });

  test('a build with LLM_URL: the model writes the instructions, facts keep their source pages', async () => {
    llm.plain = {
      kind: 'json',
      content: `Here you go:\n${JSON.stringify({
        instructions: 'You are Ava, the friendly voice of Sunrise Bakery & Café in Riverton. Keep answers short.',
        facts: [
          { topic: 'hours', text: 'Open Monday to Saturday, 7 am to 3 pm', source: `${site.url}/` },
          { topic: 'prices', text: 'Croissants cost $3.25', source: `${site.url}/prices` },
          { topic: 'prices', text: 'Bagels cost $1', source: 'https://elsewhere.example/' },
        ],
      })}`,
    };
    await t.request('POST', `/v1/agent/${agent}/generate-brain`, {
      body: { pages: ['/', '/prices', '/contact', '/faq', '/services'].map((p) => ({ url: site.url + p, is_primary: true })) },
    });
    const { last } = await awaitBuild(t, agent);
    assert.equal(last.brain_status, 'complete');
    assert.equal(last.engine, 'llm');
    assert.equal(last.instructions, 'You are Ava, the friendly voice of Sunrise Bakery & Café in Riverton. Keep answers short.');
    assert.deepEqual(
      last.facts.map((f: any) => f.text),
      ['Open Monday to Saturday, 7 am to 3 pm', 'Croissants cost $3.25'],
      'a fact from no page of the agent is dropped',
    );
    assert.equal(last.facts[1].source.url, `${site.url}/prices`);
    const request = llm.requests.find((r) => !r.body.stream)!;
    assert.equal(request.body.model, 'test-model');
    assert.equal(request.headers.authorization, 'Bearer sk-test-123');
    assert.match(request.body.messages[0].content, /\| Butter croissant \| \$3\.25 \|/, 'the pages are in the prompt');
  });

  test('a model answer that is not usable JSON: the offline builder writes the instructions', async () => {
    llm.plain = { kind: 'json', content: 'Sorry, I cannot do that.' };
    await t.request('POST', `/v1/agent/${agent}/generate-brain`, { body: { pages: [{ url: `${site.url}/contact`, is_primary: true }] } });
    const { last } = await awaitBuild(t, agent);
    assert.equal(last.brain_status, 'complete');
    assert.equal(last.engine, 'offline');
    assert.match(last.instructions, /You are Ava, the virtual assistant/);
  });

  test('answers stream as the model writes them, with the knowledge, history and missing detail in the prompt', async () => {
    llm.stream = { kind: 'stream', steps: [{ text: "We're open " }, { text: 'Monday to Saturday, ', delayMs: 400 }, { text: 'from 7 am to 3 pm.' }] };
    const before = llm.requests.length;
    const started = performance.now();
    let firstAt = 0;
    let text = '';
    let done: any;
    for await (const event of t.context.answers.answer({
      accountId: t.accountId,
      agentId: agent,
      language: 'en',
      visitor: { first_name: 'Sam' },
      signal: new AbortController().signal,
      history: [
        { role: 'visitor', text: 'Hello' },
        { role: 'agent', text: 'Hi! How can I help?' },
      ],
      text: 'When are you open?',
      missingDetails: [{ name: 'email', description: "The visitor's email address" }],
    })) {
      if (event.type === 'text') {
        firstAt ||= performance.now() - started;
        text += event.text;
      } else done = event;
    }
    const total = performance.now() - started;
    assert.equal(text, "We're open Monday to Saturday, from 7 am to 3 pm.");
    assert.ok(firstAt < total - 300, `first text at ${firstAt} ms, before the model's pause (done at ${total} ms)`);
    assert.equal(done.answered, true);
    assert.equal(done.engine, 'llm');
    assert.ok(done.sources.length >= 1);
    const request = llm.requests[before]!.body;
    assert.equal(request.stream, true);
    assert.equal(request.model, 'test-model');
    const system = request.messages[0];
    assert.equal(system.role, 'system');
    assert.match(system.content, /You are Ava/);
    assert.match(system.content, /We're open Monday to Saturday from 7 am to 3 pm/, 'the retrieved knowledge');
    assert.match(system.content, /ask the visitor for their email address/);
    assert.match(system.content, /first_name: Sam/);
    assert.deepEqual(
      request.messages.slice(1).map((m: any) => [m.role, m.content]),
      [
        ['user', 'Hello'],
        ['assistant', 'Hi! How can I help?'],
        ['user', 'When are you open?'],
      ],
    );
  });

  test("the model's NO_ANSWER mark is not spoken; the question becomes a knowledge gap", async () => {
    llm.stream = { kind: 'stream', steps: [{ text: ' [NO_' }, { text: "ANSWER] I'm sorry, I don't know that. " }, { text: "I'll pass your question on." }] };
    const { text, done } = await ask(t, agent, 'Do you have a loyalty programme?');
    assert.equal(text, "I'm sorry, I don't know that. I'll pass your question on.");
    assert.equal(done.answered, false);
    assert.equal(typeof done.gapId, 'number');
    const gaps = (await t.request('GET', `/v1/agent/${agent}/v2/gaps`)).body.gaps;
    assert.ok(gaps.some((g: any) => g.id === done.gapId && g.question === 'Do you have a loyalty programme?'));
  });

  test('a speculative answer (prepared ahead of the end of turn) records its gap only when committed', async () => {
    llm.stream = { kind: 'stream', steps: [{ text: "[NO_ANSWER] I'm sorry, I don't know that." }] };
    const question = 'Do you sell gift vouchers for weddings?';
    let done: any;
    for await (const event of t.context.answers.answer({
      accountId: t.accountId,
      agentId: agent,
      history: [],
      text: question,
      language: 'en',
      visitor: {},
      signal: new AbortController().signal,
      speculative: true,
    })) {
      if (event.type === 'done') done = event;
    }
    assert.equal(done.answered, false);
    assert.equal(done.gapId, undefined);
    const gapsFor = async () => (await t.request('GET', `/v1/agent/${agent}/v2/gaps`)).body.gaps.filter((g: any) => g.question === question);
    assert.deepEqual(await gapsFor(), []);
    const gapId = await done.commit();
    assert.deepEqual(
      (await gapsFor()).map((g: any) => g.id),
      [gapId],
    );
  });

  test('a model that does not start answering in time, or fails, gets the spoken fallback (no gap)', async () => {
    llm.stream = { kind: 'hang' };
    const started = Date.now();
    const slow = await ask(t, agent, 'When are you open?');
    assert.equal(slow.text, LLM_FALLBACK);
    assert.equal(slow.done.answered, false);
    assert.equal(slow.done.gapId, undefined);
    assert.ok(Date.now() - started < 5000, 'LLM_TIMEOUT_SECONDS bounds the wait');

    llm.stream = { kind: 'error', status: 500 };
    const failed = await ask(t, agent, 'When are you open?');
    assert.equal(failed.text, LLM_FALLBACK);
    assert.equal(failed.done.answered, false);
  });

  test('a cancelled answer stops without a fallback', async () => {
    llm.stream = { kind: 'stream', steps: [{ text: 'We are open ' }, { text: 'from 7 am', delayMs: 500 }] };
    const controller = new AbortController();
    const events: any[] = [];
    for await (const event of t.context.answers.answer({
      accountId: t.accountId,
      agentId: agent,
      history: [],
      text: 'When are you open?',
      language: 'en',
      visitor: {},
      signal: controller.signal,
    })) {
      events.push(event);
      if (event.type === 'text') controller.abort();
    }
    assert.deepEqual(
      events.map((e) => e.type),
      ['text'],
    );
  });
});

test('the engine is chosen by LLM_URL and said once at start', async () => {
  const lines: Array<{ object: any; message: string }> = [];
  const logger = { info: (object: any, message: string) => lines.push({ object, message }), warn() {} };
  const deps = { knowledge: {} as never, gaps: {} as never };
  assert.equal((await createBrain(loadConfig({} as NodeJS.ProcessEnv), deps, logger)).engine.name, 'offline');
  assert.equal((await createBrain(loadConfig({ LLM_URL: 'http://127.0.0.1:9/v1' } as NodeJS.ProcessEnv), deps, logger)).engine.name, 'llm');
  assert.deepEqual(
    lines.map((l) => l.object.engine),
    ['offline', 'llm'],
  );
  assert.match(lines[1]!.message, /language model/);
});
