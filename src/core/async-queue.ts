/**
 * A one-consumer async queue between a producer and the loop that awaits its items:
 * `next(abort)` resolves the next item, undefined when the queue is closed (or `abort` settles
 * first), and rejects with the producer's error after `fail`. Items pushed after `close` are dropped.
 */
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
  async next(abort: Promise<'aborted'>): Promise<T | undefined> {
    for (;;) {
      if (this.items.length) return this.items.shift();
      if (this.failed) throw this.error;
      if (this.closed) return undefined;
      const ready = new Promise<'ready'>((resolve) => {
        this.waiter = () => resolve('ready');
      });
      if ((await Promise.race([ready, abort])) === 'aborted') return undefined;
    }
  }
}
