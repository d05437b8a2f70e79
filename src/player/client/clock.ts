/**
 * The page's one mapping from the session clock to the AudioContext clock: ctxTime = t + offset.
 * `heardCtx()` is the context time of the sample reaching the listener now (output latency
 * included), extrapolated smoothly between the audio thread's coarse updates. While the
 * AudioContext is not running (autoplay blocked) a virtual clock on performance.now() stands in,
 * so the face still moves on time; switching keeps session time continuous.
 */
export class SessionClock {
  /** ctxTime = sessionTime + offset; null until anchored. */
  offset: number | null = null;
  private rawCtx = -1;
  private rawPerf = 0;
  private last = 0;
  private virtualBase = performance.now();
  private mode: 'audio' | 'virtual' = 'virtual';

  constructor(private readonly ctx: AudioContext | null) {}

  get running(): boolean {
    return this.mode === 'audio';
  }

  /** Context time being heard right now (virtual seconds while the context is not running). */
  heardCtx(): number {
    const nowPerf = performance.now();
    const audio = !!this.ctx && this.ctx.state === 'running';
    if (audio !== (this.mode === 'audio')) this.switchMode(audio ? 'audio' : 'virtual', nowPerf);
    if (!audio || !this.ctx) return (nowPerf - this.virtualBase) / 1000;
    return this.audioHeard(nowPerf);
  }

  private audioHeard(nowPerf: number): number {
    const ctx = this.ctx!;
    let raw: number;
    let rawPerf: number;
    const ts = typeof ctx.getOutputTimestamp === 'function' ? ctx.getOutputTimestamp() : undefined;
    if (ts && ts.contextTime && ts.performanceTime && ts.contextTime <= ctx.currentTime + 0.05) {
      raw = ts.contextTime;
      rawPerf = ts.performanceTime;
    } else {
      raw = ctx.currentTime - (ctx.baseLatency || 0) - ((ctx as AudioContext & { outputLatency?: number }).outputLatency || 0);
      if (raw !== this.rawCtx) {
        this.rawCtx = raw;
        this.rawPerf = nowPerf;
      }
      rawPerf = this.rawPerf;
    }
    // Extrapolate at most 100 ms past the last update; never run backwards.
    let t = raw + Math.min(0.1, Math.max(0, (nowPerf - rawPerf) / 1000));
    if (t < this.last && this.last - t < 0.05) t = this.last;
    this.last = t;
    return t;
  }

  private switchMode(next: 'audio' | 'virtual', nowPerf: number): void {
    const before = this.offset === null ? null : this.sessionAt(this.mode === 'audio' ? this.last : (nowPerf - this.virtualBase) / 1000);
    this.mode = next;
    this.last = 0;
    this.rawCtx = -1;
    if (next === 'virtual') this.virtualBase = nowPerf - (this.ctx ? this.ctx.currentTime * 1000 : 0);
    if (before !== null) {
      const ctxNow = next === 'audio' ? this.audioHeard(nowPerf) : (nowPerf - this.virtualBase) / 1000;
      this.offset = ctxNow - before;
    }
  }

  private sessionAt(ctxTime: number): number {
    return ctxTime - (this.offset ?? 0);
  }

  /** Session time heard now, or null before any anchor. */
  now(): number | null {
    const ctxNow = this.heardCtx();
    return this.offset === null ? null : ctxNow - this.offset;
  }

  /** Anchors so that session time `t` is heard `margin` seconds from now. */
  anchor(t: number, margin: number): void {
    this.offset = this.heardCtx() + margin - t;
  }

  /** Anchors so that session time `t` falls on context time `ctxTime`. */
  anchorCtx(t: number, ctxTime: number): void {
    this.heardCtx();
    this.offset = ctxTime - t;
  }

  toCtx(t: number): number {
    return t + (this.offset ?? 0);
  }
}
