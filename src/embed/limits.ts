/**
 * Rate limits of the public embed start, per visitor and per network address: token buckets
 * keyed by string, in memory on each node, bounded (the oldest idle keys go first when full).
 */
export class KeyedLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  /**
   * @param perSecond sustained rate
   * @param burst bucket size (starts full)
   * @param maxKeys keys kept at most; past it the least recently used are forgotten (they start full again)
   */
  constructor(private readonly perSecond: number, private readonly burst: number, private readonly maxKeys = 100_000) {}

  /** Takes one token for `key`: 0 when allowed, else the seconds until one is free. */
  take(key: string, now = performance.now()): number {
    let bucket = this.buckets.get(key);
    if (bucket) this.buckets.delete(key); // re-inserted below: Map order is recency
    else {
      bucket = { tokens: this.burst, at: now };
      if (this.buckets.size >= this.maxKeys) this.buckets.delete(this.buckets.keys().next().value!);
    }
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.perSecond);
    bucket.at = now;
    this.buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return (1 - bucket.tokens) / this.perSecond;
  }

  get size(): number {
    return this.buckets.size;
  }
}
