/**
 * The Deepgram recogniser, driven by the official @deepgram/sdk against a local fake of the
 * streaming /v1/listen WebSocket: `Token` authorisation, query parameters, binary linear16 audio,
 * interim and final `Results`, `Finalize`, `CloseStream`, `Metadata`.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { WebSocketServer } from 'ws';
import { DeepgramRecognizer } from '../../src/speech/recognition/deepgram.js';
import { RecognitionError } from '../../src/speech/recognition/errors.js';

interface Connection {
  url: URL;
  auth: string | undefined;
  bytes: number;
  controls: string[];
}

describe('Deepgram streaming recognition', () => {
  let server: http.Server;
  let base: string;
  const connections: Connection[] = [];
  const words = ['how', 'much', 'is', 'shipping'];
  let detected: string | undefined;

  before(async () => {
    server = http.createServer();
    const wss = new WebSocketServer({ server, path: '/v1/listen' });
    wss.on('connection', (socket, req) => {
      const url = new URL(req.url!, 'http://fake');
      const connection: Connection = { url, auth: req.headers.authorization, bytes: 0, controls: [] };
      connections.push(connection);
      if (req.headers.authorization !== 'Token dg-key') {
        socket.close(1008, 'Invalid credentials');
        return;
      }
      const results = (text: string, isFinal: boolean, fromFinalize = false) =>
        JSON.stringify({
          type: 'Results',
          channel_index: [0, 1],
          duration: 0.5,
          start: 0,
          is_final: isFinal,
          speech_final: isFinal,
          from_finalize: fromFinalize,
          channel: { alternatives: [{ transcript: text, confidence: 0.93, words: [], ...(detected ? { languages: [detected] } : {}) }] },
          metadata: { request_id: 'r', model_uuid: 'm', model_info: { name: 'nova-3', version: '1', arch: 'x' } },
        });
      let heard = 0;
      socket.on('message', (data, isBinary) => {
        if (isBinary) {
          connection.bytes += (data as Buffer).length;
          // One more word per half second of audio, as interim results.
          const due = Math.min(words.length - 1, Math.floor(connection.bytes / 16000));
          if (due > heard) {
            heard = due;
            socket.send(results(words.slice(0, heard).join(' '), false));
          }
          return;
        }
        const message = JSON.parse(String(data));
        connection.controls.push(message.type);
        if (message.type === 'Finalize') {
          socket.send(results(words.slice(0, 2).join(' '), true));
          socket.send(results(words.slice(2).join(' ') + '?', true, true));
        } else if (message.type === 'CloseStream') {
          socket.send(JSON.stringify({ type: 'Metadata', request_id: 'r', duration: connection.bytes / 32000, channels: 1 }));
          socket.close(1000);
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );

  test('streams audio as it arrives, reports the growing text, and the final text after Finalize', async () => {
    connections.length = 0;
    detected = undefined;
    const recognizer = new DeepgramRecognizer({ apiKey: 'dg-key', baseUrl: base, model: 'nova-3' });
    const stream = recognizer.stream({ language: 'en', languages: ['en'] });
    const partials: string[] = [];
    stream.onPartial = (text) => partials.push(text);
    for (let i = 0; i < 50; i++) {
      stream.push(new Int16Array(320)); // 20 ms
      await new Promise((r) => setTimeout(r, 2));
    }
    const transcript = await stream.finish();
    assert.deepEqual(transcript, { text: 'how much is shipping?', language: 'en', confidence: 0.93 });
    assert.ok(partials.includes('how') && partials.includes('how much'), partials.join(' | '));
    const [c] = connections;
    assert.equal(c.auth, 'Token dg-key');
    assert.equal(c.url.searchParams.get('model'), 'nova-3');
    assert.equal(c.url.searchParams.get('encoding'), 'linear16');
    assert.equal(c.url.searchParams.get('sample_rate'), '16000');
    assert.equal(c.url.searchParams.get('interim_results'), 'true');
    assert.equal(c.url.searchParams.get('language'), 'en');
    assert.equal(c.bytes, 50 * 640, 'every sample reached the socket, those pushed before it opened too');
    for (let i = 0; i < 50 && c.controls.length < 2; i++) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(c.controls, ['Finalize', 'CloseStream']);
  });

  test('several languages ask for multi and report the detected one', async () => {
    connections.length = 0;
    detected = 'es';
    const recognizer = new DeepgramRecognizer({ apiKey: 'dg-key', baseUrl: base, model: 'nova-3' });
    const transcript = await recognizer.transcribe(new Int16Array(16000), { language: 'en', languages: ['en', 'es'] });
    assert.equal(transcript.language, 'es');
    assert.equal(connections[0].url.searchParams.get('language'), 'multi');
  });

  test('a refused key is a RecognitionError', async () => {
    const recognizer = new DeepgramRecognizer({ apiKey: 'wrong', baseUrl: base, model: 'nova-3', finalizeTimeoutMs: 2000 });
    await assert.rejects(recognizer.transcribe(new Int16Array(1600), { language: 'en' }), RecognitionError);
  });

  test('an aborted stream closes its socket', async () => {
    connections.length = 0;
    const recognizer = new DeepgramRecognizer({ apiKey: 'dg-key', baseUrl: base, model: 'nova-3' });
    const stream = recognizer.stream({ language: 'en' });
    stream.push(new Int16Array(320));
    await new Promise((r) => setTimeout(r, 200));
    stream.abort();
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(connections.length, 1);
    assert.deepEqual(connections[0].controls, [], 'nothing finalised');
  });
});
