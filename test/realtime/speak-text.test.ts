/**
 * agent.speak_text through the real speech layer (the offline engine that ships with the
 * project): voiced in order with caller audio, expression tags select expressions and are never
 * spoken, and a voice that cannot be spoken answers tts_error.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../support/app.js';
import { RenderClient, PlayerClient, voiced } from '../support/render-client.js';
import { SpeechService } from '../../src/speech/synthesis.js';
import { silentLogger } from '../speech/helpers.js';
import { parseExpressionTags } from '../../src/realtime/expression-tags.js';

let t: TestApp;
let agentId: number;

async function open() {
  const started = await t.request('POST', '/v1/sessions', { body: { agent_id: agentId, mode: 'render' } });
  assert.equal(started.status, 201);
  const client = await RenderClient.open(started.body.ws_url);
  const player = await PlayerClient.open(started.body.player_url);
  return { client, player, session: started.body };
}

const rms = (pcm: Int16Array) => Math.sqrt(pcm.reduce((s, x) => s + x * x, 0) / Math.max(1, pcm.length)) / 32768;

describe('agent.speak_text', () => {
  before(async () => {
    t = await startTestApp('pglite');
    agentId = (await t.request('POST', '/v1/agent/create', { body: { name: 'Talker', concurrency_limit: 10 } })).body.id;
  });
  after(async () => t.close());

  it('parses expression tags out of the spoken text', () => {
    const parsed = parseExpressionTags('[smile] Hello there. [surprised 0.6]Really? [wave] Bye');
    assert.equal(parsed.spoken, 'Hello there. Really? Bye');
    assert.deepEqual(
      parsed.tags.map((tag) => [tag.cue, tag.intensity, tag.offset]),
      [
        ['smile', 0.8, 0],
        ['surprised', 0.6, 13],
      ],
    );
    assert.deepEqual(parsed.unknown, ['wave']);
  });

  it('captions read as the text was written, its final punctuation included', async () => {
    const { client, player } = await open();
    client.send({ type: 'agent.speak_text', event_id: 'written', text: 'Hello, and welcome! [smile] We open at 8 a.m. on weekdays. "See you soon."' });
    await client.waitForType('agent.speak_ended', 1, 20_000);
    const captions = player
      .of('caption')
      .map((c: any) => c.text)
      .join(' ');
    assert.equal(captions, 'Hello, and welcome! We open at 8 a.m. on weekdays. "See you soon."');
  });

  it('voices the text with real speech, after queued caller audio, with tags as expressions', async () => {
    const { client, player } = await open();
    client.speak(voiced(0.5), { event_id: 'caller-audio' });
    client.send({ type: 'agent.speak_end' });
    client.send({ type: 'agent.speak_text', event_id: 'said', text: 'Hello, and welcome to our shop. [smile] How can I help you today?' });
    await client.waitForType('agent.speak_ended', 2, 20_000);
    const started = client.of('agent.speak_started').map((e) => e.event.source_event_id);
    assert.deepEqual(started, ['caller-audio', 'said']);
    const spoken = client.of('agent.speak_ended')[1].event;
    assert.ok(spoken.duration_seconds > 1.5 && spoken.duration_seconds < 8, `spoke for ${spoken.duration_seconds} s`);
    const speechFrames = player.frames.filter((f) => f.t >= client.of('agent.speak_started')[1].event.at - 1e-6);
    const all = new Int16Array(speechFrames.reduce((n, f) => n + f.pcm.length, 0));
    let at = 0;
    for (const f of speechFrames) {
      all.set(f.pcm, at);
      at += f.pcm.length;
    }
    assert.ok(rms(all) > 0.02, `real speech energy (rms ${rms(all).toFixed(3)})`);
    const smile = player.of('expression').find((e: any) => e.name === 'smile');
    assert.ok(smile, 'the [smile] tag becomes an expression');
    const offset = smile.t - client.of('agent.speak_started')[1].event.at;
    assert.ok(offset > 0.5 && offset < spoken.duration_seconds, `smile lands mid-sentence (${offset.toFixed(2)} s in)`);
    const tracks = player.of('track').filter((tr: any) => tr.utterance === 'said');
    assert.ok(
      tracks.some((tr: any) => tr.mouth.values.some((v: number) => v > 0.4)),
      'the mouth opens for the speech',
    );
    assert.equal(client.of('error').length, 0);
    client.close();
    player.close();
  });

  it('takes a cue with the text: the expression starts with the speech', async () => {
    const { client, player } = await open();
    client.send({ type: 'agent.speak_text', event_id: 'cued', text: 'Good news.', cue: 'happy' });
    const started = await client.waitForType('agent.speak_started', 1, 20_000);
    await client.waitForType('agent.speak_ended', 1, 20_000);
    const happy = player.of('expression').find((e: any) => e.name === 'happy');
    assert.ok(happy, 'the cue reaches the player as an expression');
    assert.ok(Math.abs(happy.t - started.event.at) < 0.05, `at the start of the utterance (${(happy.t - started.event.at).toFixed(3)} s)`);
    client.close();
    player.close();
  });

  it('answers tts_error when the voice cannot be spoken, and keeps playing what follows', async () => {
    const speech = new SpeechService(
      { ...t.context.config.speech, providers: { elevenlabs: { apiKey: 'test-key', baseUrl: 'http://127.0.0.1:9' } }, timeoutMs: 2000 },
      { logger: silentLogger() },
    );
    const broken = await startTestApp('pglite', {}, { speech });
    try {
      const agent = (
        await broken.request('POST', '/v1/agent/create', { body: { name: 'Premium', tts_primary: 'elevenlabs', voice_id: '21m00Tcm4TlvDq8ikWAM' } })
      ).body;
      const started = await broken.request('POST', '/v1/sessions', { body: { agent_id: agent.id, mode: 'render' } });
      const client = await RenderClient.open(started.body.ws_url);
      client.send({ type: 'agent.speak_text', event_id: 'doomed', text: 'This provider is down.' });
      client.speak(voiced(0.3), { event_id: 'after' });
      client.send({ type: 'agent.speak_end' });
      const error = await client.waitForType('error', 1, 15_000);
      assert.equal(error.event.error.type, 'tts_error');
      assert.equal(error.event.error.source_event_id, 'doomed');
      const ended = await client.waitForType('agent.speak_ended', 1, 5000);
      assert.equal(ended.event.source_event_id, 'after', 'the failed text does not hold up the queue');
      assert.ok(!client.of('agent.speak_started').some((e) => e.event.source_event_id === 'doomed'));
      client.close();
    } finally {
      await broken.close();
      await speech.close();
    }
  });

  it('interrupt stops a text utterance while it is still being voiced', async () => {
    const { client, player } = await open();
    client.send({
      type: 'agent.speak_text',
      event_id: 'long',
      text: 'This is a long answer. It goes on for several sentences. Each one takes a while to say. Nobody will hear the end of it.',
    });
    await client.waitForType('agent.speak_started', 1, 15_000);
    client.send({ type: 'agent.interrupt' });
    const interrupted = await client.waitForType('agent.speak_interrupted');
    assert.equal(interrupted.event.source_event_id, 'long');
    await client.waitForType('agent.audio_buffer_cleared');
    const count = player.frames.length;
    await new Promise((r) => setTimeout(r, 400));
    assert.ok(player.frames.length <= count + 1, 'no more speech leaves');
    assert.equal(client.of('agent.speak_ended').length, 0);
    client.close();
    player.close();
  });
});
