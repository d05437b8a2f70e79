/**
 * Audio output: one AudioContext, the ring-buffer AudioWorklet, unlocking (autoplay), and the
 * scheduling of relayed PCM on the session clock (docs/player-protocol.md, "Timeline").
 */
import { SessionClock } from './clock.js';
import type { AudioFrame } from './protocol.js';

/** Where the first audio of a stream starts after it arrives: the page's jitter buffer. */
export const SAFETY_MARGIN = 0.12;
/** A frame due sooner than this is late: re-anchor (a small skip beats drift). */
const LATE_MARGIN = 0.015;
/** After a gap in audio, pull the mapping back in if the buffer grew beyond this. */
const MAX_EXTRA_LEAD = 0.25;

interface PosReport {
  frame: number;
  rate: number;
  dataEnd: number;
  level: number;
  late: number;
}

export class AudioOut {
  readonly ctx: AudioContext | null;
  readonly clock: SessionClock;
  private node: AudioWorkletNode | null = null;
  private readyPromise: Promise<void>;
  private scheduledEnd = -Infinity; // session time where scheduled audio ends
  private pos: PosReport = { frame: 0, rate: 48000, dataEnd: 0, level: 0, late: 0 };
  private anchoredOnAudio = false;
  private wasRunning = false;
  level = 0;
  /** Output level history: RMS of the audio rendered in the window ending at `end` (session time). */
  private levels: { end: number; level: number }[] = [];
  reanchors = 0;
  framesReceived = 0;
  onUnlockChange: (unlocked: boolean) => void = () => {};

  constructor(workletUrl: string) {
    const Ctor: typeof AudioContext | undefined = window.AudioContext ?? (window as unknown as { webkitAudioContext?: typeof AudioContext }).webkitAudioContext;
    let ctx: AudioContext | null = null;
    try {
      ctx = Ctor ? new Ctor({ latencyHint: 'interactive' }) : null;
    } catch {
      ctx = null;
    }
    this.ctx = ctx;
    this.clock = new SessionClock(ctx);
    this.readyPromise = this.setup(workletUrl);
    if (ctx) ctx.onstatechange = () => this.stateChanged();
  }

  private async setup(url: string): Promise<void> {
    const ctx = this.ctx;
    if (!ctx || !ctx.audioWorklet) return;
    await ctx.audioWorklet.addModule(url);
    this.node = new AudioWorkletNode(ctx, 'presence-ring-player', { numberOfInputs: 0, numberOfOutputs: 1, outputChannelCount: [1] });
    this.node.port.onmessage = (e: MessageEvent) => {
      if (e.data?.type === 'pos') {
        this.pos = e.data as PosReport;
        this.level = this.pos.level;
        // Stored on the session clock with the mapping in force when it was rendered.
        this.levels.push({ end: this.pos.frame / this.pos.rate - (this.clock.offset ?? 0), level: this.pos.level });
        if (this.levels.length > 4096) this.levels.splice(0, this.levels.length - 4096);
      }
    };
    this.node.connect(ctx.destination);
  }

  ready(): Promise<void> {
    return this.readyPromise;
  }

  get unlocked(): boolean {
    return this.ctx?.state === 'running';
  }

  /** Tries to start the context; resolves to whether audio is now running. */
  async unlock(): Promise<boolean> {
    if (!this.ctx) return false;
    try {
      await Promise.race([this.ctx.resume(), new Promise((r) => setTimeout(r, 400))]);
    } catch {
      /* blocked by autoplay policy */
    }
    this.stateChanged();
    return this.unlocked;
  }

  private stateChanged(): void {
    const running = this.unlocked;
    if (running !== this.wasRunning) {
      this.wasRunning = running;
      // The context clock starts (or stops): the next audio anchors afresh.
      this.anchoredOnAudio = false;
      this.clock.heardCtx();
      this.onUnlockChange(running);
    }
  }

  /** Provisional mapping from `hello.now` until audio arrives. */
  anchorFromHello(now: number): void {
    this.clock.anchor(now, 0);
    this.anchoredOnAudio = false;
    this.scheduledEnd = -Infinity;
  }

  /** Schedules one relayed PCM frame at its session time. */
  push(frame: AudioFrame, rate: number): void {
    this.framesReceived++;
    // Audio is written at context frames ahead of the render position (which runs ahead of what
    // is heard by the output latency); the visuals follow the heard time on the same mapping.
    const render = this.renderCtx();
    const due = this.clock.toCtx(frame.t);
    const gap = frame.t > this.scheduledEnd + 0.05;
    if (this.clock.offset === null || !this.anchoredOnAudio) {
      this.clock.anchorCtx(frame.t, render + SAFETY_MARGIN);
      this.anchoredOnAudio = true;
    } else if (due < render + LATE_MARGIN) {
      this.clock.anchorCtx(frame.t, render + SAFETY_MARGIN);
      this.reanchors++;
    } else if (gap && due > render + SAFETY_MARGIN + MAX_EXTRA_LEAD) {
      // Clock drift between server and sound card piled up during silence: take it back in.
      this.clock.anchorCtx(frame.t, render + SAFETY_MARGIN);
      this.reanchors++;
    }
    const duration = frame.samples.length / rate;
    this.scheduledEnd = Math.max(this.scheduledEnd, frame.t + duration);
    if (!this.node || !this.unlocked) return;
    const f = new Float32Array(frame.samples.length);
    for (let i = 0; i < f.length; i++) f[i] = frame.samples[i] / 32768;
    // Written at its context frame: heard exactly when the heard clock reaches it.
    this.node.port.postMessage({ type: 'chunk', start: this.clock.toCtx(frame.t), rate, samples: f }, [f.buffer]);
  }

  /** Context time the audio thread renders next (ahead of the heard time by the output latency). */
  private renderCtx(): number {
    const heard = this.clock.heardCtx();
    return this.ctx && this.unlocked ? Math.max(heard, this.ctx.currentTime) : heard;
  }

  /** Drops every scheduled sample from session time `t` (or now, if sooner) on. */
  interrupt(t: number): void {
    const now = this.clock.now() ?? t;
    const from = Math.min(t, now);
    this.scheduledEnd = Math.min(this.scheduledEnd, from);
    this.pausedFrom = null;
    // Clear from the render position: what is already in the device buffer cannot be recalled.
    this.node?.port.postMessage({ type: 'clear', from: Math.min(this.clock.toCtx(from), this.renderCtx()) });
  }

  /** Session time the audio was paused at (`pause`), while it is. */
  private pausedFrom: number | null = null;

  /**
   * Stops the audio from session time `t` (or now, if sooner) and keeps what was scheduled after it
   * for `resume`. Returns the session time it stopped at.
   */
  pause(t: number): number {
    const now = this.clock.now() ?? t;
    const from = Math.min(t, now);
    this.pausedFrom = from;
    this.scheduledEnd = Math.min(this.scheduledEnd, from);
    this.node?.port.postMessage({ type: 'hold', from: Math.min(this.clock.toCtx(from), this.renderCtx()) });
    return from;
  }

  /**
   * Plays what `pause` kept, `shift` seconds later than it was timed: where the server's next audio
   * (timed after the pause) continues it. Kept audio due too soon to be rendered whole moves the
   * page's mapping a little later instead, so no sample is skipped.
   */
  resume(shift: number): void {
    const from = this.pausedFrom;
    this.pausedFrom = null;
    if (from === null) return;
    const at = from + shift;
    const render = this.renderCtx();
    if (this.clock.offset === null || this.clock.toCtx(at) < render + LATE_MARGIN) {
      this.clock.anchorCtx(at, render + LATE_MARGIN);
      this.reanchors++;
    }
    this.node?.port.postMessage({ type: 'release', at: this.clock.toCtx(at) });
  }

  /** Forget everything scheduled (reconnect). */
  reset(): void {
    this.pausedFrom = null;
    this.node?.port.postMessage({ type: 'clear', from: 0 });
    this.scheduledEnd = -Infinity;
    this.anchoredOnAudio = false;
  }

  /** Seconds of buffered audio ahead of what is heard. */
  buffered(): number {
    const now = this.clock.now();
    return now === null ? 0 : Math.max(0, this.scheduledEnd - now);
  }

  /** Figures for diagnostics. */
  debug(): Record<string, unknown> {
    const ctx = this.ctx;
    const ts = ctx?.getOutputTimestamp?.();
    return {
      state: ctx?.state,
      rate: ctx?.sampleRate,
      currentTime: ctx?.currentTime,
      heard: this.clock.heardCtx(),
      offset: this.clock.offset,
      baseLatency: ctx?.baseLatency,
      outputLatency: (ctx as AudioContext & { outputLatency?: number })?.outputLatency,
      outputTimestamp: ts ? { contextTime: ts.contextTime, performanceTime: ts.performanceTime, perfNow: performance.now() } : null,
      worklet: this.pos,
      reanchors: this.reanchors,
      framesReceived: this.framesReceived,
      scheduledEnd: this.scheduledEnd,
    };
  }

  /** RMS of the audio reaching the listener now, as rendered by the worklet (0 when silent). */
  heardLevel(): number {
    if (!this.unlocked) return 0;
    const heard = this.clock.now() ?? 0;
    for (const l of this.levels) if (l.end >= heard) return l.level;
    // Reports from the audio thread can trail under load: the latest known.
    return this.levels.length ? this.levels[this.levels.length - 1].level : 0;
  }

  /**
   * Recent output levels on the session clock: [session time at the end of each ~6 ms window,
   * RMS of what the worklet rendered there]. Rendered at context frame X means heard when the
   * heard clock reaches X, so this shows where the audio really landed.
   */
  levelHistory(): [number, number][] {
    return this.levels.map((l) => [Math.round(l.end * 1e4) / 1e4, Math.round(l.level * 1e4) / 1e4]);
  }

  /** Session time of the audio heard now; stops at the end of the audio played so far. */
  audioTime(): number {
    const now = this.clock.now();
    if (now === null) return 0;
    if (this.unlocked && this.node) {
      const sessionPlayedEnd = this.pos.dataEnd / this.pos.rate - (this.clock.offset ?? 0);
      return Math.max(0, Math.min(now, sessionPlayedEnd, this.scheduledEnd));
    }
    return Math.max(0, Math.min(now, this.scheduledEnd));
  }
}
