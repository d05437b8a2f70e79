/**
 * Issue 15, item 1: speech asked for the moment a fresh server answers. A fresh `presence serve`
 * on a fresh DATA_DIR; as soon as /healthz answers, a voice preview and a render session's
 * agent.speak_text are asked for at once. Both must be voiced (the pronouncing dictionary was
 * loaded by import() and require() at the same time, and the failed start was kept for good),
 * and keep being voiced. /readyz reports ready only once the speech layer can voice text.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { bannerKeys, cleanup, startServer } from '../cli/support/process.js';
import { RenderClient } from '../support/render-client.js';

after(cleanup);

test('a fresh server voices a preview and speak_text asked for the moment /healthz answers, and keeps voicing', async () => {
  const server = await startServer();
  // At once, before anything else: the preview, and (in parallel) a render session that speaks.
  const preview = fetch(`${server.url}/v1/voices/kokoro/af_bella/preview`, { headers: { authorization: `Bearer ${bannerKeys(server)[0]}` } });
  const readyAtOnce = fetch(`${server.url}/readyz`).then(async (r) => ({ status: r.status, body: await r.json() }));
  const [key] = bannerKeys(server);
  const agent = await server.request('POST', '/v1/agent/create', { key, body: { name: 'Early' } });
  assert.equal(agent.status, 200, JSON.stringify(agent.body));
  const session = await server.request('POST', '/v1/sessions', { key, body: { agent_id: agent.body.id, mode: 'render' } });
  assert.equal(session.status, 201, JSON.stringify(session.body));
  const client = await RenderClient.open(session.body.ws_url);
  client.send({ type: 'agent.speak_text', event_id: 'early-1', text: 'Hello there, this is an early sentence.' });

  const answer = await preview;
  assert.equal(answer.status, 200, await answer.clone().text());
  assert.equal(answer.headers.get('content-type'), 'audio/wav');
  assert.ok((await answer.arrayBuffer()).byteLength > 20_000, 'a spoken sample, not an empty file');

  await client.waitFor(() => client.of('agent.speak_ended').length === 1 || client.of('error').length > 0, 60_000);
  assert.deepEqual(
    client.of('error').map((e) => e.event),
    [],
    'no tts_error',
  );
  assert.equal(client.of('agent.speak_started')[0].event.source_event_id, 'early-1');

  // /readyz: 503 (speech_starting) or 200 at the very start, and 200 with speech ready once it is.
  const early = await readyAtOnce;
  assert.ok(early.status === 200 || (early.status === 503 && early.body.status === 'speech_starting'), JSON.stringify(early));
  const ready = await server.request('GET', '/readyz');
  assert.equal(ready.status, 200, JSON.stringify(ready.body));
  const off = { state: 'off', reason: 'MODELS_DOWNLOAD=0' };
  assert.deepEqual(ready.body, { status: 'ready', database: 'pglite', speech: 'ready', models: { stt: off, kokoro: off } });

  // Still voicing afterwards: another voice's preview and a second sentence.
  const later = await fetch(`${server.url}/v1/voices/kokoro/am_adam/preview`, { headers: { authorization: `Bearer ${key}` } });
  assert.equal(later.status, 200, await later.clone().text());
  client.send({ type: 'agent.speak_text', event_id: 'later-1', text: 'And this one too.' });
  await client.waitFor(() => client.of('agent.speak_ended').length === 2 || client.of('error').length > 0, 60_000);
  assert.deepEqual(
    client.of('error').map((e) => e.event),
    [],
  );
  client.socket.close();

  const errors = server.logs().filter((line) => line.level >= 50);
  assert.deepEqual(errors, [], 'nothing logged at error level');
  assert.equal((await server.stop()).code, 0);
});
