/**
 * A one-consumer async queue between a producer and the loop that awaits its items:
 * `next(abort)` resolves the next item, undefined when the queue is closed (or `abort` settles
 * first), and rejects with the producer's error after `fail` (the first error wins: a socket's
 * error is followed by its close). `nextWithin(ms, …)` fails when nothing arrives in time, for a
 * peer that may go silent. Items pushed after `close` or `fail` are dropped.
 */
const STOPPED = Symbol('stopped');

export class AsyncQueue<T> {
  private items: T[] = [];
  private closed = false;
  private error: unknown;
  private failed = false;
  private waiter: (() => void) | undefined;

  push(item: T) {
    if (this.closed) return;
    this.items.push(item);
    this.wake();
  }
  close() {
    this.closed = true;
    this.wake();
  }
  fail(error: unknown) {
    if (this.failed) return;
    this.failed = true;
    this.error = error;
    this.closed = true;
    this.wake();
  }
  private wake() {
    const w = this.waiter;
    this.waiter = undefined;
    w?.();
  }
  async next(abort: Promise<unknown>): Promise<T | undefined> {
    const item = await this.take(abort);
    return item === STOPPED ? undefined : item;
  }
  /** The next item, or undefined once closed; rejects with `idleError()` after `ms` without one. */
  async nextWithin(ms: number, idleError: () => unknown): Promise<T | undefined> {
    let timer: NodeJS.Timeout | undefined;
    const idle = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
    });
    try {
      const item = await this.take(idle);
      if (item === STOPPED) throw idleError();
      return item;
    } finally {
      clearTimeout(timer);
    }
  }
  /** The next item, undefined once closed, or STOPPED when `stop` settles first. */
  private async take(stop: Promise<unknown>): Promise<T | undefined | typeof STOPPED> {
    const stopped = stop.then(() => STOPPED);
    for (;;) {
      if (this.items.length) return this.items.shift();
      if (this.failed) throw this.error;
      if (this.closed) return undefined;
      const ready = new Promise<'ready'>((resolve) => {
        this.waiter = () => resolve('ready');
      });
      if ((await Promise.race([ready, stopped])) === STOPPED) return STOPPED;
    }
  }
}
