/**
 * The page → server side of the player channel (docs/player-protocol.md): in conversation mode the
 * microphone frames, typed turns and mute reach the live conversation, checked and bounded; render
 * mode takes none of it; page presence is reported for the visitor_left grace.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { forEachEngine, startTestApp, type TestApp } from '../support/app.js';
import { RecordingInputs } from '../support/recording-inputs.js';
import { MIC_MAX_SAMPLES, MAX_TYPED_CHARS, TYPED_BURST } from '../../src/realtime/player-in.js';

class Page {
  readonly messages: any[] = [];
  closed = false;
  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data, isBinary) => {
      if (!isBinary) this.messages.push(JSON.parse(data.toString()));
    });
    socket.on('close', () => (this.closed = true));
  }

  static async open(playerUrl: string): Promise<Page> {
    const page = new Page(new WebSocket(`${playerUrl.replace(/^http/, 'ws')}/ws`));
    await waitFor(() => page.messages.some((m) => m.type === 'hello'));
    return page;
  }

  errors(code: string) {
    return this.messages.filter((m) => m.type === 'error' && m.code === code);
  }

  mic(seq: number, samples: Int16Array): void {
    const frame = Buffer.alloc(4 + samples.byteLength);
    frame.writeUInt32LE(seq, 0);
    Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength).copy(frame, 4);
    this.socket.send(frame, { binary: true });
  }

  send(message: unknown): void {
    this.socket.send(typeof message === 'string' ? message : JSON.stringify(message));
  }

  close(): Promise<void> {
    this.socket.close();
    return waitFor(() => this.closed);
  }
}

async function waitFor(predicate: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}

const ramp = (n: number, from: number) => Int16Array.from({ length: n }, (_, i) => ((from + i * 37) % 60000) - 30000);

forEachEngine('player channel input', (engine) => {
  let t: TestApp;
  const inputs = new RecordingInputs();

  before(async () => {
    t = await startTestApp(engine, {}, { visitorInputs: inputs.hook });
  });
  after(async () => t?.close());

  async function start(mode: 'conversation' | 'render') {
    const agent = (await t.request('POST', '/v1/agent/create', { body: { name: `Input ${mode}`, concurrency_limit: 10 } })).body;
    const started = await t.request('POST', '/v1/sessions', { body: { agent_id: agent.id, mode } });
    assert.equal(started.status, 201, JSON.stringify(started.body));
    const id = started.body.session_id as string;
    if (mode === 'conversation') inputs.live.add(id);
    return { id, playerUrl: started.body.player_url as string };
  }

  test('a player key no link can have is an unknown link: NUL bytes are told 4004, an over-long key 414 and its connection closed, never an internal error', async () => {
    const outcome = (key: string) =>
      new Promise<{ code?: number; status?: number; closedByServer?: boolean }>((resolve) => {
        const socket = new WebSocket(`${t.url.replace(/^http/, 'ws')}/p/${key}/ws`);
        socket.on('error', () => {});
        socket.on('unexpected-response', (request, response) => {
          // The server closes an upgrade it answered with an error (else it holds it, and cannot close).
          const timer = setTimeout(() => {
            request.destroy();
            resolve({ status: response.statusCode, closedByServer: false });
          }, 2000);
          response.socket.once('close', () => {
            clearTimeout(timer);
            resolve({ status: response.statusCode, closedByServer: true });
          });
          response.resume();
        });
        socket.on('close', (code) => resolve({ code }));
      });
    assert.deepEqual(await outcome('%00%00'), { code: 4004 });
    assert.deepEqual(await outcome('k'.repeat(200)), { status: 414, closedByServer: true });
  });

  test('microphone frames reach the conversation sample for sample; gaps are counted', async () => {
    const { id, playerUrl } = await start('conversation');
    const page = await Page.open(playerUrl);
    const first = ramp(1600, 0);
    const second = ramp(1600, 1600);
    page.mic(0, first);
    page.mic(1, second);
    page.mic(5, ramp(800, 3200)); // 2, 3, 4 were lost on the way
    await waitFor(() => inputs.of(id).samples.length === 4000);
    assert.deepEqual(inputs.of(id).samples.slice(0, 3200), [...first, ...second]);
    assert.equal(inputs.of(id).pieces, 3);
    assert.equal(t.context.sockets!.inputState(id)!.gaps, 3);
    // The conversation's capture clock is told of the three frames lost (at the next one's size).
    assert.deepEqual(inputs.of(id).lostBefore, [0, 0, 3 * 800]);
    assert.equal(inputs.of(id).connected, 1);
    await page.close();
    await waitFor(() => inputs.of(id).disconnected === 1);
  });

  test('bad microphone frames are refused with an error, and the socket stays open', async () => {
    const { id, playerUrl } = await start('conversation');
    const page = await Page.open(playerUrl);
    page.socket.send(Buffer.alloc(3), { binary: true }); // shorter than the header
    page.socket.send(Buffer.alloc(4 + 3), { binary: true }); // half a sample
    page.mic(0, new Int16Array(MIC_MAX_SAMPLES + 1));
    await waitFor(() => page.errors('bad_audio_frame').length >= 1);
    page.mic(1, ramp(160, 0));
    await waitFor(() => inputs.of(id).samples.length === 160);
    assert.equal(page.closed, false);
    assert.equal(page.errors('bad_audio_frame').length, 1, 'the same error is said once, not per frame');
    await page.close();
  });

  test('audio faster than real time is bounded per session', async () => {
    const { id, playerUrl } = await start('conversation');
    const page = await Page.open(playerUrl);
    for (let i = 0; i < 60; i++) page.mic(i, ramp(1600, 0)); // 6 s of audio at once
    await waitFor(() => page.errors('too_much_audio').length === 1);
    await new Promise((r) => setTimeout(r, 200));
    const state = t.context.sockets!.inputState(id)!;
    const received = inputs.of(id).samples.length / 16000;
    assert.ok(received >= 3 && received < 4, `took ${received} s of a 6 s burst`);
    assert.equal(state.samplesDropped + state.samplesReceived, 60 * 1600);
    // What was dropped is passed on as lost before the next frame taken, so the capture clock
    // moves on by it (at most a second: past that the clock starts over after the gap anyway).
    const taken = inputs.of(id).samples.length;
    page.mic(60, ramp(320, 0));
    await waitFor(() => inputs.of(id).samples.length === taken + 320);
    const lost = inputs.of(id).lostBefore;
    const total = lost.reduce((a, b) => a + b, 0);
    assert.ok(lost.at(-1)! > 0 && lost.every((n) => n <= 16000), `lost before each piece: ${lost.filter(Boolean)}`);
    assert.ok(total >= Math.min(16000, state.samplesDropped) && total <= state.samplesDropped, `${total} of ${state.samplesDropped} dropped samples passed on`);
    await page.close();
  });

  test('typed turns: trimmed, checked, bounded', async () => {
    const { id, playerUrl } = await start('conversation');
    const page = await Page.open(playerUrl);
    page.send({ type: 'visitor_text', text: '  What are your opening hours?\u0007 ' });
    await waitFor(() => inputs.of(id).typed.length === 1);
    assert.equal(inputs.of(id).typed[0], 'What are your opening hours?');
    page.send({ type: 'visitor_text', text: '   ' });
    page.send({ type: 'visitor_text', text: 42 });
    page.send({ type: 'visitor_text', text: 'x'.repeat(MAX_TYPED_CHARS + 1) });
    page.send('{not json');
    page.send({ type: 'dance' });
    page.send({ nope: true });
    await waitFor(() => page.errors('text_too_long').length === 1 && page.errors('unknown_type').length === 1 && page.errors('invalid_message').length >= 1);
    for (let i = 0; i < TYPED_BURST + 2; i++) page.send({ type: 'visitor_text', text: `question ${i}` });
    await waitFor(() => page.errors('rate_limited').length === 1);
    // One was used above: TYPED_BURST - 1 more fit the burst (a little refill may add one).
    const typed = inputs.of(id).typed.length;
    assert.ok(typed >= TYPED_BURST && typed <= TYPED_BURST + 1, `${typed} typed turns taken`);
    page.send({ type: 'x'.repeat(9000) });
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(page.closed, false);
    await page.close();
  });

  test('mute reaches the conversation and silences the microphone on the server too', async () => {
    const { id, playerUrl } = await start('conversation');
    const page = await Page.open(playerUrl);
    page.send({ type: 'mic', muted: true });
    page.send({ type: 'mic', muted: 'yes' });
    await waitFor(() => inputs.of(id).muted.length === 1 && page.errors('invalid_message').length === 1);
    page.mic(0, ramp(1600, 0));
    page.send({ type: 'mic', muted: false });
    page.mic(1, ramp(320, 0));
    await waitFor(() => inputs.of(id).muted.length === 2 && inputs.of(id).samples.length === 320);
    assert.deepEqual(inputs.of(id).muted, [true, false]);
    assert.equal(t.context.sockets!.inputState(id)!.samplesDropped, 1600);
    assert.deepEqual(inputs.of(id).lostBefore, [1600], 'the muted audio is counted in before the next frame');
    await page.close();
  });

  test('two pages: the conversation hears of the visitor leaving only when the last one goes', async () => {
    const { id, playerUrl } = await start('conversation');
    const a = await Page.open(playerUrl);
    const b = await Page.open(playerUrl);
    assert.equal(inputs.of(id).connected, 2);
    await a.close();
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(inputs.of(id).disconnected, 0);
    await b.close();
    await waitFor(() => inputs.of(id).disconnected === 1);
  });

  test('render mode takes no microphone, typed turns or mute', async () => {
    const { id, playerUrl } = await start('render');
    const page = await Page.open(playerUrl);
    page.mic(0, ramp(1600, 0));
    page.send({ type: 'visitor_text', text: 'hello' });
    page.send({ type: 'mic', muted: true });
    page.send({ type: 'ready', audio: true });
    await waitFor(() => page.errors('wrong_mode').length >= 1);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(inputs.sessions.has(id), false, 'nothing reached a conversation');
    assert.equal(t.context.sockets!.inputState(id)!.samplesReceived, 0);
    await page.close();
  });

  test('a conversation without a live loop yet: input is taken and dropped quietly', async () => {
    const { id, playerUrl } = await start('conversation');
    inputs.live.delete(id);
    const page = await Page.open(playerUrl);
    page.mic(0, ramp(1600, 0));
    page.send({ type: 'visitor_text', text: 'anyone there?' });
    await waitFor(() => t.context.sockets!.inputState(id)!.typedTurns === 1);
    assert.equal(page.messages.filter((m) => m.type === 'error').length, 0);
    assert.equal(inputs.sessions.has(id), false);
    await page.close();
  });
});
