// @timed: measures real time; the runner gives it the machine to itself.
/**
 * The render socket, rule by rule, through a real server and a real WebSocket client, including
 * the playback clock's timing. Runs on the embedded database: the real-time path does not touch SQL.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../support/app.js';
import { RenderClient, PlayerClient, voiced, silence, concat, pieces, sleep } from '../support/render-client.js';
import { until } from '../support/until.js';

let t: TestApp;
let agentId: number;

async function renderSession(query = '', look?: object): Promise<{ client: RenderClient; session: any }> {
  const started = await t.request('POST', '/v1/sessions', { body: { agent_id: agentId, mode: 'render', ...(look && { look }) } });
  assert.equal(started.status, 201, JSON.stringify(started.body));
  const client = await RenderClient.open(started.body.ws_url + query);
  return { client, session: started.body };
}

describe('render protocol', () => {
  before(async () => {
    t = await startTestApp('pglite');
    const agent = await t.request('POST', '/v1/agent/create', { body: { name: 'Render', concurrency_limit: 100, studio: { cameras: ['far', 'mid'] } } });
    agentId = agent.body.id;
  });
  after(async () => {
    await t.close();
  });

  it('says connected on connect, with the default 24 kHz rate or the requested one', async () => {
    const { client } = await renderSession();
    const connected = client.of('session.state_updated')[0].event;
    assert.equal(connected.state, 'connected');
    assert.equal(connected.sample_rate, 24000);
    client.close();
    const other = await renderSession('&sample_rate=16000');
    assert.equal(other.client.of('session.state_updated')[0].event.sample_rate, 16000);
    other.client.close();
  });

  it('plays a typical utterance: idle→talking, speak_started, speak_ended, talking→idle, all naming the utterance', async () => {
    const { client } = await renderSession();
    const audio = voiced(0.6);
    client.speak(audio.subarray(0, 7200), { event_id: 'utt-1', text: 'Hello there' });
    client.speak(audio.subarray(7200), { event_id: 'ignored-inside-utterance' });
    client.send({ type: 'agent.speak_end' });
    await client.waitForType('agent.speak_ended');
    await client.waitFor(() => client.of('agent.state_updated').length >= 2);
    const sequence = client.events.map((e) => e.event).filter((e) => e.type.startsWith('agent.'));
    assert.deepEqual(
      sequence.map((e) => e.type),
      ['agent.state_updated', 'agent.speak_started', 'agent.speak_ended', 'agent.state_updated'],
    );
    assert.deepEqual([sequence[0].previous_state, sequence[0].new_state], ['idle', 'talking']);
    assert.deepEqual([sequence[3].previous_state, sequence[3].new_state], ['talking', 'idle']);
    assert.equal(sequence[1].source_event_id, 'utt-1');
    assert.equal(sequence[2].source_event_id, 'utt-1');
    assert.ok(sequence.every((e) => typeof e.event_id === 'string' && e.event_id.length > 0));
    client.close();
  });

  it('paces audio sent faster than real time: speak_ended − speak_started equals the duration within 50 ms', async () => {
    const { client, session } = await renderSession();
    const player = await PlayerClient.open(session.player_url);
    const audio = voiced(2.0);
    for (const piece of pieces(audio, 0.04)) client.speak(piece);
    client.send({ type: 'agent.speak_end' });
    const started = await client.waitForType('agent.speak_started');
    const ended = await client.waitForType('agent.speak_ended', 1, 5000);
    const elapsed = ended.at - started.at;
    assert.ok(Math.abs(elapsed - 2.0) < 0.05, `speak_ended − speak_started = ${elapsed.toFixed(3)} s for 2.000 s of audio`);
    assert.equal(ended.event.duration_seconds, 2);
    // The player got every sample, in order, on a continuous timeline.
    const total = player.frames.reduce((n, f) => n + f.pcm.length, 0);
    assert.equal(total, audio.length);
    for (let i = 1; i < player.frames.length; i++) {
      const expected = player.frames[i - 1].t + player.frames[i - 1].pcm.length / 24000;
      assert.ok(Math.abs(player.frames[i].t - expected) < 1e-6, `frame ${i} starts at ${player.frames[i].t}, expected ${expected}`);
    }
    // Frames leave at real time: the last one leaves about 2 s − one frame after the first.
    const spread = player.frames.at(-1)!.at - player.frames[0].at;
    assert.ok(spread > 1.85 && spread < 2.05, `frames left over ${spread.toFixed(3)} s`);
    player.close();
    client.close();
  });

  it('plays queued audio byte-exact while its memory is recycled, also after an interrupt dropped pieces', async () => {
    // Noise, so a sample overwritten by a later piece (slab.ts reusing memory too early) shows.
    let seed = 12345;
    const noise = (seconds: number) =>
      Int16Array.from({ length: Math.round(seconds * 24000) }, () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 16) - 32768);
    const { client, session } = await renderSession();
    const player = await PlayerClient.open(session.player_url);
    const received = () => concat(...player.frames.map((f) => f.pcm));
    // 1.2 s sent at once: 30 pieces of 40 ms wait in the queue, many slab buffers in flight.
    const first = noise(1.2);
    for (const piece of pieces(first, 0.04)) client.sendBinary(new Uint8Array(piece.buffer, piece.byteOffset, piece.byteLength));
    client.send({ type: 'agent.speak_end' });
    await client.waitForType('agent.speak_ended');
    await until(() => received().length >= first.length, 5000, 'the first utterance reached the page');
    assert.deepEqual(Array.from(received()), Array.from(first), 'queued pieces arrive byte-exact');
    // Interrupted mid-way: its queued pieces are dropped without being given back to the slab.
    for (const piece of pieces(noise(2), 0.04)) client.sendBinary(new Uint8Array(piece.buffer, piece.byteOffset, piece.byteLength));
    await sleep(300);
    client.send({ type: 'agent.interrupt' });
    await client.waitForType('agent.speak_interrupted');
    await sleep(100);
    const third = noise(1.2);
    for (const piece of pieces(third, 0.04)) client.sendBinary(new Uint8Array(piece.buffer, piece.byteOffset, piece.byteLength));
    client.send({ type: 'agent.speak_end' });
    await until(() => client.of('agent.speak_ended').length === 2, 10_000, 'the third utterance ended');
    await sleep(50);
    const all = received();
    assert.deepEqual(Array.from(all.subarray(all.length - third.length)), Array.from(third), 'audio after an interrupt arrives byte-exact');
    player.close();
    client.close();
  });

  it('generates an event_id when absent and carries it on every event of the utterance', async () => {
    const { client } = await renderSession();
    client.speak(voiced(0.1));
    client.send({ type: 'agent.speak_end' });
    await client.waitForType('agent.speak_ended');
    const started = client.of('agent.speak_started')[0].event;
    const ended = client.of('agent.speak_ended')[0].event;
    assert.match(started.source_event_id, /\S+/);
    assert.equal(started.source_event_id, ended.source_event_id);
    client.close();
  });

  it('accepts raw binary frames and carries an odd trailing byte into the next piece', async () => {
    const { client, session } = await renderSession();
    const player = await PlayerClient.open(session.player_url);
    const audio = voiced(0.2);
    const bytes = new Uint8Array(audio.buffer);
    // Split at odd offsets: 1001 bytes, then 3001, then the rest.
    client.sendBinary(bytes.subarray(0, 1001));
    client.sendBinary(bytes.subarray(1001, 4002));
    client.sendBinary(bytes.subarray(4002));
    client.send({ type: 'agent.speak_end' });
    await client.waitForType('agent.speak_ended');
    await sleep(50);
    const received = new Int16Array(player.frames.reduce((n, f) => n + f.pcm.length, 0));
    let at = 0;
    for (const f of player.frames) {
      received.set(f.pcm, at);
      at += f.pcm.length;
    }
    assert.deepEqual(Array.from(received), Array.from(audio), 'samples arrive byte-exact despite odd splits');
    player.close();
    client.close();
  });

  it('refuses a frame over 1 MB with an error event and keeps the socket open', async () => {
    const { client } = await renderSession();
    client.sendBinary(new Uint8Array(1024 * 1024 + 2));
    const error = await client.waitForType('error');
    assert.equal(error.event.error.type, 'invalid_request_error');
    client.send({ type: 'stage.get', event_id: 'still-alive' });
    const stage = await client.waitForType('stage.updated');
    assert.equal(stage.event.source_event_id, 'still-alive');
    assert.equal(client.closeCode, undefined);
    client.close();
  });

  it('refuses audio past 120 s waiting with queue_full', async () => {
    const { client } = await renderSession('&sample_rate=16000');
    const thirtySeconds = new Uint8Array(16000 * 2 * 30);
    for (let i = 0; i < 4; i++) client.sendBinary(thirtySeconds); // 120 s: at the limit, accepted
    client.send({ type: 'stage.get', event_id: 'probe' });
    await client.waitForType('stage.updated');
    assert.equal(client.of('error').length, 0, 'exactly 120 s is accepted');
    client.sendBinary(thirtySeconds);
    const error = await client.waitForType('error');
    assert.equal(error.event.error.type, 'queue_full');
    client.send({ type: 'agent.interrupt' });
    await client.waitForType('agent.audio_buffer_cleared');
    client.close();
  });

  it('plays utterances one after another; the first piece after speak_end opens a new one', async () => {
    const { client } = await renderSession();
    client.speak(voiced(0.4), { event_id: 'first' });
    client.send({ type: 'agent.speak_end' });
    client.speak(voiced(0.3), { event_id: 'second' });
    client.send({ type: 'agent.speak_end' });
    await client.waitForType('agent.speak_ended', 2);
    const started = client.of('agent.speak_started').map((e) => e.event.source_event_id);
    const ended = client.of('agent.speak_ended');
    assert.deepEqual(started, ['first', 'second']);
    assert.deepEqual(
      ended.map((e) => e.event.source_event_id),
      ['first', 'second'],
    );
    const secondStart = client.of('agent.speak_started')[1];
    assert.ok(secondStart.at >= ended[0].at - 0.005, 'the second starts after the first ended');
    assert.ok(secondStart.at - ended[0].at < 0.05, 'and without a gap');
    client.close();
  });

  it('interrupt drops everything, answers speak_interrupted and audio_buffer_cleared, and no speak_ended follows', async () => {
    const { client, session } = await renderSession();
    const player = await PlayerClient.open(session.player_url);
    client.speak(voiced(2), { event_id: 'long' });
    client.speak(voiced(1), {});
    await client.waitForType('agent.speak_started');
    await sleep(400);
    client.send({ type: 'agent.interrupt', event_id: 'stop-now' });
    const interrupted = await client.waitForType('agent.speak_interrupted');
    const cleared = await client.waitForType('agent.audio_buffer_cleared');
    assert.equal(interrupted.event.source_event_id, 'long');
    assert.ok(interrupted.event.played_seconds > 0.3 && interrupted.event.played_seconds < 0.6, `played ${interrupted.event.played_seconds}`);
    assert.equal(interrupted.event.received_seconds, 3);
    assert.equal(cleared.event.source_event_id, 'stop-now');
    assert.ok(cleared.event.dropped_seconds > 2.3);
    const idle = client.of('agent.state_updated').at(-1)!.event;
    assert.deepEqual([idle.previous_state, idle.new_state], ['talking', 'idle']);
    // The player's socket is a different connection: its copy of the interrupt may arrive a moment later.
    await until(() => player.of('interrupt').length > 0, 2000, 'the player to be told to stop voice and lips');
    const framesAtInterrupt = player.frames.length;
    await sleep(300);
    assert.equal(client.of('agent.speak_ended').length, 0);
    assert.equal(player.of('interrupt').length, 1, 'the player is told once');
    assert.ok(player.frames.length <= framesAtInterrupt + 1, 'no audio leaves after the interrupt');
    // The next piece opens a new utterance.
    client.speak(voiced(0.2), { event_id: 'after' });
    client.send({ type: 'agent.speak_end' });
    const next = await client.waitForType('agent.speak_ended');
    assert.equal(next.event.source_event_id, 'after');
    player.close();
    client.close();
  });

  it('warns audio_starvation when an unsealed utterance runs dry', async () => {
    const { client } = await renderSession();
    client.speak(voiced(0.2), { event_id: 'slow' });
    const warning = await client.waitForType('warning', 1, 3000);
    assert.equal(warning.event.warning.type, 'audio_starvation');
    assert.equal(warning.event.warning.source_event_id, 'slow');
    assert.equal(client.of('agent.speak_ended').length, 0, 'an unsealed utterance does not end by itself');
    client.speak(voiced(0.2));
    client.send({ type: 'agent.speak_end' });
    await client.waitForType('agent.speak_ended');
    client.close();
  });

  it('moves to and from listening', async () => {
    const { client } = await renderSession();
    client.send({ type: 'agent.start_listening' });
    await client.waitForType('agent.state_updated');
    client.send({ type: 'agent.stop_listening' });
    await client.waitForType('agent.state_updated', 2);
    const states = client.of('agent.state_updated').map((e) => [e.event.previous_state, e.event.new_state]);
    assert.deepEqual(states, [
      ['idle', 'listening'],
      ['listening', 'idle'],
    ]);
    client.close();
  });

  it('lands at_seconds cues and camera cuts within 50 ms on the audio clock', async () => {
    const { client, session } = await renderSession();
    const player = await PlayerClient.open(session.player_url);
    client.send({ type: 'agent.cue', cue: 'smile', intensity: 0.7, at_seconds: 0.5 });
    client.send({ type: 'stage.camera', camera: 'far', at_seconds: 0.8, event_id: 'cut' });
    client.speak(voiced(1.2), { event_id: 'timed' });
    client.send({ type: 'agent.speak_end' });
    const started = await client.waitForType('agent.speak_started');
    const updated = await client.waitForType('stage.updated');
    const lateness = updated.at - started.at - 0.8;
    assert.ok(Math.abs(lateness) < 0.05, `camera cut landed ${Math.round(lateness * 1000)} ms off`);
    assert.equal(updated.event.stage.camera, 'far');
    assert.equal(updated.event.source_event_id, 'cut');
    const expression = player.of('expression')[0];
    const camera = player.of('camera')[0];
    const firstFrame = player.frames[0].t;
    assert.equal(expression.name, 'smile');
    assert.ok(Math.abs(expression.t - firstFrame - 0.5) < 0.05, `expression at ${expression.t - firstFrame}`);
    assert.ok(Math.abs(camera.t - firstFrame - 0.8) < 0.05, `camera at ${camera.t - firstFrame}`);
    await client.waitForType('agent.speak_ended');
    player.close();
    client.close();
  });

  it('answers stage.get with stage.updated and refuses cameras or backdrops that do not exist', async () => {
    const { client } = await renderSession('', { camera: 'mid', backdrop: 'sunset' });
    client.send({ type: 'stage.get', event_id: 'g' });
    const stage = (await client.waitForType('stage.updated')).event.stage;
    assert.equal(stage.camera, 'mid');
    assert.equal(stage.camera_mode, 'manual');
    assert.equal(stage.backdrop, 'sunset');
    client.send({ type: 'stage.camera', camera: 'close' }); // not among this agent's cameras
    client.send({ type: 'stage.backdrop', backdrop: 'the_moon' });
    await client.waitForType('error', 2);
    assert.deepEqual(
      client.of('error').map((e) => e.event.error.type),
      ['stage_error', 'stage_error'],
    );
    client.send({ type: 'stage.backdrop', backdrop: null, event_id: 'plain' });
    client.send({ type: 'stage.camera', camera: 'auto', hold: true });
    await client.waitForType('stage.updated', 3);
    const last = client.of('stage.updated').at(-1)!.event.stage;
    assert.equal(last.backdrop, null);
    assert.equal(last.camera_mode, 'auto');
    assert.equal(last.hold, true);
    client.close();
  });

  it('takes session.configure only before the first audio, and closes 4000 on a bad rate', async () => {
    const { client, session } = await renderSession();
    const player = await PlayerClient.open(session.player_url);
    client.send({ type: 'session.configure', sample_rate: 48000 });
    await sleep(100);
    assert.equal(player.of('hello').at(-1).sample_rate, 48000, 'the player learns the new rate');
    client.speak(voiced(0.05, 48000));
    client.send({ type: 'session.configure', sample_rate: 16000, event_id: 'late' });
    const error = await client.waitForType('error');
    assert.equal(error.event.error.type, 'invalid_request_error');
    assert.equal(error.event.error.source_event_id, 'late');
    client.close();
    const other = await renderSession();
    other.client.send({ type: 'session.configure', sample_rate: 11025 });
    assert.equal(await other.client.waitClose(), 4000);
    player.close();
  });

  it('answers bad commands with invalid_request_error events', async () => {
    const { client } = await renderSession();
    client.socket.send('{not json');
    client.send({ type: 'agent.dance' });
    client.send({ type: 'agent.speak', audio: '***' });
    client.send({ type: 'agent.cue', cue: 'smile', intensity: 3 });
    client.send({ type: 'agent.speak_text', text: 'x'.repeat(5001) });
    await client.waitForType('error', 5);
    assert.ok(client.of('error').every((e) => e.event.error.type === 'invalid_request_error'));
    client.send({ type: 'session.keep_alive' });
    await sleep(100);
    assert.equal(client.of('error').length, 5, 'keep_alive is not an error');
    client.close();
  });

  it('sends a track that opens the mouth during speech, closes it in silence, and lines up with the audio', async () => {
    const { client, session } = await renderSession();
    const player = await PlayerClient.open(session.player_url);
    const audio = concat(silence(0.3), voiced(0.5), silence(0.4), voiced(0.3), silence(0.2));
    for (const piece of pieces(audio, 0.1)) client.speak(piece);
    client.send({ type: 'agent.speak_end' });
    await client.waitForType('agent.speak_ended');
    const tracks = player.of('track');
    assert.equal(tracks.length, player.frames.length, 'one track per audio frame');
    tracks.forEach((track: any, i: number) => assert.ok(Math.abs(track.t - player.frames[i].t) < 0.001, 'track and audio share their start time'));
    const origin = player.frames[0].t;
    const mouthAt = (seconds: number) => {
      for (const track of tracks) {
        const index = Math.floor((origin + seconds - track.mouth.t0) / track.mouth.step + 1e-6);
        if (index >= 0 && index < track.mouth.values.length) return track.mouth.values[index];
      }
      throw new Error(`no mouth value at ${seconds}`);
    };
    for (const s of [0.05, 0.15, 0.9, 1.1, 1.55]) assert.ok(mouthAt(s) < 0.1, `mouth closed in silence at ${s} s (${mouthAt(s)})`);
    for (const s of [0.4, 0.55, 0.7, 1.3, 1.45]) assert.ok(mouthAt(s) > 0.3, `mouth open in speech at ${s} s (${mouthAt(s)})`);
    const visemes = tracks.flatMap((track: any) => track.visemes);
    assert.ok(
      visemes.some((v: any) => v[1] !== 'sil' && v[0] - origin > 0.3 && v[0] - origin < 0.8),
      'visemes during speech',
    );
    player.close();
    client.close();
  });

  it('closes the render socket with 4001 when the session is stopped', async () => {
    const { client, session } = await renderSession();
    const player = await PlayerClient.open(session.player_url);
    await t.request('POST', `/v1/sessions/${session.session_id}/stop`);
    assert.equal(await client.waitClose(), 4001);
    await sleep(50);
    assert.equal(player.of('ended').length, 1);
  });
});
