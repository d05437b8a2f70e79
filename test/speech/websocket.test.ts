/** The WebSocket transports of ElevenLabs (stream-input) and Cartesia (/tts/websocket) against local fakes. */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import type { SpeechError } from '../../src/speech/errors.js';
import type { SpeechService, SpeechPiece } from '../../src/speech/synthesis.js';
import { makeService, sineBytes, sleep } from './helpers.js';

const KEY = 'ws-test-key';
const cleanup: Array<() => Promise<void> | void> = [];
after(async () => {
  for (const c of cleanup.reverse()) await c();
});

interface FakeWs {
  base: string;
  connections: Array<{ url: string; headers: http.IncomingHttpHeaders; received: any[] }>;
}

async function fakeWs(onMessage: (socket: WebSocket, message: any, conn: FakeWs['connections'][number]) => void, refuse?: number): Promise<FakeWs> {
  const server = http.createServer();
  const wss = new WebSocketServer({ noServer: true });
  const connections: FakeWs['connections'] = [];
  server.on('upgrade', (req, socket, head) => {
    if (refuse) {
      socket.end(`HTTP/1.1 ${refuse} Unauthorized\r\nContent-Length: 0\r\n\r\n`);
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      const conn = { url: req.url!, headers: req.headers, received: [] as any[] };
      connections.push(conn);
      ws.on('message', (data) => {
        const message = JSON.parse(String(data));
        conn.received.push(message);
        onMessage(ws, message, conn);
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanup.push(
    () =>
      new Promise<void>((r) => {
        for (const c of wss.clients) c.terminate();
        server.close(() => r());
        server.closeAllConnections();
      }),
  );
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, connections };
}

function service(env: Record<string, string>): SpeechService {
  const s = makeService({ SPEECH_TIMEOUT_MS: '1000', ...env });
  cleanup.push(() => s.close());
  return s;
}

const audio = sineBytes(240, 0.4);

test('Cartesia WebSocket: contexts on one socket, audio chunks, word timestamps', async () => {
  const fake = await fakeWs(async (ws, m) => {
    if (m.cancel) return;
    const half = audio.length / 2;
    ws.send(JSON.stringify({ type: 'chunk', data: audio.subarray(0, half).toString('base64'), done: false, status_code: 206, context_id: m.context_id }));
    await sleep(5);
    ws.send(
      JSON.stringify({
        type: 'timestamps',
        done: false,
        status_code: 206,
        context_id: m.context_id,
        word_timestamps: { words: m.transcript.replace(/[.!?]/g, '').split(' '), start: [0.02, 0.2], end: [0.18, 0.38] },
      }),
    );
    ws.send(JSON.stringify({ type: 'chunk', data: audio.subarray(half).toString('base64'), done: false, status_code: 206, context_id: m.context_id }));
    ws.send(JSON.stringify({ type: 'done', done: true, status_code: 206, context_id: m.context_id }));
  });
  const speech = service({ CARTESIA_API_KEY: KEY, CARTESIA_BASE_URL: fake.base, CARTESIA_TRANSPORT: 'websocket' });
  const chunks: SpeechPiece[] = [];
  for await (const c of speech.synthesize({ text: 'Hello there. Good morning.', provider: 'cartesia', voiceId: 'v-1', sampleRate: 24000 })) chunks.push(c);
  const pcm = Buffer.concat(chunks.map((c) => Buffer.from(c.pcm.buffer, c.pcm.byteOffset, c.pcm.byteLength)));
  assert.deepEqual(pcm, Buffer.concat([audio, audio]));
  const words = chunks.flatMap((c) => c.words ?? []);
  assert.deepEqual(
    words.map((w) => w.word),
    ['Hello', 'there', 'Good', 'morning'],
  );
  assert.equal(words[2].start, 0.42, 'second sentence words offset by the first sentence (0.4 s)');
  assert.equal(fake.connections.length, 1, 'both sentences on one socket');
  const conn = fake.connections[0];
  assert.equal(conn.url, '/tts/websocket');
  assert.equal(conn.headers['x-api-key'], KEY);
  assert.ok(conn.headers['cartesia-version']);
  const first = conn.received[0];
  assert.equal(first.transcript, 'Hello there.');
  assert.equal(first.add_timestamps, true);
  assert.equal(first.continue, false);
  assert.deepEqual(first.output_format, { container: 'raw', encoding: 'pcm_s16le', sample_rate: 24000 });
  assert.notEqual(conn.received[1].context_id, first.context_id);
});

test('Cartesia WebSocket: error message, silence and abort', async () => {
  let behaviour: 'error' | 'silent' | 'slow' = 'error';
  const fake = await fakeWs(async (ws, m) => {
    if (m.cancel) return;
    if (behaviour === 'error')
      ws.send(JSON.stringify({ type: 'error', done: true, status_code: 400, context_id: m.context_id, message: 'The model is not valid' }));
    if (behaviour === 'slow') {
      for (let i = 0; i < 100 && ws.readyState === 1; i++) {
        ws.send(JSON.stringify({ type: 'chunk', data: sineBytes(200, 0.05).toString('base64'), done: false, context_id: m.context_id }));
        await sleep(20);
      }
    }
  });
  const speech = service({ CARTESIA_API_KEY: KEY, CARTESIA_BASE_URL: fake.base, CARTESIA_TRANSPORT: 'websocket' });
  const run = () => speech.synthesizeAll({ text: 'Hi.', provider: 'cartesia', voiceId: 'v-1', sampleRate: 24000 });
  await assert.rejects(run(), (e: SpeechError) => e.code === 'bad_request' && /not valid/.test(e.message));
  behaviour = 'silent';
  await assert.rejects(run(), (e: SpeechError) => e.code === 'timeout');
  behaviour = 'slow';
  const controller = new AbortController();
  let n = 0;
  let at = 0;
  for await (const _ of speech.synthesize({ text: 'Hi.', provider: 'cartesia', voiceId: 'v-1', sampleRate: 24000, signal: controller.signal })) {
    if (++n === 2) {
      at = performance.now();
      controller.abort();
    }
  }
  // The fake keeps sending; a generous bound keeps this true on a loaded machine.
  assert.ok(performance.now() - at < 1000, `ended ${Math.round(performance.now() - at)} ms after the abort`);
  await sleep(50);
  const last = fake.connections.at(-1)!.received.at(-1);
  assert.equal(last.cancel, true, 'the context was cancelled at the provider');
});

test('ElevenLabs stream-input: BOS, text, EOS; audio with alignment becomes word timings', async () => {
  const fake = await fakeWs((ws, m) => {
    if (m.text !== '') return;
    const text = 'Hi you';
    const chars = [...text];
    ws.send(
      JSON.stringify({
        audio: audio.subarray(0, 9600).toString('base64'),
        isFinal: null,
        alignment: { chars: chars.slice(0, 3), charStartTimesMs: [0, 50, 100], charDurationsMs: [50, 50, 20] },
      }),
    );
    ws.send(
      JSON.stringify({
        audio: audio.subarray(9600).toString('base64'),
        isFinal: null,
        alignment: { chars: chars.slice(3), charStartTimesMs: [0, 60, 120], charDurationsMs: [60, 60, 60] },
      }),
    );
    ws.send(JSON.stringify({ isFinal: true }));
    ws.close();
  });
  const speech = service({ ELEVENLABS_API_KEY: KEY, ELEVENLABS_BASE_URL: fake.base, ELEVENLABS_TRANSPORT: 'websocket' });
  const chunks: SpeechPiece[] = [];
  for await (const c of speech.synthesize({ text: 'Hi you.', provider: 'elevenlabs-flash', voiceId: 'abc', language: 'en', sampleRate: 24000 })) chunks.push(c);
  const pcm = Buffer.concat(chunks.map((c) => Buffer.from(c.pcm.buffer, c.pcm.byteOffset, c.pcm.byteLength)));
  assert.deepEqual(pcm, audio);
  // Second chunk's alignment restarts at 0: it is chunk-relative, shifted by the first chunk's 0.2 s.
  assert.deepEqual(
    chunks.flatMap((c) => c.words ?? []),
    [
      { word: 'Hi', start: 0, end: 0.1 },
      { word: 'you', start: 0.2, end: 0.38 },
    ],
  );
  const conn = fake.connections[0];
  assert.match(conn.url, /^\/v1\/text-to-speech\/abc\/stream-input\?/);
  const q = new URLSearchParams(conn.url.split('?')[1]);
  assert.equal(q.get('model_id'), 'eleven_flash_v2_5');
  assert.equal(q.get('output_format'), 'pcm_24000');
  assert.equal(conn.headers['xi-api-key'], KEY);
  assert.deepEqual(conn.received, [{ text: ' ' }, { text: 'Hi you. ', flush: true }, { text: '' }]);
});

test('ElevenLabs stream-input: refused handshake and silence', async () => {
  const refused = await fakeWs(() => {}, 401);
  const s1 = service({ ELEVENLABS_API_KEY: KEY, ELEVENLABS_BASE_URL: refused.base, ELEVENLABS_TRANSPORT: 'websocket' });
  await assert.rejects(
    s1.synthesizeAll({ text: 'Hi.', provider: 'elevenlabs', voiceId: 'abc', sampleRate: 24000 }),
    (e: SpeechError) => e.code === 'auth_failed',
  );
  const silent = await fakeWs(() => {});
  const s2 = service({ ELEVENLABS_API_KEY: KEY, ELEVENLABS_BASE_URL: silent.base, ELEVENLABS_TRANSPORT: 'websocket' });
  const t = performance.now();
  await assert.rejects(s2.synthesizeAll({ text: 'Hi.', provider: 'elevenlabs', voiceId: 'abc', sampleRate: 24000 }), (e: SpeechError) => e.code === 'timeout');
  assert.ok(performance.now() - t < 5000);
});
