/**
 * Per-socket message rate limit (a token bucket). Generous on purpose: a real caller sends tens
 * of messages a second, and a burst of a few thousand when it pushes synthesised audio faster than
 * real time; thousands a second, sustained, is abuse. A refused message is dropped; the caller is
 * told once per spell of refusals (an `error` event), and a caller that keeps going is closed.
 */
export const messageLimits = {
  /** Sustained messages a second. */
  perSecond: 1000,
  /** Messages a socket may send at once (120 s of audio in 20 ms pieces is 6,000). */
  burst: 6000,
  /** Refused messages in one spell before the socket is closed. */
  closeAfter: 2000,
  /** A spell of refusals ends after this long without one. */
  spellQuietMs: 1000,
};
export const MESSAGE_RATE_PER_SECOND = messageLimits.perSecond;
export const MESSAGE_BURST = messageLimits.burst;
export const REFUSED_BEFORE_CLOSE = messageLimits.closeAfter;

export type RateVerdict = 'accept' | 'refuse_first' | 'refuse' | 'close';

export class MessageRateLimiter {
  private readonly limits = { ...messageLimits };
  private tokens = this.limits.burst;
  private last = performance.now();
  private refusedInSpell = 0;
  private lastRefusal = -Infinity;
  /** Messages refused over the socket's life. */
  refused = 0;

  take(now = performance.now()): RateVerdict {
    const { perSecond, burst, closeAfter, spellQuietMs } = this.limits;
    this.tokens = Math.min(burst, this.tokens + ((now - this.last) / 1000) * perSecond);
    this.last = now;
    if (now - this.lastRefusal > spellQuietMs) this.refusedInSpell = 0;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return 'accept';
    }
    this.refused++;
    this.refusedInSpell++;
    this.lastRefusal = now;
    if (this.refusedInSpell > closeAfter) return 'close';
    return this.refusedInSpell === 1 ? 'refuse_first' : 'refuse';
  }
}
