/** Which recogniser hears visitors, from configuration, and the one log line that says so. */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { loadConfig } from '../../src/core/config.js';
import { createRecognizer } from '../../src/speech/recognition/index.js';
import { pocketsphinxMissing } from '../../src/speech/recognition/pocketsphinx.js';

function logger() {
  const lines: Array<{ level: string; msg: string }> = [];
  const put = (level: string) => (_obj: object, msg: string) => void lines.push({ level, msg });
  return { lines, info: put('info'), warn: put('warn'), error: put('error') };
}

async function pick(env: Record<string, string>) {
  const log = logger();
  const recognizer = await createRecognizer(loadConfig({ DATA_DIR: os.tmpdir(), ...env }), log);
  await recognizer?.close();
  return { name: recognizer?.name, lines: log.lines };
}

describe('picking the speech recogniser', () => {
  test('Deepgram, then an OpenAI-compatible endpoint, each said in one line', async () => {
    const dg = await pick({ DEEPGRAM_API_KEY: 'k', STT_URL: 'http://127.0.0.1:1/v1' });
    assert.equal(dg.name, 'deepgram');
    assert.equal(dg.lines.length, 1);
    assert.match(dg.lines[0].msg, /Deepgram \(nova-3, streaming\)/);
    const oa = await pick({ STT_URL: 'http://127.0.0.1:1/v1', STT_MODEL: 'whisper-large-v3' });
    assert.equal(oa.name, 'openai');
    assert.match(oa.lines[0].msg, /whisper-large-v3/);
    // STT_ENGINE forces one.
    assert.equal((await pick({ DEEPGRAM_API_KEY: 'k', STT_API_KEY: 'k', STT_ENGINE: 'openai' })).name, 'openai');
  });

  test('a broken sherpa model is logged as an error and the next engine hears', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'presence-stt-broken-'));
    fs.writeFileSync(path.join(dir, 'model.onnx'), 'garbage');
    fs.writeFileSync(path.join(dir, 'tokens.txt'), 'a 0\n');
    try {
      const { name, lines } = await pick({ STT_MODEL_DIR: dir });
      assert.equal(lines[0].level, 'error');
      assert.match(lines[0].msg, /could not be used: .*could not be loaded/);
      if (pocketsphinxMissing()) assert.equal(name, undefined);
      else {
        assert.equal(name, 'pocketsphinx');
        assert.match(lines[1].msg, /pocketsphinx, the zero-set-up fallback/);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('with nothing configured: pocketsphinx when installed, said to be the fallback; none says why', async () => {
    const auto = await pick({});
    if (pocketsphinxMissing()) {
      assert.equal(auto.name, undefined);
      assert.match(auto.lines[0].msg, /none \(.*not installed/);
    } else {
      assert.equal(auto.name, 'pocketsphinx');
      assert.equal(auto.lines.length, 1);
      assert.match(auto.lines[0].msg, /zero-set-up fallback \(English only, poor accuracy\)/);
    }
    const off = await pick({ STT_ENGINE: 'none' });
    assert.equal(off.name, undefined);
    assert.match(off.lines[0].msg, /off \(STT_ENGINE=none\); visitors can type/);
    const unconfigured = await pick({ STT_ENGINE: 'deepgram' });
    assert.equal(unconfigured.name, undefined);
    assert.match(unconfigured.lines[0].msg, /STT_ENGINE=deepgram is not configured/);
  });

  test('bad values are refused at start', () => {
    assert.throws(() => loadConfig({ STT_ENGINE: 'whisper' }), /STT_ENGINE must be one of auto, sherpa-onnx, pocketsphinx, openai, deepgram, none/);
    assert.throws(() => loadConfig({ STT_MODEL_TYPE: 'ctc' }), /STT_MODEL_TYPE must be one of/);
    assert.throws(() => loadConfig({ STT_CONCURRENCY: '0' }), /STT_CONCURRENCY must be a number >= 1/);
  });
});
