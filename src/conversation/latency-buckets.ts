/**
 * Voice-to-voice latencies kept as a histogram of fixed buckets, so that percentiles over any days
 * read one small array per agent and day instead of every answer. The buckets are 20 ms wide below
 * 1.5 s (where answers are), 100 ms below 5 s, 1 s below 30 s, then one bucket for the rest; a
 * percentile is the middle of its bucket, so it is within 10 ms of the exact figure below 1.5 s,
 * 50 ms below 5 s and 500 ms below 30 s. The database computes the same buckets
 * (`answer_ms_bucket` in migration 0029); a test checks that the two agree.
 */

export const LATENCY_BUCKETS = 136;

/** The bucket (0 … LATENCY_BUCKETS-1) of a latency in ms. */
export function latencyBucket(ms: number): number {
  const v = Math.max(0, Math.floor(ms));
  if (v < 1500) return Math.floor(v / 20);
  if (v < 5000) return 75 + Math.floor((v - 1500) / 100);
  if (v < 30_000) return 110 + Math.floor((v - 5000) / 1000);
  return 135;
}

/** The figure a bucket stands for: its middle (30 s for the last, open one). */
export function bucketValue(bucket: number): number {
  if (bucket < 75) return bucket * 20 + 10;
  if (bucket < 110) return 1500 + (bucket - 75) * 100 + 50;
  if (bucket < 135) return 5000 + (bucket - 110) * 1000 + 500;
  return 30_000;
}

/** A histogram's nearest-rank percentile (the smallest bucket with at least p % at or below it). */
export function histogramPercentile(histogram: ArrayLike<number>, total: number, percent: number): number | null {
  if (total <= 0) return null;
  let cumulative = 0;
  for (let b = 0; b < histogram.length; b++) {
    cumulative += histogram[b] ?? 0;
    if (cumulative * 100 >= total * percent) return bucketValue(b);
  }
  return bucketValue(histogram.length - 1);
}
