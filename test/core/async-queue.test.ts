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

test('the first error wins: a socket error followed by its close or a second error still rejects with the first', async () => {
  const queue = new AsyncQueue<string>();
  queue.fail(new Error('connection reset'));
  queue.fail(new Error('closed the socket'));
  queue.close();
  queue.push('late'); // after the failure: dropped
  await assert.rejects(queue.next(never), /connection reset/);
});

test('nextWithin hands over an item that comes in time, and rejects with the idle error when none does', async () => {
  const queue = new AsyncQueue<string>();
  const waiting = queue.nextWithin(5_000, () => new Error('silent'));
  queue.push('word');
  assert.equal(await waiting, 'word');
  await assert.rejects(
    queue.nextWithin(20, () => new Error('provider sent nothing for 20 ms')),
    /sent nothing for 20 ms/,
  );
  queue.push('after the timeout');
  assert.equal(await queue.nextWithin(20, () => new Error('silent')), 'after the timeout', 'a timed-out wait leaves the queue usable');
  queue.close();
  assert.equal(await queue.nextWithin(20, () => new Error('silent')), undefined);
});
