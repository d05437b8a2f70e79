// @timed: measures real time (a stalled event loop; a caption that lingers, then clears); the runner gives it the machine to itself.
/**
 * The real-time path under abuse (issue 16): every per-session queue, list and timer is bounded and
 * refused past its cap with an error event; one socket's failure closes at most that socket; the
 * message rate limit; the playback clock catching up after a late tick. A real server and real
 * WebSocket clients; the server runs in this process, so a crash would end the test run.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../support/app.js';
import { RenderClient, PlayerClient, voiced, pieces, sleep } from '../support/render-client.js';
import { MAX_QUEUED_PIECES, MAX_QUEUED_TEXT_CHARS, MAX_QUEUED_UTTERANCES, MAX_TIMED_ACTIONS } from '../../src/realtime/protocol.js';
import { MESSAGE_BURST, REFUSED_BEFORE_CLOSE, messageLimits } from '../../src/realtime/rate-limit.js';
import { TimedActions } from '../../src/realtime/timed-actions.js';

let t: TestApp;
let agentId: number;

async function renderSession(query = ''): Promise<{ client: RenderClient; session: any }> {
  const started = await t.request('POST', '/v1/sessions', { body: { agent_id: agentId, mode: 'render' } });
  assert.equal(started.status, 201, JSON.stringify(started.body));
  return { client: await RenderClient.open(started.body.ws_url + query), session: started.body };
}

/** The node still serves: /healthz answers and a fresh session plays an utterance to its end. */
async function nodeStillServes(): Promise<void> {
  assert.equal((await fetch(`${t.url}/healthz`)).status, 200);
  const { client } = await renderSession();
  client.speak(voiced(0.1), { event_id: 'fresh' });
  client.send({ type: 'agent.speak_end' });
  const ended = await client.waitForType('agent.speak_ended');
  assert.equal(ended.event.source_event_id, 'fresh');
  client.close();
}

const errorsOf = (client: RenderClient, type: string) => client.of('error').filter((e) => e.event.error.type === type);
const live = (session: any) => t.context.realtime.get(session.session_id)!;

describe('render path bounds', () => {
  before(async () => {
    t = await startTestApp('pglite');
    const agent = await t.request('POST', '/v1/agent/create', { body: { name: 'Bounds', concurrency_limit: 100, studio: { cameras: ['far', 'mid'] } } });
    agentId = agent.body.id;
  });
  after(async () => {
    await t.close();
  });

  it('issue repro: 150,000 timed cues then one audio frame neither crashes nor stalls the node', async () => {
    const { client } = await renderSession();
    const cue = JSON.stringify({ type: 'agent.cue', cue: 'smile', at_seconds: 1 });
    for (let i = 0; i < 150_000; i++) client.socket.send(cue);
    client.sendBinary(new Uint8Array(voiced(0.2).buffer));
    // The cap refuses cues past 1,000 with queue_full; the rate limit then drops the flood, says so
    // once, and closes the socket that kept going.
    assert.equal(await client.waitClose(60_000), 4008);
    assert.ok(errorsOf(client, 'queue_full').length > 0, 'cues past the cap are refused with queue_full');
    const rate = errorsOf(client, 'invalid_request_error');
    assert.equal(rate.length, 1, 'the rate limit is told once');
    assert.match(rate[0].event.error.message, /rate limit/);
    await nodeStillServes();
  });

  it('issue repro: 100,000 pending stage.camera cuts are capped; the next utterance takes at most the cap', async () => {
    const { client, session } = await renderSession();
    const camera = JSON.stringify({ type: 'stage.camera', camera: 'far', at_seconds: 0.05 });
    for (let i = 0; i < 100_000; i++) client.socket.send(camera);
    assert.equal(await client.waitClose(60_000), 4008);
    assert.ok(live(session).waitingActions() <= MAX_TIMED_ACTIONS);
    await nodeStillServes();
  });

  it(`refuses timed actions past ${MAX_TIMED_ACTIONS} with queue_full, before audio and while it plays; an utterance then begins normally`, async () => {
    const { client, session } = await renderSession();
    const player = await PlayerClient.open(session.player_url);
    for (let i = 0; i < MAX_TIMED_ACTIONS + 500; i++) client.send({ type: 'agent.cue', cue: 'smile', at_seconds: 0.5 + i / 10_000 });
    client.send({ type: 'stage.get', event_id: 'probe' });
    await client.waitForType('stage.updated');
    assert.equal(errorsOf(client, 'queue_full').length, 500);
    assert.equal(live(session).waitingActions(), MAX_TIMED_ACTIONS);
    // The frame that crashed the process: the pending actions move to the utterance without a spread.
    client.speak(voiced(1.0), { event_id: 'talk' });
    await client.waitForType('agent.speak_started');
    assert.equal(live(session).waitingActions(), MAX_TIMED_ACTIONS);
    // While audio plays, more timed cues are refused too.
    client.send({ type: 'agent.cue', cue: 'sad', at_seconds: 0.2, event_id: 'one-more' });
    await client.waitForType('error', 501);
    assert.equal(client.of('error').at(-1)!.event.error.source_event_id, 'one-more');
    // Timed actions reach the player when they fall due, not in one burst at the utterance's start.
    assert.equal(player.of('expression').length, 0, 'nothing sent before its time');
    await client.waitFor(() => player.of('expression').length === MAX_TIMED_ACTIONS, 5000);
    client.send({ type: 'agent.speak_end' });
    await client.waitForType('agent.speak_ended');
    player.close();
    client.close();
  });

  it('interrupt and session end clear every timer, camera cuts included', async () => {
    const { client, session } = await renderSession();
    client.speak(voiced(2.0), { event_id: 'long' });
    await client.waitForType('agent.speak_started');
    client.send({ type: 'stage.camera', camera: 'far', at_seconds: 0.6, event_id: 'cut' });
    client.send({ type: 'agent.cue', cue: 'smile', at_seconds: 0.7 });
    client.send({ type: 'stage.backdrop', backdrop: null, at_seconds: 3000 });
    await sleep(50);
    assert.equal(live(session).waitingActions(), 3);
    client.send({ type: 'agent.interrupt' });
    await client.waitForType('agent.audio_buffer_cleared');
    assert.equal(live(session).waitingActions(), 0);
    await sleep(800);
    assert.equal(client.of('stage.updated').length, 0, 'the camera cut timed against the dropped audio never lands');

    // A cue an hour ahead waits on the session's own timer, which the session's end clears.
    client.speak(voiced(0.1));
    client.send({ type: 'agent.speak_end' });
    client.send({ type: 'stage.camera', camera: 'far', at_seconds: 3600 });
    await client.waitForType('agent.speak_ended');
    await sleep(20);
    const realtimeSession = live(session);
    assert.equal(realtimeSession.waitingActions(), 1);
    assert.equal(realtimeSession.busy, false, 'a far-off action does not keep the shared clock ticking');
    await t.request('POST', `/v1/sessions/${session.session_id}/stop`);
    assert.equal(await client.waitClose(), 4001);
    assert.equal(realtimeSession.waitingActions(), 0);
  });

  it(`counts text-only agent.speak pieces: past ${MAX_QUEUED_TEXT_CHARS} characters waiting, queue_full`, async () => {
    const { client, session } = await renderSession();
    const text = 'word '.repeat(1000); // 5,000 characters, no audio
    const fits = MAX_QUEUED_TEXT_CHARS / text.length;
    for (let i = 0; i < fits + 3; i++) client.send({ type: 'agent.speak', audio: '', text, event_id: `t${i}` });
    await client.waitForType('error', 3);
    assert.deepEqual(
      client.of('error').map((e) => [e.event.error.type, e.event.error.source_event_id]),
      [0, 1, 2].map((k) => ['queue_full', `t${fits + k}`]),
    );
    assert.equal(live(session).queue.waiting().chars, MAX_QUEUED_TEXT_CHARS);
    // Interrupt frees them.
    client.send({ type: 'agent.interrupt' });
    await client.waitForType('agent.audio_buffer_cleared');
    assert.equal(live(session).queue.waiting().chars, 0);
    client.send({ type: 'agent.speak', audio: '', text, event_id: 'again' });
    client.send({ type: 'stage.get', event_id: 'probe' });
    await client.waitForType('stage.updated');
    assert.equal(client.of('error').length, 3);
    client.close();
  });

  it(`caps pieces (${MAX_QUEUED_PIECES}) and utterances (${MAX_QUEUED_UTTERANCES}) waiting`, async () => {
    // More pieces than the message rate limit lets through at once: lift it for this socket only.
    const saved = { ...messageLimits };
    messageLimits.burst = 100_000;
    const { client, session } = await renderSession();
    Object.assign(messageLimits, saved);
    // 4 ms pieces (54 s in all, under the 120 s cap); a few hundred leave while the rest arrive.
    const small = new Uint8Array(voiced(100 / 24000).buffer);
    for (let i = 0; i < MAX_QUEUED_PIECES + 1000; i++) client.sendBinary(small);
    client.send({ type: 'stage.get', event_id: 'probe' });
    await client.waitForType('stage.updated');
    const refusedPieces = errorsOf(client, 'queue_full');
    assert.ok(refusedPieces.length > 0 && refusedPieces.every((e) => /pieces/.test(e.event.error.message)), `${refusedPieces.length} pieces refused`);
    const waitingPieces = live(session).queue.waiting().pieces;
    assert.ok(waitingPieces <= MAX_QUEUED_PIECES && waitingPieces > MAX_QUEUED_PIECES - 1000, `${waitingPieces} pieces waiting`);
    client.send({ type: 'agent.interrupt' });
    await client.waitForType('agent.audio_buffer_cleared');
    const errorsBefore = client.of('error').length;
    // Half-second utterances (100 s in all, under the 120 s cap): at most one finishes meanwhile.
    const half = Buffer.from(voiced(0.5).buffer).toString('base64');
    for (let i = 0; i < MAX_QUEUED_UTTERANCES + 10; i++) {
      client.send({ type: 'agent.speak', audio: half, event_id: `u${i}` });
      client.send({ type: 'agent.speak_end' });
    }
    client.send({ type: 'stage.get', event_id: 'probe2' });
    await client.waitForType('stage.updated', 2);
    const refused = client.of('error').slice(errorsBefore);
    assert.ok(refused.length >= 9, `${refused.length} refused`);
    assert.ok(refused.every((e) => e.event.error.type === 'queue_full' && /utterances/.test(e.event.error.message)));
    assert.ok(live(session).queue.items.length <= MAX_QUEUED_UTTERANCES);
    client.send({ type: 'agent.interrupt' });
    client.close();
  });

  it('an exception while handling one message closes only that socket, with 1011; other sessions play on', async () => {
    const bystander = await renderSession();
    for (const piece of pieces(voiced(1.5), 0.04)) bystander.client.speak(piece);
    bystander.client.send({ type: 'agent.speak_end' });
    const { client, session } = await renderSession();
    // Fault injection: this session's cue handling throws as an unexpected bug would.
    live(session).action = () => {
      throw new Error('injected fault');
    };
    client.send({ type: 'agent.cue', cue: 'smile' });
    assert.equal(await client.waitClose(), 1011);
    const ended = await bystander.client.waitForType('agent.speak_ended');
    assert.ok(ended);
    await nodeStillServes();
    bystander.client.close();
  });

  it("a playback clock that throws for one session drops that session's queue and closes its socket, not the process", async () => {
    const { client, session } = await renderSession();
    const realtimeSession = live(session);
    const tick = realtimeSession.tick.bind(realtimeSession);
    let calls = 0;
    realtimeSession.tick = (now?: number) => {
      if (++calls === 3) throw new Error('injected clock fault');
      tick(now);
    };
    client.speak(voiced(1.0));
    assert.equal(await client.waitClose(), 1011);
    assert.equal(realtimeSession.queue.items.length, 0);
    await nodeStillServes();
  });

  it('rate-limits a socket: a burst is fine, a flood is told once, then closed with 4008', async () => {
    const { client } = await renderSession();
    for (let i = 0; i < 200; i++) client.send({ type: 'session.keep_alive' });
    client.send({ type: 'stage.get', event_id: 'fine' });
    await client.waitForType('stage.updated');
    assert.equal(client.of('error').length, 0, 'hundreds of messages at once are fine');
    for (let i = 0; i < MESSAGE_BURST + REFUSED_BEFORE_CLOSE * 3; i++) client.send({ type: 'session.keep_alive' });
    assert.equal(await client.waitClose(20_000), 4008);
    assert.equal(client.of('error').length, 1);
    assert.match(client.of('error')[0].event.error.message, /rate limit/);
    await nodeStillServes();
  });

  it('closes a text frame that is not UTF-8 with 1007 (once: the socket stops reading)', async () => {
    const { client } = await renderSession();
    // A text frame with a lone continuation byte.
    client.socket.send(Buffer.from([0x7b, 0x80, 0x7d]), { binary: false });
    assert.equal(await client.waitClose(), 1007);
    await nodeStillServes();
  });

  it('catches up after a late tick: speak_ended − speak_started stays the audio length, and a warning says the node was late', async () => {
    const { client, session } = await renderSession();
    const player = await PlayerClient.open(session.player_url);
    for (const piece of pieces(voiced(1.5), 0.04)) client.speak(piece, { event_id: 'late' });
    client.send({ type: 'agent.speak_end' });
    const started = await client.waitForType('agent.speak_started');
    await sleep(400);
    // The node cannot keep time for 250 ms (this process is the server: block its event loop).
    const until = performance.now() + 250;
    while (performance.now() < until);
    const ended = await client.waitForType('agent.speak_ended', 1, 5000);
    const elapsed = ended.at - started.at;
    assert.ok(Math.abs(elapsed - 1.5) < 0.05, `speak_ended − speak_started = ${elapsed.toFixed(3)} s for 1.500 s of audio after a 250 ms stall`);
    const warning = client.of('warning').find((w) => w.event.warning.type === 'playback_late');
    assert.ok(warning, 'a playback_late warning');
    assert.equal(warning.event.warning.source_event_id, 'late');
    assert.ok(warning.event.warning.late_ms >= 150, `late by ${warning.event.warning.late_ms} ms`);
    // The player still got every sample on one continuous timeline.
    assert.equal(
      player.frames.reduce((n, f) => n + f.pcm.length, 0),
      1.5 * 24000,
    );
    for (let i = 1; i < player.frames.length; i++)
      assert.ok(Math.abs(player.frames[i].t - player.frames[i - 1].t - player.frames[i - 1].pcm.length / 24000) < 1e-6);
    player.close();
    client.close();
  });
});

describe('timed actions heap', () => {
  it('gives actions back in time order, equal times in arrival order, at O(log n) each', () => {
    const heap = new TimedActions();
    const times = Array.from({ length: 2000 }, (_, i) => ((i * 7919) % 1000) / 100);
    times.forEach((at, i) => heap.add(at, { kind: 'cue', atSeconds: at, payload: { name: 'smile', intensity: 0.8 }, eventId: String(i) }));
    assert.equal(heap.next, 0);
    assert.equal(heap.takeDue(-1), undefined, 'nothing before its time');
    const out: Array<{ at: number; i: number }> = [];
    for (let d = heap.takeDue(100); d; d = heap.takeDue(100)) out.push({ at: d.at, i: Number(d.action.eventId) });
    assert.equal(out.length, 2000);
    for (let k = 1; k < out.length; k++) {
      assert.ok(out[k].at > out[k - 1].at || (out[k].at === out[k - 1].at && out[k].i > out[k - 1].i));
    }
    assert.equal(heap.size, 0);
  });
});
