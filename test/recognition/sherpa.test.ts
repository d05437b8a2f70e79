/**
 * sherpa-onnx's loading code. No sherpa model can be downloaded here, so the tests cover how a
 * model folder is read for each kind, and the error paths on real sherpa-onnx: a missing folder,
 * a folder without a model, and a broken model file, which aborts sherpa's process (the model runs
 * in a child process, so the server lives on and says why). The download-once path runs against a
 * local server that serves a model archive. The streaming transducer's live turns (partial words)
 * run through the real model process with a stand-in decoder (fake-sherpa.mjs).
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
import { fileURLToPath } from 'node:url';
import { VisitorListener } from '../../src/conversation/listening/index.js';
import type { VisitorTurnHeard } from '../../src/conversation/listening/types.js';
import { describeModelFolder, downloadSherpaModel, SHERPA_MAX_LIVE_TURNS, SherpaRecognizer } from '../../src/speech/recognition/sherpa.js';
import { concat, librivox, silence, speechSpan } from './recordings.js';

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

describe('sherpa-onnx streaming transducer: words while the visitor speaks', () => {
  // The model process, its messages and the live-turn bookkeeping are the real ones; only the
  // native decoder is the stand-in in fake-sherpa.mjs (one word per half second of audio).
  const fake = fileURLToPath(new URL('./fake-sherpa.mjs', import.meta.url));
  const transducer = ['encoder-epoch-99-avg-1.int8.onnx', 'decoder-epoch-99-avg-1.onnx', 'joiner-epoch-99-avg-1.int8.onnx', 'tokens.txt'];

  test('partial words grow as audio arrives, and finish gives the whole turn', async () => {
    const recognizer = await SherpaRecognizer.load(folder('sherpa-onnx-streaming-zipformer-live', transducer), undefined, 1, fake);
    try {
      const stream = recognizer.stream({ language: 'en' });
      assert.ok(stream, 'a streaming transducer takes the turn live');
      const partials: string[] = [];
      stream.onPartial = (text) => partials.push(text);
      const changes = () => partials.filter((p, i) => p !== partials[i - 1]);
      for (let i = 0; i < 120; i++) {
        stream.push(new Int16Array(320).fill(1000)); // 2.4 s in 20 ms frames
        if (i === 49) {
          // Halfway, the words so far have come up while audio still flows.
          for (let k = 0; k < 100 && changes().length < 2; k++) await new Promise((r) => setTimeout(r, 10));
          assert.deepEqual(changes(), ['how', 'how much']);
        }
      }
      const final = await stream.finish();
      assert.equal(final.text, 'how much is shipping to'); // the tail padding adds 0.3 s
      assert.deepEqual(changes(), ['how', 'how much', 'how much is', 'how much is shipping']);
      // Unchanged words come again after 0.3 s of audio (a pause's words for the answer prepared ahead).
      assert.deepEqual(partials.slice(-2), ['how much is shipping', 'how much is shipping']);
      // A second turn starts afresh; an aborted one says nothing more.
      const second = recognizer.stream({ language: 'en' })!;
      const late: string[] = [];
      second.onPartial = (text) => late.push(text);
      second.abort();
      second.push(new Int16Array(16000));
      await new Promise((r) => setTimeout(r, 100));
      assert.deepEqual(late, []);
      await assert.rejects(second.finish(), /already finished or dropped/);
    } finally {
      await recognizer.close();
    }
  });

  test('other kinds, and a process with its most live turns, recognise turns whole', async () => {
    const whole = await SherpaRecognizer.load(folder('sherpa-onnx-zipformer-whole', transducer), 'transducer', 1, fake);
    try {
      assert.equal(whole.stream({ language: 'en' }), undefined);
    } finally {
      await whole.close();
    }
    const recognizer = await SherpaRecognizer.load(folder('sherpa-onnx-streaming-zipformer-busy', transducer), undefined, 1, fake);
    try {
      const streams = Array.from({ length: SHERPA_MAX_LIVE_TURNS }, () => recognizer.stream({ language: 'en' }));
      assert.ok(streams.every(Boolean));
      assert.equal(recognizer.stream({ language: 'en' }), undefined);
      streams[0]!.abort();
      assert.ok(recognizer.stream({ language: 'en' }));
    } finally {
      await recognizer.close();
    }
  });

  test('through the listener on a recorded turn: partial words reach turn-taking and the caption, the final text is the turn', async () => {
    const clip = librivox()[1];
    const recognizer = await SherpaRecognizer.load(folder('sherpa-onnx-streaming-zipformer-listener', transducer), undefined, 1, fake);
    const partials: Array<{ text: string; at: number }> = [];
    const turns: VisitorTurnHeard[] = [];
    const tentative: string[] = [];
    let clock = 1000;
    const listener = new VisitorListener(
      recognizer,
      { partial: (text) => partials.push({ text, at: clock }), tentative: (t) => tentative.push(t.text), turn: (t) => turns.push(t) },
      { now: () => clock },
    );
    try {
      const audio = concat(silence(300), clip.pcm, silence(1500));
      const pauseFrom = silence(300).length + clip.pcm.length;
      for (let i = 0; i < audio.length; i += 320) {
        clock += 20;
        listener.push(audio.slice(i, i + 320), clock);
        if (i < pauseFrom) {
          if ((i / 320) % 8 === 0) await listener.idle();
          await new Promise((r) => setImmediate(r));
          continue;
        }
        // The pause goes no faster than the recogniser hears it (live audio comes at 20 ms a frame):
        // pushing it all at once would end the turn before the child process has said a word.
        await listener.idle();
        for (let k = 0; k < 20 && tentative.length === 0 && turns.length === 0; k++) await new Promise((r) => setTimeout(r, 5));
      }
      await listener.idle();
      for (let k = 0; k < 200 && turns.length === 0; k++) await new Promise((r) => setTimeout(r, 10));
      assert.equal(turns.length, 1);
      const speechEnd = 1000 + 300 + speechSpan(clip.pcm).endMs;
      assert.ok(partials.length >= 2, `partials: ${JSON.stringify(partials)}`);
      assert.ok(partials[0].at < speechEnd, 'the first words came while the visitor still spoke');
      assert.ok(turns[0].text.startsWith(partials[0].text), `${turns[0].text} / ${partials[0].text}`);
      // Each change reaches the caption once; the words during the final pause are told ahead.
      assert.ok(
        partials.every((p, i) => i === 0 || p.text !== partials[i - 1].text),
        JSON.stringify(partials),
      );
      assert.ok(tentative.length >= 1, 'words told during the pause');
    } finally {
      listener.close();
      await recognizer.close();
    }
  });
});
