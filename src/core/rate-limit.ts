/** Per-key token bucket: `perSecond` sustained, bursts up to twice that. In memory, per node. */
export class RateLimiter {
  private buckets = new Map<number, { tokens: number; at: number }>();
  private readonly burst: number;

  constructor(private readonly perSecond: number) {
    this.burst = perSecond * 2;
  }

  /** Takes one token; returns 0 when allowed, else the seconds to wait. */
  take(id: number, now = performance.now()): number {
    let bucket = this.buckets.get(id);
    if (!bucket) {
      bucket = { tokens: this.burst, at: now };
      this.buckets.set(id, bucket);
    }
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.perSecond);
    bucket.at = now;
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return (1 - bucket.tokens) / this.perSecond;
  }
}
