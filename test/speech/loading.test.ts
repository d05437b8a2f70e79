/**
 * Issue 15, item 1: loads on the speech path are shared while they run and never kept when they
 * fail. The shared helper, the pronouncing dictionary's one loader, and the speech layer's start.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from '../../src/core/once.js';
import { loadPronunciations, pronunciationsIfLoaded } from '../../src/speech/pronunciations.js';
import { preloadDictionary, wordVisemes } from '../../src/realtime/lipsync/text-visemes.js';
import { SpeechService } from '../../src/speech/synthesis.js';
import { speechConfig } from '../../src/core/config.js';
import { wordsFromPhones } from '../../src/speech/engines/flite.js';

const quiet = { info() {}, warn() {}, error() {} };

test('once(): callers share one attempt, a success is kept, a failure is tried again', async () => {
  let calls = 0;
  const loader = once(async () => {
    calls++;
    if (calls === 1) throw new Error('first attempt fails');
    return calls;
  });
  const [a, b] = await Promise.allSettled([loader.get(), loader.get()]);
  assert.equal(a.status, 'rejected');
  assert.equal(b.status, 'rejected');
  assert.equal(calls, 1, 'two callers during one attempt share it');
  assert.equal(loader.peek(), undefined);
  assert.equal(await loader.get(), 2, 'the failure was not kept');
  assert.equal(await loader.get(), 2, 'the success is kept');
  assert.equal(calls, 2);
  assert.equal(loader.peek(), 2);
});

test('the dictionary has one loader: the lip-sync and the offline engine get the same object, whoever asks first', async () => {
  const [first] = await Promise.all([loadPronunciations(), preloadDictionary(), loadPronunciations()]);
  assert.equal(pronunciationsIfLoaded(), first);
  assert.equal(first.phones('hello'), 'HH AH0 L OW1');
  assert.deepEqual(wordVisemes('hello'), ['kk', 'aa', 'nn', 'O'], 'the lip-sync reads the dictionary');
  // Word timings: "extraordinary" has 6 phones by the dictionary, more than its spelling estimate would give a short word.
  const phones: Array<[string, number]> = Array.from({ length: 7 }, (_, i) => ['x', (i + 1) * 0.1]);
  const words = wordsFromPhones('a extraordinary', phones, first);
  assert.equal(words.length, 2);
  assert.ok(words[1].end - words[1].start > words[0].end - words[0].start);
});

test('a speech start that fails is not kept: the next start succeeds and readiness follows', async () => {
  const speech = new SpeechService(speechConfig({}, '/nonexistent'), { logger: quiet, fliteWorkers: 1 });
  const warm = speech.flite.warm.bind(speech.flite);
  let failures = 1;
  speech.flite.warm = async () => {
    if (failures-- > 0) throw new Error('injected warm-up failure');
    return warm();
  };
  try {
    await assert.rejects(speech.start(), /injected warm-up failure/);
    assert.equal(speech.isReady(), false);
    // Speaking does not depend on the warm-up: the request retries it and is voiced.
    const { pcm } = await speech.synthesizeAll({ text: 'Still speaking.', provider: 'kokoro', voiceId: 'af_bella', sampleRate: 16000 });
    assert.ok(pcm.length > 8000, 'voiced');
    assert.equal(speech.isReady(), true, 'the retried start succeeded');
  } finally {
    await speech.close();
  }
});

test('a flite worker that dies leaves the pool; the next sentence starts a fresh one', async () => {
  const speech = new SpeechService(speechConfig({}, '/nonexistent'), { logger: quiet, fliteWorkers: 1 });
  try {
    await speech.start();
    const pool = (speech.flite as any).pool as { workers: Array<{ worker: import('node:worker_threads').Worker }> };
    assert.equal(pool.workers.length, 1);
    await pool.workers[0].worker.terminate(); // as a crash would
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(pool.workers.length, 0, 'the dead worker left the pool');
    const { pcm } = await speech.synthesizeAll({ text: 'After the crash.', provider: 'kokoro', voiceId: 'af_bella', sampleRate: 16000 });
    assert.ok(pcm.length > 8000, 'voiced by a new worker');
    assert.equal(pool.workers.length, 1);
  } finally {
    await speech.close();
  }
});
