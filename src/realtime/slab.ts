/**
 * Short-lived byte ranges carved out of larger ArrayBuffers. Every ArrayBuffer costs the garbage
 * collector far more than its bytes (a backing store outside the heap, counted as external memory,
 * whose growth starts full collections), so the real-time path, which copies a piece in and packs
 * a frame out 25 times a second per session, takes its memory from slabs instead.
 *
 * A slab whose ranges are all given back (`give`) is recycled: when it fills, it starts again from
 * its beginning instead of allocating, so a steady stream of frames allocates nothing at all. A
 * range that is not given back (kept by a socket's queue, dropped on an interrupt) keeps its
 * buffer alive the ordinary way: that buffer is left to the collector and a fresh one is taken.
 */
export class Slab {
  private buffer: ArrayBuffer;
  private used = 0;
  /** Ranges cut from `buffer` and not given back. */
  private live = 0;
  /** The previous buffer, reused once all its ranges are given back (a FIFO's in-flight tail). */
  private spare?: ArrayBuffer;
  private spareLive = 0;

  constructor(private readonly size: number) {
    this.buffer = Slab.fresh(size);
  }

  /** Uninitialised memory (every byte taken is written before it is read): no zero-fill. */
  private static fresh(size: number): ArrayBuffer {
    return Buffer.allocUnsafeSlow(size).buffer as ArrayBuffer;
  }

  /** `bytes` bytes of fresh memory, 8-byte aligned (an ArrayBuffer of its own past half a slab). */
  take(bytes: number): { buffer: ArrayBuffer; offset: number } {
    if (bytes > this.size / 2) return { buffer: Slab.fresh(bytes), offset: 0 };
    if (this.used + bytes > this.size) this.turn();
    const offset = this.used;
    this.used += (bytes + 7) & ~7;
    this.live++;
    return { buffer: this.buffer, offset };
  }

  /** A range taken from `buffer` is no longer read or written by anyone: its memory may be reused. */
  give(buffer: ArrayBuffer): void {
    if (buffer === this.buffer) this.live--;
    else if (buffer === this.spare) this.spareLive--;
  }

  /** Ranges not given back, in the buffers the slab may reuse (for tests). */
  get outstanding(): number {
    return this.live + (this.spare ? this.spareLive : 0);
  }

  /**
   * The current buffer is full. Nothing live in it: start it again. Else it becomes the spare, and
   * the slab continues in the old spare if all of that was given back, or in a fresh buffer.
   */
  private turn(): void {
    if (this.live > 0) {
      const full = this.buffer;
      this.buffer = this.spare && this.spareLive === 0 ? this.spare : Slab.fresh(this.size);
      this.spare = full;
      this.spareLive = this.live;
    }
    this.used = 0;
    this.live = 0;
  }
}
