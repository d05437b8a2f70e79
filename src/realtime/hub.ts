/**
 * All live sessions on this node and the one timer that drives their playback clocks. Only
 * sessions with audio or timed actions pending are ticked, so idle sessions cost nothing.
 */
import type { LoopState, RealtimeSession } from './session.js';
import { realtimeMetrics } from './metrics.js';

/** Clock resolution: audio leaves at most this late (plus event-loop lag). */
export const TICK_MS = 5;
/** A tick at most this late means the event loop is keeping up (it has just read its sockets). */
const RESPONSIVE_LAG_MS = 15;

export class RealtimeHub {
  private readonly sessions = new Map<string, RealtimeSession>();
  private readonly active = new Set<RealtimeSession>();
  readonly loop: LoopState = { responsiveAt: performance.now() };
  private timer?: NodeJS.Timeout;
  /** When the next tick is due, to measure the clock's lag (realtimeMetrics.tickLag). */
  private expected = 0;
  /** A session's clock threw: the hub stops ticking it; the service drops its queue and tells its caller. */
  onFault: (session: RealtimeSession, error: unknown) => void = () => {};

  add(session: RealtimeSession): void {
    this.sessions.set(session.id, session);
    if (session.realClock) session.loop = this.loop;
    session.wake = () => {
      this.active.add(session);
      // Run at once: a piece that arrives due leaves now, not at the next tick.
      this.tickOne(session);
      this.ensureTimer();
    };
  }

  get(sessionId: string): RealtimeSession | undefined {
    return this.sessions.get(sessionId);
  }

  remove(sessionId: string): RealtimeSession | undefined {
    const session = this.sessions.get(sessionId);
    if (session) {
      this.sessions.delete(sessionId);
      this.active.delete(session);
      session.close();
    }
    return session;
  }

  get size(): number {
    return this.sessions.size;
  }

  /** Sessions on the shared clock (audio or a near timed action pending), and whether it runs. */
  get clock(): { sessions: number; running: boolean } {
    return { sessions: this.active.size, running: this.timer !== undefined };
  }

  ids(): string[] {
    return [...this.sessions.keys()];
  }

  private ensureTimer(): void {
    if (this.timer || this.active.size === 0) return;
    this.loop.responsiveAt = performance.now();
    this.expected = performance.now() + TICK_MS;
    this.timer = setInterval(() => this.tickAll(), TICK_MS);
  }

  private tickAll(): void {
    const now = performance.now();
    const lag = now - this.expected;
    realtimeMetrics.tickLag.observe(Math.max(0, lag));
    if (lag <= RESPONSIVE_LAG_MS) this.loop.responsiveAt = now;
    this.expected = now + TICK_MS;
    // Most sessions have nothing due at a given tick (a 40 ms frame is due every eighth): only
    // those that have are ticked. 1e-4: what the clock counts as due.
    for (const session of this.active) if (session.dueAt <= session.now() + 1e-4) this.tickOne(session);
    if (this.active.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  /** One session's tick; its failure stays its own (the shared timer keeps running for the rest). */
  private tickOne(session: RealtimeSession): void {
    try {
      session.tick();
      if (!session.busy) this.active.delete(session);
    } catch (error) {
      this.active.delete(session);
      this.onFault(session, error);
    }
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    for (const id of [...this.sessions.keys()]) this.remove(id);
  }
}
