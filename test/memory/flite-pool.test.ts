/**
 * The offline voice's worker pool keeps one worker while in use (each holds some 40-75 MB): warm()
 * starts one, sentences queued behind a busy worker start more, the spares end once idle, and the
 * last one after a longer idle time; warm() or a sentence then starts one again.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FliteEngine } from '../../src/speech/engines/flite.js';

async function speak(engine: FliteEngine, text: string): Promise<number> {
  let samples = 0;
  for await (const chunk of engine.synthesize({ text, voiceId: 'slt', language: 'en', signal: new AbortController().signal })) samples += chunk.pcm.length;
  return samples;
}

test('warm starts one worker; a queue grows the pool; idle spares end, the first stays', async () => {
  const engine = new FliteEngine({ workers: 2, spareIdleMs: 300, lastIdleMs: 60_000 });
  try {
    await engine.warm();
    assert.equal(engine.workersRunning, 1);
    const text = 'This sentence is long enough that a second one queues behind it while the first worker speaks it.';
    let most = 0;
    const watch = setInterval(() => (most = Math.max(most, engine.workersRunning)), 20);
    const spoken = await Promise.all([speak(engine, text), speak(engine, text), speak(engine, text), speak(engine, text)]);
    clearInterval(watch);
    for (const samples of spoken) assert.ok(samples > 16000, `every queued sentence is spoken (${samples} samples)`);
    assert.equal(most, 2, 'sentences queued behind a busy worker started a second one, and no more than the pool size');
    const until = Date.now() + 10_000;
    while (engine.workersRunning > 1 && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
    assert.equal(engine.workersRunning, 1, 'the idle spare ended');
    assert.ok((await speak(engine, 'Still speaking.')) > 4000, 'the first worker still speaks');
  } finally {
    await engine.close();
  }
});

test('the last worker ends after its idle time; warm() and a sentence each start one again', async () => {
  const engine = new FliteEngine({ workers: 2, spareIdleMs: 200, lastIdleMs: 2000 });
  const gone = async () => {
    const until = Date.now() + 10_000;
    while (engine.workersRunning > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    assert.equal(engine.workersRunning, 0, 'the idle worker ended');
  };
  try {
    await engine.warm();
    assert.equal(engine.workersRunning, 1);
    // Speaking keeps it: the idle time counts from the last sentence.
    await new Promise((r) => setTimeout(r, 400));
    assert.ok((await speak(engine, 'Still here.')) > 4000);
    await new Promise((r) => setTimeout(r, 400));
    assert.equal(engine.workersRunning, 1, 'a sentence 400 ms ago keeps the worker (idle time 2 s)');
    // warm() restarts the idle time as a sentence does (a session opening just before the worker would end).
    await new Promise((r) => setTimeout(r, 1000));
    await engine.warm();
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(engine.workersRunning, 1, 'warm() 1 s ago kept the worker (idle time 2 s, 2.4 s after the sentence)');
    await gone();
    await engine.warm();
    assert.equal(engine.workersRunning, 1, 'warm() starts one again');
    await gone();
    assert.ok((await speak(engine, 'Speaking after a long quiet.')) > 4000, 'a sentence with no worker starts one and is spoken');
    assert.equal(engine.workersRunning, 1);
  } finally {
    await engine.close();
  }
});
