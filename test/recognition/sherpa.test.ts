/**
 * sherpa-onnx's loading code. No sherpa model can be downloaded here, so the tests cover how a
 * model folder is read for each kind, and the error paths on real sherpa-onnx: a missing folder,
 * a folder without a model, and a broken model file, which aborts sherpa's process (the model runs
 * in a child process, so the server lives on and says why). The download-once path runs against a
 * local server that serves a model archive.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { RecognitionError } from '../../src/speech/recognition/errors.js';
import { describeModelFolder, downloadSherpaModel, SherpaRecognizer } from '../../src/speech/recognition/sherpa.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'presence-sherpa-test-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

function folder(name: string, files: string[]): string {
  const dir = path.join(root, name);
  fs.mkdirSync(dir, { recursive: true });
  for (const f of files) fs.writeFileSync(path.join(dir, f), f.endsWith('.txt') ? 'a 0\nb 1\n' : 'not a model');
  return dir;
}

describe('sherpa-onnx model folders', () => {
  test('each published layout is recognised, int8 files first', () => {
    const whisper = describeModelFolder(
      folder('sherpa-onnx-whisper-tiny', ['tiny-encoder.onnx', 'tiny-encoder.int8.onnx', 'tiny-decoder.int8.onnx', 'tiny-decoder.onnx', 'tiny-tokens.txt']),
    );
    assert.equal(whisper.kind, 'whisper');
    const w = (whisper.config.modelConfig as any).whisper;
    assert.match(w.encoder, /tiny-encoder\.int8\.onnx$/);
    assert.match(w.decoder, /tiny-decoder\.int8\.onnx$/);
    assert.match((whisper.config.modelConfig as any).tokens, /tiny-tokens\.txt$/);

    const moonshine = describeModelFolder(
      folder('moonshine', ['preprocess.onnx', 'encode.int8.onnx', 'uncached_decode.int8.onnx', 'cached_decode.int8.onnx', 'tokens.txt']),
    );
    assert.equal(moonshine.kind, 'moonshine');
    assert.match((moonshine.config.modelConfig as any).moonshine.cachedDecoder, /\/cached_decode\.int8\.onnx$/);
    assert.match((moonshine.config.modelConfig as any).moonshine.uncachedDecoder, /uncached_decode\.int8\.onnx$/);

    assert.equal(describeModelFolder(folder('sense-voice', ['model.int8.onnx', 'tokens.txt'])).kind, 'sense-voice');
    const transducer = ['encoder-epoch-99-avg-1.onnx', 'decoder-epoch-99-avg-1.onnx', 'joiner-epoch-99-avg-1.onnx', 'tokens.txt'];
    assert.equal(describeModelFolder(folder('sherpa-onnx-zipformer-en', transducer)).kind, 'transducer');
    const streaming = describeModelFolder(folder('sherpa-onnx-streaming-zipformer-en', transducer));
    assert.equal(streaming.kind, 'streaming-transducer');
    assert.equal(streaming.config.decodingMethod, 'greedy_search');
    // STT_MODEL_TYPE overrides the guess.
    assert.equal(describeModelFolder(folder('sherpa-onnx-zipformer-en', transducer), 'streaming-transducer').kind, 'streaming-transducer');
  });

  test('a folder that is missing, has no tokens, or holds no known model says so', () => {
    assert.throws(() => describeModelFolder(path.join(root, 'absent')), /does not exist/);
    assert.throws(() => describeModelFolder(folder('no-tokens', ['model.onnx'])), /no tokens\.txt/);
    assert.throws(() => describeModelFolder(folder('unknown', ['weights.onnx', 'tokens.txt'])), /holds no model/);
    assert.throws(
      () => describeModelFolder(folder('half-moonshine', ['preprocess.onnx', 'tokens.txt']), 'moonshine'),
      /lacks its encoder, uncachedDecoder, cachedDecoder/,
    );
  });

  test('a broken model file ends only the model process; the error says why and this process lives on', async () => {
    const dir = folder('broken', ['model.int8.onnx', 'tokens.txt']);
    await assert.rejects(SherpaRecognizer.load(dir), (e: Error) => {
      assert.ok(e instanceof RecognitionError);
      assert.match(e.message, /could not be loaded: .*Protobuf parsing failed/);
      return true;
    });
  });

  test('the model is downloaded once into the cache, then read from it', async () => {
    const source = folder('archive-src/sherpa-onnx-test-model', ['model.int8.onnx', 'tokens.txt']);
    const archive = path.join(root, 'sherpa-onnx-test-model.tar.bz2');
    execFileSync('tar', ['-cjf', archive, '-C', path.dirname(source), 'sherpa-onnx-test-model']);
    let requests = 0;
    const server = http.createServer((req, res) => {
      requests++;
      if (req.url !== '/models/sherpa-onnx-test-model.tar.bz2') return void res.writeHead(404).end();
      res.end(fs.readFileSync(archive));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/models`;
    try {
      const cache = path.join(root, 'cache');
      const dir = await downloadSherpaModel(cache, 'sherpa-onnx-test-model', base);
      assert.equal(dir, path.join(cache, 'sherpa-onnx-test-model'));
      assert.ok(fs.existsSync(path.join(dir, 'tokens.txt')));
      assert.equal(describeModelFolder(dir).kind, 'sense-voice');
      await downloadSherpaModel(cache, 'sherpa-onnx-test-model', base);
      assert.equal(requests, 1, 'the second start used the cache');
      await assert.rejects(downloadSherpaModel(cache, 'no-such-model', base), /HTTP 404/);
      assert.deepEqual(fs.readdirSync(cache).sort(), ['sherpa-onnx-test-model'], 'a failed download leaves nothing behind');
    } finally {
      server.close();
    }
  });
});
