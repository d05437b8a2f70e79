/**
 * What a server loads only when first needed: the VAD model (onnxruntime-node, some 40 MB) is not
 * loaded by a server that only starts or renders, even with a recogniser configured; the first
 * conversation-mode session loads it.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { startTestApp, type TestApp } from '../support/app.js';
import { talkingAgent, startConversation } from '../conversation/support.js';

const require = createRequire(import.meta.url);
/** onnxruntime-node is CommonJS: once imported, its entry is in the module cache. */
const onnxruntimeLoaded = () => Object.keys(require.cache).some((file) => /[\\/]onnxruntime-node[\\/]/.test(file));

let t: TestApp;
before(async () => {
  t = await startTestApp('pglite', { STT_ENGINE: 'pocketsphinx' });
});
after(async () => t.close());

test('the VAD model waits for the first conversation, not the start or a render session', async () => {
  assert.ok(t.context.conversationLoop, 'conversation mode is wired');
  const agent = await talkingAgent(t);
  const render = await t.request('POST', '/v1/sessions', { body: { agent_id: agent, mode: 'render' } });
  assert.equal(render.status, 201, JSON.stringify(render.body));
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(onnxruntimeLoaded(), false, 'not loaded by the start or a render session');

  await startConversation(t, agent);
  const until = Date.now() + 30_000;
  while (!onnxruntimeLoaded() && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  assert.equal(onnxruntimeLoaded(), true, 'loaded when the first conversation opened');
});
