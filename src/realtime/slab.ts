/**
 * Short-lived byte ranges carved out of larger ArrayBuffers. Every ArrayBuffer costs the garbage
 * collector far more than its bytes (a backing store outside the heap, tracked and swept), so the
 * real-time path, which copies a piece in and packs a frame out 25 times a second per session,
 * takes its memory from slabs instead: one allocation for several frames. A slab lives as long as
 * any range cut from it, so memory that lives long (a session's queued pieces, played and dropped
 * in order) comes from the session's own small slab, and memory that lives a moment (a frame on
 * its way to the kernel) from one shared slab that stays in the CPU's caches.
 */
export class Slab {
  private buffer: ArrayBuffer;
  private used = 0;

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
    if (this.used + bytes > this.size) {
      this.buffer = Slab.fresh(this.size);
      this.used = 0;
    }
    const offset = this.used;
    this.used += (bytes + 7) & ~7;
    return { buffer: this.buffer, offset };
  }
}
