/**
 * Rate limits of the public embed start, per visitor and per network address: token buckets
 * keyed by string, in memory on each node, bounded (the oldest idle keys go first when full).
 */
import { LRUCache } from 'lru-cache';

export class KeyedLimiter {
  private readonly buckets: LRUCache<string, { tokens: number; at: number }>;

  /**
   * @param perSecond sustained rate
   * @param burst bucket size (starts full)
   * @param maxKeys keys kept at most; past it the least recently used are forgotten (they start full again)
   */
  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    maxKeys = 100_000,
  ) {
    this.buckets = new LRUCache({ max: maxKeys });
  }

  /** Takes one token for `key`: 0 when allowed, else the seconds until one is free. */
  take(key: string, now = performance.now()): number {
    const bucket = this.buckets.get(key) ?? { tokens: this.burst, at: now };
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
