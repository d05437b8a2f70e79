/**
 * Each premium client, driven for real against a local fake (127.0.0.1) that speaks the
 * provider's wire format: success, HTTP errors, a silent server (timeout), a stall mid-stream,
 * and a provider that is down.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { SpeechError } from '../../src/speech/errors.js';
import { encodeWav } from '../../src/speech/audio.js';
import type { SpeechService } from '../../src/speech/synthesis.js';
import { closedPort, fakeServer, makeService, sineBytes, sleep, type FakeServer } from './helpers.js';

const KEY = 'test-key-123456';
const audio = sineBytes(220, 0.5);
const services: SpeechService[] = [];
const fakes: FakeServer[] = [];
after(async () => {
  await Promise.all(services.map((s) => s.close()));
  await Promise.all(fakes.map((f) => f.close()));
});

type Mode = 'ok' | 'http401' | 'http500' | 'silent' | 'stall';
let mode: Mode = 'ok';

async function streamBytes(res: import('node:http').ServerResponse, bytes: Buffer, stall = false) {
  res.writeHead(200, { 'content-type': 'application/octet-stream' });
  for (let i = 0; i < bytes.length; i += 3001) {
    res.write(bytes.subarray(i, i + 3001));
    await sleep(3);
    if (stall && i > 0) return; // keeps the connection open, sends nothing more
  }
  res.end();
}

function failOrSilent(res: import('node:http').ServerResponse): boolean {
  if (mode === 'http401') {
    res.writeHead(401, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ detail: { status: 'invalid_api_key', message: 'Invalid API key' } }));
    return true;
  }
  if (mode === 'http500') {
    res.writeHead(500);
    res.end('internal');
    return true;
  }
  return mode === 'silent';
}

async function setup(kind: 'ELEVENLABS' | 'CARTESIA' | 'INWORLD', handler: Parameters<typeof fakeServer>[0]) {
  const fake = await fakeServer(handler);
  fakes.push(fake);
  const lines: string[] = [];
  const speech = makeService({ [`${kind}_API_KEY`]: KEY, [`${kind}_BASE_URL`]: fake.url, SPEECH_TIMEOUT_MS: '1000' }, lines);
  services.push(speech);
  return { fake, speech, lines };
}

async function errorCases(speech: SpeechService, provider: string, voiceId: string, lines: string[]) {
  const run = () => speech.synthesizeAll({ text: 'Hello there.', provider, voiceId, sampleRate: 24000 });
  const codeOf = async () => {
    try {
      await run();
      return 'no error';
    } catch (e) {
      assert.ok(e instanceof SpeechError, String(e));
      return (e as SpeechError).code;
    }
  };
  mode = 'http401';
  assert.equal(await codeOf(), 'auth_failed');
  mode = 'http500';
  assert.equal(await codeOf(), 'provider_unavailable');
  mode = 'silent';
  let t = performance.now();
  assert.equal(await codeOf(), 'timeout');
  assert.ok(performance.now() - t < 4000, 'timed out near SPEECH_TIMEOUT_MS');
  mode = 'stall';
  t = performance.now();
  assert.equal(await codeOf(), 'timeout');
  assert.ok(performance.now() - t < 4000);
  mode = 'ok';
  assert.ok(
    lines.some((l) => l.includes('HTTP 401')),
    'errors are logged',
  );
  assert.ok(!lines.some((l) => l.includes(KEY)), 'the key never reaches the log');
}

test('ElevenLabs: streaming PCM endpoint, models, headers, and failures', async () => {
  const { fake, speech, lines } = await setup('ELEVENLABS', async (req, res) => {
    if (req.url === '/v1/voices') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          voices: [
            { voice_id: 'abc', name: 'Aria', labels: { gender: 'female', accent: 'american' }, verified_languages: [{ language: 'en', locale: 'en-US' }] },
            { voice_id: 'def', name: 'Jorge', labels: { gender: 'male', language: 'es' } },
            { voice_id: 'ghi', name: 'Robot', labels: {} },
          ],
        }),
      );
      return;
    }
    if (failOrSilent(res)) return;
    await streamBytes(res, audio, mode === 'stall');
  });
  await speech.start();
  assert.equal(speech.engineFor('elevenlabs', 'abc'), 'elevenlabs');
  const { pcm } = await speech.synthesizeAll({ text: 'Hello there.', provider: 'elevenlabs', voiceId: 'abc', sampleRate: 24000 });
  assert.deepEqual(Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength), audio, 'bytes arrive unchanged (24 kHz in, 24 kHz out)');
  await speech.synthesizeAll({ text: 'Hola.', provider: 'elevenlabs-flash', voiceId: 'def', language: 'es', sampleRate: 24000 });
  const tts = fake.requests.filter((r) => r.method === 'POST');
  assert.equal(tts[0].url, '/v1/text-to-speech/abc/stream?output_format=pcm_24000');
  assert.equal(tts[0].headers['xi-api-key'], KEY);
  assert.deepEqual(JSON.parse(tts[0].body), { text: 'Hello there.', model_id: 'eleven_multilingual_v2' });
  assert.deepEqual(JSON.parse(tts[1].body), { text: 'Hola.', model_id: 'eleven_flash_v2_5', language_code: 'es' });
  // The live voice list replaced the shipped one, normalised; a voice without gender is left out.
  await speech.freshVoices('elevenlabs');
  assert.deepEqual(speech.voices.list('elevenlabs')!.length, 2, lines.join('\n'));
  assert.deepEqual(
    speech.voices.list('elevenlabs')!.map((v) => [v.voice_id, v.gender, v.language, v.locale]),
    [
      ['abc', 'f', 'en', 'en-US'],
      ['def', 'm', 'es', 'es'],
    ],
  );
  assert.equal(speech.voices.list('elevenlabs-flash')!.length, 2);
  await errorCases(speech, 'elevenlabs', 'abc', lines);
});

test('Cartesia: /tts/bytes with raw pcm_s16le, version header, and failures', async () => {
  const { fake, speech, lines } = await setup('CARTESIA', async (req, res) => {
    if (req.url?.startsWith('/voices')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          data: [
            { id: 'v-1', name: 'Katie', language: 'en', gender: 'feminine' },
            { id: 'v-2', name: 'Luca', language: 'it', description: 'A calm male voice' },
          ],
          has_more: false,
        }),
      );
      return;
    }
    if (failOrSilent(res)) return;
    await streamBytes(res, audio, mode === 'stall');
  });
  await speech.start();
  const { pcm } = await speech.synthesizeAll({ text: 'Hello there.', provider: 'cartesia', voiceId: 'v-1', sampleRate: 24000 });
  assert.deepEqual(Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength), audio);
  const req = fake.requests.find((r) => r.url === '/tts/bytes')!;
  assert.equal(req.headers['x-api-key'], KEY);
  assert.ok(/^\d{4}-\d{2}-\d{2}$/.test(String(req.headers['cartesia-version'])));
  const body = JSON.parse(req.body);
  assert.equal(body.transcript, 'Hello there.');
  assert.deepEqual(body.voice, { mode: 'id', id: 'v-1' });
  assert.deepEqual(body.output_format, { container: 'raw', encoding: 'pcm_s16le', sample_rate: 24000 });
  await speech.freshVoices('cartesia');
  assert.deepEqual(
    speech.voices.list('cartesia')!.map((v) => [v.voice_id, v.gender, v.language]),
    [
      ['v-1', 'f', 'en'],
      ['v-2', 'm', 'it'],
    ],
  );
  await errorCases(speech, 'cartesia', 'v-1', lines);
});

test('Inworld: NDJSON stream of WAV chunks (headers stripped), word timings, Basic auth, and failures', async () => {
  const half = audio.length / 2;
  const pieces = [audio.subarray(0, half), audio.subarray(half)];
  const { fake, speech, lines } = await setup('INWORLD', async (req, res) => {
    if (req.url === '/tts/v1/voices') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ voices: [{ voiceId: 'Ashley', displayName: 'Ashley', languages: ['en'], tags: ['female', 'warm'] }] }));
      return;
    }
    if (failOrSilent(res)) return;
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    const times = [
      [0.05, 0.3],
      [0.35, 0.5],
    ];
    for (let i = 0; i < 2; i++) {
      const pcm = new Int16Array(new Uint8Array(pieces[i]).buffer);
      const result = {
        audioContent: encodeWav(pcm, 24000).toString('base64'),
        timestampInfo: { wordAlignment: { words: [['Hello', 'there'][i]], wordStartTimeSeconds: [times[i][0]], wordEndTimeSeconds: [times[i][1]] } },
      };
      const line = JSON.stringify({ result }) + '\n';
      // Split a line across two writes: the client must reassemble it.
      res.write(line.slice(0, 50));
      await sleep(3);
      res.write(line.slice(50));
      if (mode === 'stall') return;
    }
    res.end();
  });
  await speech.start();
  const chunks = [];
  for await (const c of speech.synthesize({ text: 'Hello there.', provider: 'inworld-flash', voiceId: 'Ashley', sampleRate: 24000 })) chunks.push(c);
  const pcm = Buffer.concat(chunks.map((c) => Buffer.from(c.pcm.buffer, c.pcm.byteOffset, c.pcm.byteLength)));
  assert.deepEqual(pcm, audio, 'RIFF headers stripped, samples unchanged');
  assert.deepEqual(
    chunks.flatMap((c) => c.words ?? []),
    [
      { word: 'Hello', start: 0.05, end: 0.3 },
      { word: 'there', start: 0.35, end: 0.5 },
    ],
  );
  const req = fake.requests.find((r) => r.url === '/tts/v1/voice:stream')!;
  assert.equal(req.headers.authorization, `Basic ${KEY}`);
  const body = JSON.parse(req.body);
  assert.equal(body.modelId, 'inworld-tts-1');
  assert.equal(body.voiceId, 'Ashley');
  assert.deepEqual(body.audioConfig, { audioEncoding: 'LINEAR16', sampleRateHertz: 24000 });
  await speech.synthesizeAll({ text: 'Hi.', provider: 'inworld', voiceId: 'Ashley', sampleRate: 24000 });
  assert.equal(JSON.parse(fake.requests.filter((r) => r.url === '/tts/v1/voice:stream')[1].body).modelId, 'inworld-tts-1-max');
  await errorCases(speech, 'inworld', 'Ashley', lines);
});

test('Inworld: an error line in the stream becomes a SpeechError', async () => {
  const { speech } = await setup('INWORLD', async (req, res) => {
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    res.end(JSON.stringify({ error: { code: 3, message: 'Unknown voice' } }) + '\n');
  });
  await assert.rejects(
    speech.synthesizeAll({ text: 'Hi.', provider: 'inworld', voiceId: 'Nobody', sampleRate: 24000 }),
    (e: SpeechError) => e.code === 'provider_error' && /Unknown voice/.test(e.message),
  );
});

test('a provider that is down: provider_unavailable at once, not a stuck stream', async () => {
  const port = await closedPort();
  const speech = makeService({ ELEVENLABS_API_KEY: KEY, ELEVENLABS_BASE_URL: `http://127.0.0.1:${port}` });
  services.push(speech);
  await speech.start();
  const t = performance.now();
  await assert.rejects(
    speech.synthesizeAll({ text: 'Hi.', provider: 'elevenlabs', voiceId: 'abc', sampleRate: 16000 }),
    (e: SpeechError) => e.code === 'provider_unavailable',
  );
  assert.ok(performance.now() - t < 1000);
  // The shipped list stays when the voice list cannot be fetched.
  await speech.freshVoices('elevenlabs');
  assert.ok(speech.voices.list('elevenlabs')!.some((v) => v.voice_id === '21m00Tcm4TlvDq8ikWAM'));
});

test('abort cancels a premium stream at once', async () => {
  const { speech } = await setup('CARTESIA', async (req, res) => {
    res.writeHead(200);
    for (let i = 0; i < 200 && !res.destroyed; i++) {
      res.write(sineBytes(200, 0.05));
      await sleep(20);
    }
    res.end();
  });
  const controller = new AbortController();
  let n = 0;
  let at = 0;
  for await (const _ of speech.synthesize({ text: 'A long one.', provider: 'cartesia', voiceId: 'v-1', sampleRate: 16000, signal: controller.signal })) {
    if (++n === 3) {
      at = performance.now();
      controller.abort();
    }
  }
  assert.equal(n, 3);
  // The fake would stream for 4 s more; a generous bound keeps this true on a loaded machine.
  assert.ok(performance.now() - at < 1000, `ended ${Math.round(performance.now() - at)} ms after the abort`);
});
