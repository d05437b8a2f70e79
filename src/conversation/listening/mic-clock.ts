/**
 * Dates microphone audio by when it was captured, not by when it arrived.
 *
 * The page sends its frames as it captures them, but they arrive in bursts: measured live, the
 * first second of a session's microphone arrived up to 224 ms late while the server set the
 * session up. Dated by arrival, those frames put the agent's echo 200 ms later than it is, and the
 * echo guard's first estimate of the echo's path was 700 ms instead of 140 (a false pause followed).
 *
 * The microphone's own sample count is a better clock: sample n was captured at anchor + n/16 ms,
 * the anchor being the earliest any frame's arrival allows (audio never arrives before it was
 * captured). The earliest over the last few seconds, not for ever: a page's sound clock runs a
 * little slow or fast against the server's (tens of parts per million), which a fixed anchor would
 * add up over a long session. After a gap (the stream stopped and started again), it starts over.
 * Audio that was captured but never came is counted in (`lostBefore`), so it is not a gap.
 */
import { RECOGNITION_SAMPLE_RATE } from '../../speech/recognition/types.js';

/** Seconds of audio the earliest arrival is taken over. */
const WINDOW_SECONDS = 8;
/** Arrival later than the clock by more than this is a gap in the stream, not a delay: the clock starts again. */
const GAP_MS = 500;

export class MicClock {
  private samples = 0;
  /** Per second of audio (a ring of WINDOW_SECONDS): the earliest anchor its arrivals allowed. */
  private readonly earliest = new Float64Array(WINDOW_SECONDS).fill(Number.POSITIVE_INFINITY);
  private second = 0;
  private anchor = Number.POSITIVE_INFINITY;

  /**
   * Records `length` samples that arrived at `arrivedAtMs`; answers when their last one was captured.
   * `lostBefore`: samples captured just before them that never came (the page's sequence numbers
   * skipped them, or the server dropped them): the count moves on by them, or everything after
   * would be dated that much early until the window had passed.
   */
  date(length: number, arrivedAtMs: number, lostBefore = 0): number {
    this.samples += lostBefore + length;
    const sinceStartMs = (this.samples * 1000) / RECOGNITION_SAMPLE_RATE;
    const anchor = arrivedAtMs - sinceStartMs;
    if (anchor - this.anchor > GAP_MS) this.earliest.fill(Number.POSITIVE_INFINITY);
    const second = Math.floor(this.samples / RECOGNITION_SAMPLE_RATE);
    // Seconds passed since the last frame leave the window (at most all of it).
    for (let s = this.second + 1; s <= Math.min(second, this.second + WINDOW_SECONDS); s++) this.earliest[s % WINDOW_SECONDS] = Number.POSITIVE_INFINITY;
    this.second = second;
    const slot = second % WINDOW_SECONDS;
    this.earliest[slot] = Math.min(this.earliest[slot], anchor);
    let earliest = Number.POSITIVE_INFINITY;
    for (const value of this.earliest) earliest = Math.min(earliest, value);
    this.anchor = earliest;
    return this.anchor + sinceStartMs;
  }
}
