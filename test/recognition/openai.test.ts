/**
 * The OpenAI-compatible recogniser, driven by the official `openai` client against a local fake
 * that speaks the real wire format: multipart POST /v1/audio/transcriptions, Bearer key,
 * `verbose_json` or `json` answers, OpenAI's error bodies.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { decodeWav } from '../../src/speech/audio.js';
import { RecognitionError } from '../../src/speech/recognition/errors.js';
import { OpenAiRecognizer } from '../../src/speech/recognition/openai.js';

interface Received {
  path: string;
  auth: string | undefined;
  fields: Record<string, string>;
  pcm: Int16Array;
  sampleRate: number;
}

describe('OpenAI-compatible transcription endpoint', () => {
  let server: http.Server;
  let base: string;
  const received: Received[] = [];
  let answer: { status: number; body: unknown } = { status: 200, body: {} };

  before(async () => {
    server = http.createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const form = await new Request('http://fake' + req.url, {
        method: 'POST',
        headers: { 'content-type': req.headers['content-type']! },
        body: Buffer.concat(chunks),
      }).formData();
      const fields: Record<string, string> = {};
      let pcm: Int16Array = new Int16Array(0);
      let sampleRate = 0;
      for (const [key, value] of form as unknown as Iterable<[string, FormDataEntryValue]>) {
        if (typeof value === 'string') fields[key] = value;
        else {
          const wav = decodeWav(new Uint8Array(await value.arrayBuffer()));
          pcm = wav.pcm;
          sampleRate = wav.sampleRate;
          fields[`${key}.name`] = value.name;
        }
      }
      received.push({ path: req.url!, auth: req.headers.authorization, fields, pcm, sampleRate });
      res.writeHead(answer.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answer.body));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test('a whisper model gets the turn as a 16 kHz WAV and answers text with the detected language', async () => {
    received.length = 0;
    answer = { status: 200, body: { task: 'transcribe', language: 'english', duration: 1.5, text: ' Where is my order? ', segments: [] } };
    const recognizer = new OpenAiRecognizer({ baseUrl: base, apiKey: 'sk-test', model: 'whisper-1' });
    const pcm = Int16Array.from({ length: 24000 }, (_, i) => Math.round(8000 * Math.sin(i / 10)));
    const result = await recognizer.transcribe(pcm, { language: 'en', languages: ['en', 'fr'] });
    assert.deepEqual(result, { text: 'Where is my order?', language: 'en' });
    const [r] = received;
    assert.equal(r.path, '/v1/audio/transcriptions');
    assert.equal(r.auth, 'Bearer sk-test');
    assert.equal(r.fields.model, 'whisper-1');
    assert.equal(r.fields.response_format, 'verbose_json');
    assert.equal(r.fields.language, undefined, 'several languages: the model detects');
    assert.equal(r.sampleRate, 16000);
    assert.deepEqual(Array.from(r.pcm.subarray(0, 50)), Array.from(pcm.subarray(0, 50)));
    assert.equal(r.pcm.length, pcm.length);
  });

  test('one expected language is named; a self-hosted server answering "fr" is understood', async () => {
    received.length = 0;
    answer = { status: 200, body: { text: 'Bonjour', language: 'fr' } };
    const recognizer = new OpenAiRecognizer({ baseUrl: base, model: 'Systran/faster-whisper-small' });
    const result = await recognizer.transcribe(new Int16Array(1600), { language: 'fr', languages: ['fr'] });
    assert.deepEqual(result, { text: 'Bonjour', language: 'fr' });
    assert.equal(received[0].fields.language, 'fr');
    assert.equal(received[0].auth, 'Bearer none');
  });

  test('other models get plain json', async () => {
    received.length = 0;
    answer = { status: 200, body: { text: 'Hello there.' } };
    const recognizer = new OpenAiRecognizer({ baseUrl: base, apiKey: 'k', model: 'gpt-4o-transcribe' });
    const result = await recognizer.transcribe(new Int16Array(1600), { language: 'en', languages: ['en'] });
    assert.deepEqual(result, { text: 'Hello there.', language: 'en' });
    assert.equal(received[0].fields.response_format, 'json');
  });

  test('a refused key is a RecognitionError that names the problem, not the key', async () => {
    answer = { status: 401, body: { error: { message: 'Incorrect API key provided: sk-secret', type: 'invalid_request_error', code: 'invalid_api_key' } } };
    const recognizer = new OpenAiRecognizer({ baseUrl: base, apiKey: 'sk-secret', model: 'whisper-1' });
    await assert.rejects(recognizer.transcribe(new Int16Array(1600), { language: 'en' }), (e: Error) => {
      assert.ok(e instanceof RecognitionError);
      assert.equal(e.status, 401);
      assert.match(e.message, /key was refused/);
      assert.doesNotMatch(e.message, /sk-secret/);
      return true;
    });
  });

  test('an unreachable endpoint is a RecognitionError', async () => {
    const recognizer = new OpenAiRecognizer({ baseUrl: 'http://127.0.0.1:9/v1', model: 'whisper-1', timeoutMs: 2000 });
    await assert.rejects(recognizer.transcribe(new Int16Array(1600), { language: 'en' }), RecognitionError);
  });
});
