import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Gate, GateFullError } from '../../src/core/gate.js';

/** A job that runs until `release()` is called, recording when it started. */
function heldJob(started: string[], name: string) {
  let release!: () => void;
  const done = new Promise<void>((r) => (release = r));
  return {
    run: async () => {
      started.push(name);
      await done;
      return name;
    },
    release: () => release(),
  };
}

test('runs at most `limit` jobs at once, the rest in arrival order', async () => {
  const gate = new Gate(2);
  const started: string[] = [];
  const jobs = ['a', 'b', 'c', 'd'].map((n) => heldJob(started, n));
  const results = jobs.map((j) => gate.run(j.run));
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(started, ['a', 'b']);
  assert.equal(gate.queued, 2);
  jobs[1]!.release();
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(started, ['a', 'b', 'c']);
  for (const j of jobs) j.release();
  assert.deepEqual(await Promise.all(results), ['a', 'b', 'c', 'd']);
  assert.equal(gate.idle, true);
});

test('refuses a job past maxWaiting instead of queueing without end', async () => {
  const gate = new Gate(1, 1);
  const started: string[] = [];
  const first = heldJob(started, 'first');
  const second = heldJob(started, 'second');
  const running = gate.run(first.run);
  const waiting = gate.run(second.run);
  await assert.rejects(
    gate.run(async () => 'third'),
    GateFullError,
  );
  first.release();
  second.release();
  assert.deepEqual([await running, await waiting], ['first', 'second']);
});

test('a waiting job whose signal aborts leaves the line; a failed job frees its slot', async () => {
  const gate = new Gate(1);
  const started: string[] = [];
  const first = heldJob(started, 'first');
  const running = gate.run(first.run);
  const controller = new AbortController();
  const aborted = gate.run(async () => 'never', controller.signal);
  controller.abort(new Error('visitor left'));
  await assert.rejects(aborted, /visitor left/);
  assert.equal(gate.queued, 0);
  first.release();
  await running;
  await assert.rejects(
    gate.run(async () => {
      throw new Error('boom');
    }),
    /boom/,
  );
  assert.equal(await gate.run(async () => 'after'), 'after');
  assert.equal(gate.idle, true);
});

test('tryEnter takes a free slot or answers undefined, and its release hands the slot on', async () => {
  const gate = new Gate(1);
  const release = gate.tryEnter();
  assert.ok(release);
  assert.equal(gate.tryEnter(), undefined);
  const waiting = gate.run(async () => 'next');
  release();
  release(); // twice is harmless
  assert.equal(await waiting, 'next');
  assert.equal(gate.idle, true);
});
