/** GET /v1/voices/{provider} and its preview, served over real HTTP with the service's error handling and validation. */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { registerErrorHandling } from '../../src/core/errors.js';
import { registerValidation } from '../../src/core/validation.js';
import { voiceRoutes } from '../../src/speech/routes.js';
import { PreviewCache } from '../../src/speech/voice-samples.js';
import { decodeWav, rms } from '../../src/speech/audio.js';
import { makeService } from './helpers.js';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'presence-voices-'));
const speech = makeService({ DATA_DIR: dataDir });
let app: FastifyInstance;
let url: string;
let previews: PreviewCache;

before(async () => {
  app = Fastify({ logger: false });
  registerValidation(app);
  registerErrorHandling(app);
  previews = voiceRoutes(app, { speech, dataDir });
  await app.listen({ port: 0, host: '127.0.0.1' });
  url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
});
after(async () => {
  await app.close();
  await speech.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const get = async (p: string) => {
  const r = await fetch(url + p);
  const type = r.headers.get('content-type') ?? '';
  return { status: r.status, headers: r.headers, body: type.includes('json') ? await r.json() : Buffer.from(await r.arrayBuffer()) };
};

test('lists every provider with the required fields', async () => {
  for (const provider of ['kokoro', 'inworld', 'inworld-flash', 'elevenlabs', 'elevenlabs-flash', 'cartesia']) {
    const r = await get(`/v1/voices/${provider}`);
    assert.equal(r.status, 200, provider);
    assert.ok(r.body.length > 0);
    for (const v of r.body) {
      assert.ok(typeof v.voice_id === 'string' && typeof v.name === 'string');
      assert.ok(['f', 'm'].includes(v.gender));
      assert.match(v.language, /^[a-z]{2}$/);
      assert.equal(v.premium, provider !== 'kokoro');
      assert.equal(v.preview_url, `/v1/voices/${provider}/${encodeURIComponent(v.voice_id)}/preview`);
    }
  }
  assert.equal((await get('/v1/voices/kokoro')).body.length, 54);
});

test('filters by language and gender', async () => {
  const fr = (await get('/v1/voices/kokoro?language=fr')).body;
  assert.deepEqual(
    fr.map((v: any) => v.voice_id),
    ['ff_siwis'],
  );
  const enMale = (await get('/v1/voices/kokoro?language=en&gender=m')).body;
  assert.ok(enMale.length >= 10 && enMale.every((v: any) => v.language === 'en' && v.gender === 'm'));
  assert.deepEqual((await get('/v1/voices/cartesia?language=de')).body, []);
});

test('unknown provider is 404 with a clear detail; bad filters are 422', async () => {
  const r = await get('/v1/voices/acme');
  assert.equal(r.status, 404);
  assert.equal(r.body.detail.code, 'unknown_provider');
  assert.match(r.body.detail.message, /acme.*kokoro/);
  const g = await get('/v1/voices/kokoro?gender=x');
  assert.equal(g.status, 422);
  assert.deepEqual(g.body.detail[0].loc, ['query', 'gender']);
  const l = await get('/v1/voices/kokoro?language=english');
  assert.equal(l.status, 422);
  assert.deepEqual(l.body.detail[0].loc, ['query', 'language']);
  const v = await get('/v1/voices/kokoro/zz_nobody/preview');
  assert.equal(v.status, 404);
  assert.equal(v.body.detail.code, 'unknown_voice');
});

test('preview is a playable WAV of speech, cached after the first synthesis (memory and disk)', async () => {
  const first = await get('/v1/voices/kokoro/af_bella/preview');
  assert.equal(first.status, 200);
  assert.equal(first.headers.get('content-type'), 'audio/wav');
  assert.equal(first.headers.get('x-cache'), 'miss');
  const wav = decodeWav(first.body as Buffer);
  assert.equal(wav.sampleRate, 24000);
  assert.ok(wav.pcm.length / 24000 > 2 && wav.pcm.length / 24000 < 9, `${wav.pcm.length / 24000}s`);
  assert.ok(rms(wav.pcm) > 0.03);
  const again = await get('/v1/voices/kokoro/af_bella/preview');
  assert.equal(again.headers.get('x-cache'), 'hit');
  assert.deepEqual(again.body, first.body);
  assert.equal(previews.synthesized, 1);
  // A restart keeps the preview: a new cache over the same DATA_DIR finds it on disk.
  const fresh = new PreviewCache(speech, dataDir);
  const fromDisk = await fresh.get('kokoro', 'af_bella', 'Bella', 'en');
  assert.equal(fromDisk.cached, true);
  assert.equal(fresh.synthesized, 0);
  // Concurrent first requests synthesise once.
  const [a, b] = await Promise.all([get('/v1/voices/kokoro/am_puck/preview'), get('/v1/voices/kokoro/am_puck/preview')]);
  assert.deepEqual(a.body, b.body);
  assert.equal(previews.synthesized, 2);
});

test("preview language: honoured where the voice speaks it, else the voice's own", async () => {
  const es = await get('/v1/voices/kokoro/ef_dora/preview?language=es');
  assert.equal(es.headers.get('x-preview-language'), 'es');
  const other = await get('/v1/voices/kokoro/af_heart/preview?language=ja');
  assert.equal(other.headers.get('x-preview-language'), 'en');
  const bad = await get('/v1/voices/kokoro/af_heart/preview?language=xyz');
  assert.equal(bad.status, 422);
});
