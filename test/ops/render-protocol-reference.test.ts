/**
 * Issue 15, item 5: the render socket is documented where a user can read it. The product serves
 * /docs/render-protocol (every command and event with its fields, the close codes, a worked
 * session) and /asyncapi.json (AsyncAPI 3, valid per @asyncapi/parser), both generated from the zod
 * schemas the socket validates with; every event a real session sends matches its documented schema.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Parser } from '@asyncapi/parser';
import type { z } from 'zod';
import { startTestApp, type TestApp } from '../support/app.js';
import { RenderClient, voiced } from '../support/render-client.js';
import { RenderCommand } from '../../src/realtime/protocol.js';
import {
  CLOSE_CODES,
  COMMAND_NOTES,
  COMMON_FIELDS,
  WORKED_SESSION,
  checkRenderEvent,
  renderCommandTypes,
  renderEventTypes,
} from '../../src/reference/render-protocol.js';

const commandOptions = (RenderCommand as unknown as { options: z.ZodObject[] }).options;

describe('the render protocol reference', () => {
  let t: TestApp;
  let agentId: number;
  before(async () => {
    t = await startTestApp('pglite');
    agentId = (await t.request('POST', '/v1/agent/create', { body: { name: 'Reference', concurrency_limit: 10 } })).body.id;
  });
  after(() => t?.close());

  it('every command of the schemas, and each of its fields, has its prose (so the page cannot miss one)', () => {
    assert.ok(commandOptions.length >= 12);
    for (const schema of commandOptions) {
      const type = (schema.shape.type as z.ZodLiteral<string>).value;
      assert.ok(COMMAND_NOTES[type], `no notes for ${type}`);
      for (const field of Object.keys(schema.shape)) assert.ok(COMMAND_NOTES[type].fields[field] ?? COMMON_FIELDS[field], `${type}.${field} is not described`);
      for (const field of Object.keys(COMMAND_NOTES[type].fields)) assert.ok(field in schema.shape, `${type}.${field} is described but not in the schema`);
    }
    assert.deepEqual(Object.keys(COMMAND_NOTES).sort(), renderCommandTypes().sort());
  });

  it('/docs/render-protocol answers a page naming every command, event, our extra fields and the close codes', async () => {
    const response = await fetch(`${t.url}/docs/render-protocol`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/html/);
    const html = await response.text();
    for (const type of [...renderCommandTypes(), ...renderEventTypes()])
      assert.ok(html.includes(`<h3><code>${type}</code></h3>`), `the page has no section for ${type}`);
    for (const field of [
      'played_seconds',
      'received_seconds',
      'dropped_seconds',
      'dropped_utterances',
      'duration_seconds',
      'source_event_id',
      'backdrop_name',
    ]) {
      assert.ok(new RegExp(`<code>([a-z_]+\\.)?${field}</code>`).test(html), `the page does not name ${field}`);
    }
    for (const { code } of CLOSE_CODES) assert.ok(html.includes(`<td>${code}</td>`), `close code ${code}`);
    assert.ok(
      [4000, 4001, 4002, 4003].every((code) => CLOSE_CODES.some((c) => c.code === code)),
      "the interface's close codes",
    );
    assert.match(html, /A worked session/);
    assert.match(html, /href="\/asyncapi\.json"/);
    assert.doesNotMatch(html, /undefined/);
  });

  it('the worked session on the page is made of valid commands and events', () => {
    for (const { direction, message } of WORKED_SESSION) {
      if (message.type === 'close') continue;
      if (direction === 'send') assert.ok(RenderCommand.safeParse(message).success, `send ${JSON.stringify(message)}`);
      else {
        const checked = checkRenderEvent(message);
        assert.ok(checked.success, `receive ${JSON.stringify(message)}: ${checked.error?.message}`);
      }
    }
  });

  it('/asyncapi.json is a valid AsyncAPI 3 document listing every message type of the schemas', async () => {
    const response = await fetch(`${t.url}/asyncapi.json`);
    assert.equal(response.status, 200);
    const document = await response.json();
    assert.equal(document.asyncapi, '3.0.0');
    const { document: parsed, diagnostics } = await new Parser().parse(JSON.stringify(document));
    const errors = diagnostics.filter((d) => d.severity === 0);
    assert.deepEqual(
      errors.map((d) => `${d.code}: ${d.message} at ${d.path.join('/')}`),
      [],
    );
    assert.ok(parsed, 'the parser built the document');
    const names = parsed!
      .allMessages()
      .all()
      .map((m) => m.name());
    for (const type of [...renderCommandTypes(), ...renderEventTypes()]) assert.ok(names.includes(type), `no message ${type}`);
    assert.ok(names.includes('audio frame'));
    assert.equal(new URL(t.url).host, document.servers.presence.host);
    // The payloads are the socket's own schemas: limits come through.
    const speakText = document.channels.render.messages.agent_speak_text.payload;
    assert.equal(speakText.properties.text.maxLength, 5000);
    assert.deepEqual(speakText.required.sort(), ['text', 'type']);
  });

  it('every event a real session sends matches its documented schema (no undocumented field)', async () => {
    const started = await t.request('POST', '/v1/sessions', { body: { agent_id: agentId, mode: 'render' } });
    assert.equal(started.status, 201, JSON.stringify(started.body));
    const client = await RenderClient.open(started.body.ws_url);
    client.speak(voiced(0.4), { event_id: 'short-1', text: '[smile] Hi' });
    client.send({ type: 'agent.speak_end' });
    await client.waitForType('agent.speak_ended');
    client.send({ type: 'stage.get', event_id: 'stage-1' });
    client.send({ type: 'stage.camera', camera: 'close', event_id: 'cam-1' });
    client.send({ type: 'agent.cue', cue: 'no_such_cue' });
    client.speak(voiced(2), { event_id: 'long-2' });
    client.send({ type: 'agent.speak_end' });
    await client.waitForType('agent.speak_started', 2);
    client.send({ type: 'agent.interrupt', event_id: 'barge-1' });
    await client.waitForType('agent.audio_buffer_cleared');
    client.speak(voiced(2), { event_id: 'long-3' });
    client.send({ type: 'agent.speak_end' });
    client.speak(voiced(1), { event_id: 'queued-4' });
    await client.waitForType('agent.speak_started', 3);
    const stopped = await t.request('POST', `/v1/sessions/${started.body.session_id}/stop`);
    assert.equal(stopped.status, 200);
    assert.equal(await client.waitClose(), 4001);
    const seen = new Set<string>();
    for (const { event } of client.events) {
      const checked = checkRenderEvent(event);
      assert.ok(checked.success, `${JSON.stringify(event)} does not match its schema: ${checked.error?.message}`);
      seen.add(event.type);
    }
    for (const type of [
      'session.state_updated',
      'agent.state_updated',
      'agent.speak_started',
      'agent.speak_ended',
      'agent.speak_interrupted',
      'agent.audio_buffer_cleared',
      'stage.updated',
      'error',
    ]) {
      assert.ok(seen.has(type), `the session sent no ${type} (saw ${[...seen].join(', ')})`);
    }
  });
});
