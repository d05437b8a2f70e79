/**
 * Issue 15, item 6: stopping a session mid-utterance tells the render socket's caller that the
 * playing utterance was cut (agent.speak_interrupted) and queued audio dropped
 * (agent.audio_buffer_cleared) before the socket closes with 4001; an unknown expression tag's
 * error lists the known tags.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../support/app.js';
import { RenderClient, voiced } from '../support/render-client.js';
import { CUES } from '../../src/realtime/protocol.js';

let t: TestApp;
let agentId: number;

async function renderSession(): Promise<{ client: RenderClient; id: string }> {
  const started = await t.request('POST', '/v1/sessions', { body: { agent_id: agentId, mode: 'render' } });
  assert.equal(started.status, 201, JSON.stringify(started.body));
  return { client: await RenderClient.open(started.body.ws_url), id: started.body.session_id };
}

describe('session end and tags on the render socket', () => {
  before(async () => {
    t = await startTestApp('pglite');
    agentId = (await t.request('POST', '/v1/agent/create', { body: { name: 'Ends', concurrency_limit: 10 } })).body.id;
  });
  after(async () => {
    await t.close();
  });

  it('stop mid-utterance: speak_interrupted for the playing one, audio_buffer_cleared for the queued one, then 4001', async () => {
    const { client, id } = await renderSession();
    client.speak(voiced(3), { event_id: 'long-1' });
    client.send({ type: 'agent.speak_end' });
    client.speak(voiced(1), { event_id: 'queued-2' });
    client.send({ type: 'agent.speak_end' });
    await client.waitForType('agent.speak_started');
    await new Promise((r) => setTimeout(r, 300));
    // Stopped the way many clients do it: Content-Type application/json, no body.
    const stopped = await fetch(`${t.url}/v1/sessions/${id}/stop`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
    });
    assert.equal(stopped.status, 200);
    await client.waitFor(() => client.closeCode !== undefined);
    assert.equal(client.closeCode, 4001);
    const after = client.events
      .map((e) => e.event)
      .filter((e) => e.type === 'agent.speak_interrupted' || e.type === 'agent.audio_buffer_cleared' || e.type === 'agent.speak_ended');
    assert.deepEqual(
      after.map((e) => e.type),
      ['agent.speak_interrupted', 'agent.audio_buffer_cleared'],
      'no speak_ended for the cut utterance',
    );
    assert.equal(after[0].source_event_id, 'long-1');
    assert.ok(after[0].played_seconds > 0.1 && after[0].played_seconds < 3, JSON.stringify(after[0]));
    assert.equal(after[0].received_seconds, 3);
    assert.equal(after[0].reason, 'session_ended');
    assert.ok(after[1].dropped_utterances.includes('queued-2'), JSON.stringify(after[1]));
    assert.ok(after[1].dropped_seconds > 1, 'the rest of the first and all of the second');
  });

  it('stop while idle: no interruption events, just 4001', async () => {
    const { client, id } = await renderSession();
    const stopped = await t.request('POST', `/v1/sessions/${id}/stop`);
    assert.equal(stopped.status, 200);
    await client.waitFor(() => client.closeCode !== undefined);
    assert.equal(client.closeCode, 4001);
    assert.deepEqual(client.of('agent.speak_interrupted'), []);
    assert.deepEqual(client.of('agent.audio_buffer_cleared'), []);
  });

  it('an unknown expression tag is reported with the list of known tags', async () => {
    const { client } = await renderSession();
    client.send({ type: 'agent.speak_text', event_id: 'tagged', text: 'Hello [wave] there.' });
    await client.waitForType('error');
    const error = client.of('error')[0].event.error;
    assert.equal(error.type, 'invalid_request_error');
    assert.match(error.message, /\[wave\]/);
    for (const cue of CUES) assert.ok(error.message.includes(`[${cue}]`), `lists [${cue}]: ${error.message}`);
    client.close();
  });
});
