/** Debian's pocketsphinx on real recordings (pocketsphinx-testdata), with a loose WER bound. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { PocketsphinxRecognizer, pocketsphinxMissing } from '../../src/speech/recognition/pocketsphinx.js';
import { RecognitionError } from '../../src/speech/recognition/errors.js';
import { wordErrors } from '../../src/speech/recognition/wer.js';
import { librivox, testdataInstalled } from './recordings.js';

describe('pocketsphinx', { skip: (pocketsphinxMissing() || !testdataInstalled()) && 'pocketsphinx or its test data is not installed' }, () => {
  test('recognises the LibriVox sentences with a word error rate under 50 %', async () => {
    const recognizer = new PocketsphinxRecognizer(undefined, 2);
    const clips = librivox();
    const results = await Promise.all(clips.map((clip) => recognizer.transcribe(clip.pcm, { language: 'en' })));
    let errors = 0;
    let words = 0;
    results.forEach((result, i) => {
      const e = wordErrors(clips[i].text, result.text);
      errors += e.errors;
      words += e.words;
      assert.equal(result.language, 'en');
    });
    assert.ok(errors / words < 0.5, `WER ${(errors / words).toFixed(2)}: ${results.map((r) => r.text).join(' | ')}`);
  });

  test('silence gives empty text', async () => {
    const result = await new PocketsphinxRecognizer().transcribe(new Int16Array(16000), { language: 'en' });
    assert.equal(result.text, '');
  });

  test('an aborted turn stops its decoder and rejects', async () => {
    const recognizer = new PocketsphinxRecognizer(undefined, 1);
    const controller = new AbortController();
    const clip = librivox()[0];
    const running = recognizer.transcribe(clip.pcm, { language: 'en', signal: controller.signal });
    // A second turn waits for the only decoder slot; aborting it takes it out of the line.
    const waitingController = new AbortController();
    const waiting = recognizer.transcribe(clip.pcm, { language: 'en', signal: waitingController.signal });
    waitingController.abort();
    await assert.rejects(waiting, /abort/i);
    setTimeout(() => controller.abort(), 50);
    const began = Date.now();
    await assert.rejects(running, /abort/i);
    assert.ok(Date.now() - began < 1500, 'the decoder was not stopped');
    // The slot is free again.
    const after = await recognizer.transcribe(librivox()[1].pcm, { language: 'en' });
    assert.ok(after.text.length > 0);
  });

  test('a missing binary is a clear error', async () => {
    assert.match(pocketsphinxMissing('no-such-pocketsphinx-binary')!, /not installed/);
    const recognizer = new PocketsphinxRecognizer('no-such-pocketsphinx-binary');
    await assert.rejects(recognizer.transcribe(new Int16Array(1600), { language: 'en' }), (e: Error) => e instanceof RecognitionError && /could not start/.test(e.message));
  });
});
