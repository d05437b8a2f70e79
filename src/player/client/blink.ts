/**
 * Blinks from a randomised template: a fast close, a short hold, a slower opening. Intervals are
 * irregular (log-normal, about 17 a minute), sometimes a double blink follows.
 */
const rand = (a: number, b: number) => a + Math.random() * (b - a);
const easeIn = (x: number) => x * x;
const easeOut = (x: number) => 1 - (1 - x) * (1 - x);

interface BlinkShape {
  start: number;
  close: number;
  hold: number;
  open: number;
  depth: number;
}

export class Blinker {
  private next = 1 + Math.random() * 2;
  private current: BlinkShape | null = null;
  /** Multiplies the blink rate (attentive listening blinks a little less). */
  rate = 1;
  count = 0;

  /** Log-normal interval around a 3.5 s median (≈17 a minute with the doubles), clamped to 0.8..9 s. */
  private interval(): number {
    const g = Math.sqrt(-2 * Math.log(Math.random() || 1e-9)) * Math.cos(2 * Math.PI * Math.random());
    return Math.min(9, Math.max(0.8, Math.exp(Math.log(3.5) + 0.45 * g))) / this.rate;
  }

  /** Starts a blink now (camera cuts, big saccades, on request). */
  trigger(now: number): void {
    if (this.current && now < this.current.start + this.current.close + this.current.hold + this.current.open) return;
    this.current = { start: now, close: rand(0.055, 0.085), hold: rand(0.015, 0.05), open: rand(0.11, 0.19), depth: rand(0.92, 1) };
    this.count++;
    this.next = now + this.interval();
    if (Math.random() < 0.12) this.next = now + rand(0.32, 0.5); // double blink
  }

  /** Eyelid closure 0..1 at time `now` (seconds, any monotonic clock). */
  update(now: number): number {
    if (now >= this.next) this.trigger(now);
    const b = this.current;
    if (!b) return 0;
    const x = now - b.start;
    if (x < 0) return 0;
    if (x < b.close) return b.depth * easeIn(x / b.close);
    if (x < b.close + b.hold) return b.depth;
    if (x < b.close + b.hold + b.open) return b.depth * (1 - easeOut((x - b.close - b.hold) / b.open));
    this.current = null;
    return 0;
  }
}
