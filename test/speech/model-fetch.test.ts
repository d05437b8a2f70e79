/**
 * The models the first start fetches (src/speech/models), against a local HTTP server serving small
 * files this test makes, with the manifest's URLs and sums pointed at them: a checksum mismatch is
 * refused, a cut download is resumed with Range, a 404 and an unreachable host fail fast, /readyz
 * shows progress and then ready while start and /readyz never wait, and MODELS_DOWNLOAD=0 sends
 * no request at all. The voice that arrives is a real (tiny) Kokoro model, so the switch to it
 * without a restart is checked on the real loading code.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { makeTinyKokoro } from '../../scripts/make-tiny-kokoro.js';
import { loadConfig } from '../../src/core/config.js';
import { fetchFile, type FetchError } from '../../src/speech/models/fetcher.js';
import { ModelDownloads } from '../../src/speech/models/downloads.js';
import { pinnedModels, type ModelFile, type ModelSpec } from '../../src/speech/models/manifest.js';
import { modelsWanted } from '../../src/speech/models/plan.js';
import { ModelStatus } from '../../src/speech/models/status.js';
import { startTestApp } from '../support/app.js';
import { until } from '../support/until.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'presence-model-fetch-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

interface Served {
  body: Buffer;
  /** Drop the connection after this many bytes, once. */
  cutOnceAt?: number;
  /** Send this many bytes, then wait for `gate` before the rest. */
  holdAt?: number;
  gate?: Promise<void>;
}

/** A file server with Range support that records every request. */
async function fileServer(files: Record<string, Served>) {
  const requests: Array<{ url: string; range?: string }> = [];
  const server = http.createServer(async (req, res) => {
    requests.push({ url: req.url!, range: req.headers.range });
    const file = files[req.url!];
    if (!file) return res.writeHead(404).end('not found');
    let start = 0;
    const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    if (range) start = Number(range[1]);
    const body = file.body.subarray(start);
    res.writeHead(range ? 206 : 200, {
      'content-length': body.length,
      ...(range ? { 'content-range': `bytes ${start}-${file.body.length - 1}/${file.body.length}` } : {}),
    });
    if (file.cutOnceAt !== undefined && start < file.cutOnceAt) {
      const cut = file.cutOnceAt - start;
      file.cutOnceAt = undefined;
      res.write(body.subarray(0, cut), () => setTimeout(() => res.destroy(), 20));
      return;
    }
    if (file.holdAt !== undefined && start < file.holdAt) {
      res.write(body.subarray(0, file.holdAt - start));
      await file.gate;
      res.end(body.subarray(file.holdAt - start));
      return;
    }
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function pin(body: Buffer, filePath = 'file.bin'): ModelFile {
  return { path: filePath, bytes: body.length, sha256: crypto.createHash('sha256').update(body).digest('hex') };
}

const quiet = { info() {}, warn() {}, error() {} };
const options = { connectTimeoutMs: 2000, stallTimeoutMs: 5000 };

test('a file whose bytes do not match the pinned SHA-256 is refused and deleted', async () => {
  const body = crypto.randomBytes(50_000);
  const server = await fileServer({ '/m/file.bin': { body } });
  try {
    const dest = path.join(root, 'mismatch', 'file.bin');
    const wrong = { ...pin(body), sha256: '0'.repeat(64) };
    await assert.rejects(fetchFile(`${server.base}/m/file.bin`, dest, wrong, options), (e: FetchError) => e.kind === 'checksum' && /SHA-256/.test(e.message));
    assert.equal(fs.existsSync(dest), false);
    assert.equal(fs.existsSync(`${dest}.part`), false, 'the refused bytes are not kept');
    // A server sending more than the pinned size is refused as well.
    const short = { ...pin(body), bytes: 1000 };
    await assert.rejects(fetchFile(`${server.base}/m/file.bin`, dest, short, options), (e: FetchError) => e.kind === 'checksum');
    assert.equal(fs.existsSync(dest), false);
  } finally {
    await server.close();
  }
});

test('a download cut mid-file is taken up again with a Range request, and a .part left by an earlier start is continued', async () => {
  const body = crypto.randomBytes(300_000);
  const server = await fileServer({ '/m/file.bin': { body, cutOnceAt: 120_000 } });
  try {
    const dest = path.join(root, 'resume', 'file.bin');
    const seen: number[] = [];
    await fetchFile(`${server.base}/m/file.bin`, dest, pin(body), { ...options, onBytes: (b) => seen.push(b) });
    assert.ok(fs.readFileSync(dest).equals(body));
    assert.equal(server.requests.length, 2);
    assert.equal(server.requests[0].range, undefined);
    const resumedAt = Number(/bytes=(\d+)-/.exec(server.requests[1].range ?? '')?.[1]);
    assert.ok(resumedAt >= 100_000 && resumedAt <= 120_000, `resumed at ${resumedAt}`);
    assert.equal(seen.at(-1), body.length);

    // kill -9 mid-download: the .part stays; the next start asks only for the rest.
    const dest2 = path.join(root, 'resume', 'again.bin');
    fs.writeFileSync(`${dest2}.part`, body.subarray(0, 200_000));
    server.requests.length = 0;
    await fetchFile(`${server.base}/m/file.bin`, dest2, pin(body), options);
    assert.deepEqual(
      server.requests.map((r) => r.range),
      ['bytes=200000-'],
    );
    assert.ok(fs.readFileSync(dest2).equals(body));
    assert.equal(fs.existsSync(`${dest2}.part`), false);
  } finally {
    await server.close();
  }
});

test('a 404 fails the model with its reason, logged once; the next model is still tried', async () => {
  const good = Buffer.from('a 0\nb 1\n');
  const server = await fileServer({ '/b/tokens.txt': { body: good } });
  const lines: string[] = [];
  const log = { info() {}, warn: (_: object, m: string) => lines.push(m), error: (_: object, m: string) => lines.push(m) };
  try {
    const specs: ModelSpec[] = [
      { id: 'stt', title: 'recogniser', folder: 'a', source: `${server.base}/a`, files: [pin(good, 'missing.onnx')] },
      { id: 'kokoro', title: 'voice', folder: 'b', source: `${server.base}/b`, files: [pin(good, 'tokens.txt')] },
    ];
    const downloads = new ModelDownloads({ dir: path.join(root, 'http404'), specs, log });
    const used: string[] = [];
    downloads.start({ stt: true, kokoro: true }, async (spec) => void used.push(spec.id));
    await downloads.settled();
    const stt = downloads.status.get('stt');
    assert.equal(stt?.state, 'failed');
    assert.match((stt as { reason: string }).reason, /HTTP 404/);
    assert.equal(downloads.status.get('kokoro')?.state, 'ready');
    assert.deepEqual(used, ['kokoro']);
    assert.equal(lines.filter((l) => /404/.test(l)).length, 1);
    assert.ok(downloads.installed('kokoro'), 'a verified model is in place for the next start');
    assert.equal(downloads.installed('stt'), undefined);
  } finally {
    await server.close();
  }
});

test('an unreachable host fails within seconds, is said once, and the other model is not waited for', async () => {
  // A port nothing listens on, and a host that takes the connection and never answers.
  const closed = net.createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const closedPort = (closed.address() as AddressInfo).port;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  const silent = net.createServer(() => {});
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const silentPort = (silent.address() as AddressInfo).port;
  try {
    for (const base of [`http://127.0.0.1:${closedPort}`, `http://127.0.0.1:${silentPort}`]) {
      const warnings: string[] = [];
      const log = { info() {}, warn: (_: object, m: string) => warnings.push(m), error: (_: object, m: string) => warnings.push(m) };
      const file = pin(Buffer.from('x'), 'x.onnx');
      const specs: ModelSpec[] = [
        { id: 'stt', title: 'recogniser', folder: 'a', source: `${base}/a`, files: [file] },
        { id: 'kokoro', title: 'voice', folder: 'b', source: `${base}/b`, files: [file] },
      ];
      const downloads = new ModelDownloads({ dir: path.join(root, `unreachable-${crypto.randomUUID()}`), specs, log, connectTimeoutMs: 1000 });
      const began = Date.now();
      downloads.start({ stt: true, kokoro: true }, async () => assert.fail('nothing arrives'));
      await downloads.settled();
      const took = Date.now() - began;
      assert.ok(took < 3000, `took ${took} ms`);
      for (const id of ['stt', 'kokoro']) {
        const state = downloads.status.get(id) as { state: string; reason: string };
        assert.equal(state.state, 'failed');
        assert.match(state.reason, /cannot reach|no answer/);
      }
      assert.equal(warnings.length, 1, warnings.join('\n'));
      assert.match(warnings[0], /offline engines/);
    }
  } finally {
    silent.close();
  }
});

test('progress is logged at most every few seconds', () => {
  const lines: string[] = [];
  const status = new ModelStatus({ info: (_: object, m: string) => lines.push(m) }, 5000);
  for (let b = 0; b <= 1_000_000; b += 10_000) status.progress('kokoro', 'voice', b, 1_000_000);
  assert.equal(lines.length, 1);
  assert.deepEqual(status.get('kokoro'), { state: 'downloading', bytes: 1_000_000, total: 1_000_000 });
});

test('operator settings win and MODELS_DOWNLOAD=0 turns fetching off; the pins are whole', () => {
  const noKokoro = { kokoroModelDir: undefined, kokoroDownload: false, kokoroUrl: undefined };
  assert.deepEqual(modelsWanted(loadConfig({}), noKokoro), { stt: true, kokoro: true });
  assert.deepEqual(modelsWanted(loadConfig({ MODELS_DOWNLOAD: '0' }), noKokoro), { stt: 'MODELS_DOWNLOAD=0', kokoro: 'MODELS_DOWNLOAD=0' });
  assert.equal(modelsWanted(loadConfig({ STT_MODEL_DIR: '/m' }), noKokoro).stt, 'STT_MODEL_DIR is set');
  assert.equal(modelsWanted(loadConfig({ DEEPGRAM_API_KEY: 'k' }), noKokoro).stt, 'DEEPGRAM_API_KEY is set');
  assert.equal(modelsWanted(loadConfig({ STT_URL: 'http://x' }), noKokoro).stt, 'STT_URL or STT_API_KEY is set');
  assert.equal(modelsWanted(loadConfig({ STT_ENGINE: 'pocketsphinx' }), noKokoro).stt, 'STT_ENGINE=pocketsphinx');
  assert.equal(modelsWanted(loadConfig({}), { ...noKokoro, kokoroUrl: 'http://k' }).kokoro, 'KOKORO_URL is set');
  assert.equal(modelsWanted(loadConfig({}), { ...noKokoro, kokoroModelDir: '/k' }).kokoro, 'KOKORO_MODEL_DIR is set');
  assert.equal(modelsWanted(loadConfig({}), { ...noKokoro, kokoroDownload: true }).kokoro, 'KOKORO_DOWNLOAD=1');
  // A mirror keeps the upstream layout; every pin is a full SHA-256 and a size.
  for (const spec of pinnedModels('http://mirror.local/')) {
    assert.match(spec.source, /^http:\/\/mirror\.local\/[^/]+\/[^/]+\/resolve\/[0-9a-f]{40}$/);
    for (const f of spec.files) {
      assert.match(f.sha256, /^[0-9a-f]{64}$/);
      assert.ok(f.bytes > 0);
    }
  }
});

/** The tiny Kokoro's files as a model the app fetches, and a recogniser whose files are not a model. */
function appSpecs(base: string): { specs: ModelSpec[]; files: Record<string, Served>; release: () => void } {
  const kokoroDir = makeTinyKokoro(path.join(root, `tiny-${crypto.randomUUID()}`));
  const files: Record<string, Served> = {};
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const kokoroFiles = ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'onnx/model.onnx'].map((p) => {
    const body = fs.readFileSync(path.join(kokoroDir, p));
    files[`/kokoro/${p}`] = p.endsWith('.onnx') ? { body, holdAt: Math.floor(body.length / 2), gate } : { body };
    return pin(body, p);
  });
  const sttFiles = ['encoder.onnx', 'decoder.onnx', 'joiner.onnx', 'tokens.txt'].map((p) => {
    const body = Buffer.from(p === 'tokens.txt' ? 'a 0\nb 1\n' : `not a model: ${p}`);
    files[`/stt/${p}`] = { body };
    return pin(body, p);
  });
  return {
    files,
    release,
    specs: [
      { id: 'stt', title: 'speech recognition', folder: 'sherpa-onnx-streaming-test', source: `${base}/stt`, files: sttFiles },
      { id: 'kokoro', title: 'voice', folder: 'Kokoro-test', source: `${base}/kokoro`, files: kokoroFiles },
    ],
  };
}

test('start and /readyz do not wait for the models; /readyz shows the progress, then the voice ready and speaking with Kokoro, without a restart', async () => {
  const files: Record<string, Served> = {};
  const server = await fileServer(files);
  const { specs, files: made, release } = appSpecs(server.base);
  Object.assign(files, made);
  const app = await startTestApp('pglite', { MODELS_DOWNLOAD: '1' }, { models: { specs, connectTimeoutMs: 2000 } });
  try {
    const ready = async () => {
      const response = await fetch(`${app.url}/readyz`);
      return {
        status: response.status,
        body: (await response.json()) as { status: string; models: Record<string, { state: string; bytes?: number; total?: number; reason?: string }> },
      };
    };
    // The voice model's download is held half-way: the service is up and ready meanwhile.
    const during = await until(
      async () => {
        const r = await ready();
        return r.status === 200 && r.body.models.kokoro.state === 'downloading' && (r.body.models.kokoro.bytes ?? 0) > 0 && r;
      },
      30_000,
      '/readyz ready while the voice downloads',
    );
    assert.equal(during.body.status, 'ready');
    assert.equal(
      during.body.models.kokoro.total,
      specs[1].files.reduce((s, f) => s + f.bytes, 0),
    );
    assert.ok(during.body.models.kokoro.bytes! < during.body.models.kokoro.total!);
    assert.equal(app.context.speech.engineFor('kokoro', 'af_heart'), 'flite', 'flite speaks until the model is verified');
    // The recogniser's files arrived and were verified, but they are no model: it says why.
    const stt = during.body.models.stt;
    assert.equal(stt.state, 'failed');
    assert.match(stt.reason!, /verified, but could not be loaded/);

    release();
    const done = await until(
      async () => {
        const r = await ready();
        return r.body.models.kokoro.state === 'ready' && r;
      },
      60_000,
      'the voice model ready',
    );
    assert.equal(done.status, 200);
    assert.equal(app.context.speech.engineFor('kokoro', 'af_heart'), 'kokoro', 'Kokoro speaks without a restart');
    assert.ok(fs.existsSync(path.join(app.context.config.dataDir, 'models', 'Kokoro-test', 'onnx', 'model.onnx')));
  } finally {
    release();
    await app.close();
    await server.close();
  }
});

test('MODELS_DOWNLOAD=0 sends no request at all, and /readyz says the models are off', async () => {
  const files: Record<string, Served> = {};
  const server = await fileServer(files);
  const { specs, files: made, release } = appSpecs(server.base);
  Object.assign(files, made);
  release();
  const app = await startTestApp('pglite', { MODELS_DOWNLOAD: '0' }, { models: { specs } });
  try {
    const body = await until(
      async () => {
        const response = await fetch(`${app.url}/readyz`);
        return response.status === 200 && ((await response.json()) as { models: Record<string, { state: string; reason?: string }> });
      },
      30_000,
      '/readyz ready',
    );
    assert.deepEqual(body.models, { stt: { state: 'off', reason: 'MODELS_DOWNLOAD=0' }, kokoro: { state: 'off', reason: 'MODELS_DOWNLOAD=0' } });
    assert.deepEqual(server.requests, []);
    assert.equal(fs.existsSync(path.join(app.context.config.dataDir, 'models')), false);
  } finally {
    await app.close();
    await server.close();
  }
});
