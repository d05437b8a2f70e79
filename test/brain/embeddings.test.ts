/**
 * Optional retrieval by meaning (EMBEDDINGS_URL) through the real `openai` client against a local
 * server speaking the embeddings wire format: a question that shares no word with the knowledge is
 * answered from it; an unrelated question is still honestly not answered; the prompt of the LLM
 * engine carries what was found by meaning; an endpoint that fails leaves search by words working.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { forEachEngine, startTestApp, type TestApp } from '../support/app.js';
import { agentWithWebsite, ask } from '../knowledge/support/brain.js';
import { startFakeEmbeddings, type FakeEmbeddings } from './support/fake-embeddings.js';
import { startFakeLlm, type FakeLlm } from './support/fake-llm.js';
import { CachedEmbedder, type Embedder } from '../../src/brain/embeddings.js';

const WORKSHOP = 'We repair bicycles and electric bikes of every brand, usually within two days.';
const PARAPHRASE = 'Can you mend my cycle?';

async function workshopAgent(t: TestApp): Promise<number> {
  const agent = await agentWithWebsite(t, null, undefined, 'Wheelie');
  const created = await t.request('POST', `/v1/agent/${agent}/kb-sections`, { body: { title: 'Workshop', content: WORKSHOP } });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  return agent;
}

forEachEngine('retrieval by meaning (offline engine)', (engine) => {
  let t: TestApp;
  let embeddings: FakeEmbeddings;
  let agent: number;
  before(async () => {
    embeddings = await startFakeEmbeddings();
    t = await startTestApp(engine, {
      EMBEDDINGS_URL: embeddings.url,
      EMBEDDINGS_MODEL: 'test-embedder',
      EMBEDDINGS_API_KEY: 'sk-emb',
      EMBEDDINGS_MIN_SIMILARITY: '0.55',
    });
    agent = await workshopAgent(t);
  });
  after(async () => {
    await t.close();
    await embeddings.close();
  });

  test('a question sharing no word with the knowledge is answered from it; an unrelated one is not', async () => {
    const found = await ask(t, agent, PARAPHRASE);
    assert.equal(found.done.answered, true, found.text);
    assert.match(found.text, /repair bicycles/);
    assert.deepEqual(found.done.sources, [{ kind: 'section', title: 'Workshop' }]);

    const unrelated = await ask(t, agent, 'Do you sell pizza slices?');
    assert.equal(unrelated.done.answered, false, unrelated.text);
    assert.doesNotMatch(unrelated.text, /bicycle|two days/);

    // The real client spoke the wire format: floats asked for explicitly, the configured model, units with their headings.
    assert.ok(embeddings.requests.length >= 2);
    for (const request of embeddings.requests) {
      assert.equal(request.model, 'test-embedder');
      assert.equal(request.encoding_format, 'float');
    }
    assert.ok(
      embeddings.requests.some((r) => r.input.includes(`Workshop: ${WORKSHOP}`)),
      JSON.stringify(embeddings.requests),
    );
  });

  test('a question asked again is not embedded again, and a knowledge change embeds only what changed', async () => {
    await ask(t, agent, PARAPHRASE);
    const before = embeddings.requests.flatMap((r) => r.input).length;
    await ask(t, agent, PARAPHRASE);
    assert.equal(embeddings.requests.flatMap((r) => r.input).length, before);

    const added = await t.request('POST', `/v1/agent/${agent}/kb-sections`, {
      body: { title: 'Opening hours', content: 'The workshop is open from 9 am to 5 pm.' },
    });
    assert.equal(added.status, 200);
    const hours = await ask(t, agent, 'When is the workshop open?');
    assert.match(hours.text, /9 am to 5 pm/);
    const newInputs = embeddings.requests.flatMap((r) => r.input).slice(before);
    assert.ok(!newInputs.includes(`Workshop: ${WORKSHOP}`), `re-embedded an unchanged unit: ${JSON.stringify(newInputs)}`);
    assert.ok(newInputs.some((input) => input.includes('9 am to 5 pm')));
  });
});

forEachEngine('retrieval by meaning when the endpoint fails', (engine) => {
  let t: TestApp;
  let embeddings: FakeEmbeddings;
  let agent: number;
  before(async () => {
    embeddings = await startFakeEmbeddings();
    embeddings.failing = true;
    t = await startTestApp(engine, { EMBEDDINGS_URL: embeddings.url });
    agent = await workshopAgent(t);
  });
  after(async () => {
    await t.close();
    await embeddings.close();
  });

  test('search by words still answers, and a paraphrase is honestly not answered', async () => {
    const direct = await ask(t, agent, 'Do you repair electric bikes?');
    assert.equal(direct.done.answered, true, direct.text);
    assert.match(direct.text, /repair bicycles/);
    const paraphrase = await ask(t, agent, PARAPHRASE);
    assert.equal(paraphrase.done.answered, false, paraphrase.text);
    assert.doesNotMatch(paraphrase.text, /bicycle/);
  });
});

forEachEngine('retrieval by meaning (LLM engine)', (engine) => {
  let t: TestApp;
  let embeddings: FakeEmbeddings;
  let llm: FakeLlm;
  let agent: number;
  before(async () => {
    embeddings = await startFakeEmbeddings();
    llm = await startFakeLlm();
    t = await startTestApp(engine, { EMBEDDINGS_URL: embeddings.url, LLM_URL: llm.url, LLM_TIMEOUT_SECONDS: '2' });
    agent = await workshopAgent(t);
  });
  after(async () => {
    await t.close();
    await embeddings.close();
    await llm.close();
  });

  test("the knowledge found by meaning is in the model's prompt", async () => {
    llm.stream = { kind: 'stream', steps: [{ text: 'Yes, we repair bicycles.' }] };
    const reply = await ask(t, agent, PARAPHRASE);
    assert.equal(reply.done.answered, true);
    const system = llm.requests.at(-1)!.body.messages[0].content as string;
    assert.ok(system.includes(WORKSHOP), system);
  });
});

test('the embedding cache asks once per distinct text and keeps at most its capacity', async () => {
  const asked: string[][] = [];
  const inner: Embedder = {
    name: 'counting',
    embed: async (texts) => {
      asked.push(texts);
      return texts.map((text) => Float32Array.of(text.length, 1));
    },
  };
  const cache = new CachedEmbedder(inner, 3);
  const first = await cache.embed(['a', 'bb', 'a']);
  assert.deepEqual(asked, [['a', 'bb']]);
  assert.deepEqual([...first[0]!], [...first[2]!]);
  await cache.embed(['bb', 'ccc', 'dddd']);
  assert.deepEqual(asked[1], ['ccc', 'dddd']);
  assert.equal(cache.size, 3);
  await cache.embed(['a']); // evicted as least recently used
  assert.deepEqual(asked[2], ['a']);
});
