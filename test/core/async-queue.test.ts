import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AsyncQueue } from '../../src/core/async-queue.js';

const never = new Promise<'aborted'>(() => {});

test('hands items over in order, waiting for the producer, then undefined once closed', async () => {
  const queue = new AsyncQueue<number>();
  const first = queue.next(never);
  queue.push(1);
  queue.push(2);
  assert.equal(await first, 1);
  assert.equal(await queue.next(never), 2);
  queue.close();
  queue.push(3); // after close: dropped
  assert.equal(await queue.next(never), undefined);
});

test("rejects with the producer's error after the items pushed before it", async () => {
  const queue = new AsyncQueue<string>();
  queue.push('a');
  queue.fail(new Error('engine failed'));
  assert.equal(await queue.next(never), 'a');
  await assert.rejects(queue.next(never), /engine failed/);
});

test('an abort that settles first ends the wait with undefined', async () => {
  const queue = new AsyncQueue<string>();
  let abort!: (value: 'aborted') => void;
  const aborted = new Promise<'aborted'>((r) => (abort = r));
  const waiting = queue.next(aborted);
  abort('aborted');
  assert.equal(await waiting, undefined);
});
