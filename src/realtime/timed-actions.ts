/**
 * A session's timed actions (cues, camera cuts, backdrop swaps with at_seconds) once their
 * utterance has started: a binary min-heap on session time, so adding or taking one costs
 * O(log n) however many wait (a sorted array or a filter per tick grows with the square).
 * Equal times keep their arrival order.
 */
import type { TimedAction } from './utterance-queue.js';

interface Entry {
  at: number;
  seq: number;
  action: TimedAction;
}

export class TimedActions {
  private readonly heap: Entry[] = [];
  private seq = 0;

  get size(): number {
    return this.heap.length;
  }

  /** Session time of the earliest action, or Infinity. */
  get next(): number {
    return this.heap.length ? this.heap[0].at : Infinity;
  }

  add(at: number, action: TimedAction): void {
    const heap = this.heap;
    heap.push({ at, seq: this.seq++, action });
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i], heap[parent])) break;
      [heap[i], heap[parent]] = [heap[parent], heap[i]];
      i = parent;
    }
  }

  /** Removes and returns the earliest action if it is due by `now`. */
  takeDue(now: number): { at: number; action: TimedAction } | undefined {
    const heap = this.heap;
    if (!heap.length || heap[0].at > now) return undefined;
    const top = heap[0];
    const last = heap.pop()!;
    if (heap.length) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        const right = left + 1;
        let smallest = i;
        if (left < heap.length && before(heap[left], heap[smallest])) smallest = left;
        if (right < heap.length && before(heap[right], heap[smallest])) smallest = right;
        if (smallest === i) break;
        [heap[i], heap[smallest]] = [heap[smallest], heap[i]];
        i = smallest;
      }
    }
    return { at: top.at, action: top.action };
  }

  /** Moves every action `seconds` later (a paused utterance's actions wait with its audio); the order stays. */
  shift(seconds: number): void {
    for (const entry of this.heap) entry.at += seconds;
  }

  clear(): void {
    this.heap.length = 0;
  }
}

const before = (a: Entry, b: Entry) => a.at < b.at || (a.at === b.at && a.seq < b.seq);
