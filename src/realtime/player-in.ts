/**
 * Player in: what the visitor's page sends over the player channel (docs/player-protocol.md,
 * "Page → server"). In conversation mode that is the microphone (binary frames of 16 kHz PCM),
 * typed turns (`visitor_text`) and mute (`mic`), validated and bounded here and handed to the live
 * conversation through the `VisitorInputs` hook. Render mode takes none of it.
 */
import type { VisitorInput, VisitorInputs } from './visitor-input.js';

/** Microphone frames: uint32 LE sequence number, then int16 LE mono samples at 16 kHz. */
export const MIC_HEADER_BYTES = 4;
export const MIC_SAMPLE_RATE = 16000;
/** At most one second of audio per frame (the page sends ~100 ms). */
export const MIC_MAX_SAMPLES = MIC_SAMPLE_RATE;
/** Lost microphone audio passed on before a frame, at most (one second). */
const MIC_LOST_MAX_SAMPLES = MIC_SAMPLE_RATE;
/** Sustained microphone audio a session may send, in seconds of audio per second (slack for jitter). */
export const MIC_RATE = 1.25;
/** Burst allowance: audio a page may send at once after a stall (seconds of audio). */
export const MIC_BURST_SECONDS = 3;
/** Longest typed turn, in characters (after trimming). */
export const MAX_TYPED_CHARS = 1000;
/** Typed turns: one every 2 s sustained, bursts of 5. */
export const TYPED_PER_SECOND = 0.5;
export const TYPED_BURST = 5;
/** Largest JSON message a page may send. */
export const MAX_PAGE_TEXT_BYTES = 8 * 1024;
/** The same error is told to a page at most this often (a misbehaving page is not flooded). */
const ERROR_EVERY_MS = 2000;

export type PlayerInputError = 'invalid_message' | 'unknown_type' | 'wrong_mode' | 'bad_audio_frame' | 'too_much_audio' | 'rate_limited' | 'text_too_long';

/** Per-session input state; it outlives a page's reconnects. */
export class PlayerInputState {
  muted = false;
  framesReceived = 0;
  samplesReceived = 0;
  /** Samples dropped by the rate bound or while muted. */
  samplesDropped = 0;
  /** Sequence numbers skipped (frames lost between page and server, e.g. across a drop). */
  gaps = 0;
  typedTurns = 0;
  private micTokens = MIC_BURST_SECONDS * MIC_SAMPLE_RATE;
  private micAt = -1;
  private typedTokens = TYPED_BURST;
  private typedAt = -1;

  /** Takes `samples` from the audio bucket; false when over the bound. */
  takeAudio(samples: number, now: number): boolean {
    const cap = MIC_BURST_SECONDS * MIC_SAMPLE_RATE;
    if (this.micAt >= 0) this.micTokens = Math.min(cap, this.micTokens + ((now - this.micAt) / 1000) * MIC_RATE * MIC_SAMPLE_RATE);
    this.micAt = now;
    if (this.micTokens < samples) return false;
    this.micTokens -= samples;
    return true;
  }

  takeTyped(now: number): boolean {
    if (this.typedAt >= 0) this.typedTokens = Math.min(TYPED_BURST, this.typedTokens + ((now - this.typedAt) / 1000) * TYPED_PER_SECOND);
    this.typedAt = now;
    if (this.typedTokens < 1) return false;
    this.typedTokens -= 1;
    return true;
  }
}

export interface PlayerInputContext {
  sessionId: string;
  mode: 'conversation' | 'render';
  state: PlayerInputState;
  inputs: VisitorInputs;
  /** Sends a JSON message to this page only. */
  reply(message: Record<string, unknown>): void;
  now?: () => number;
}

/** One page's connection: parses and checks its frames, then hands them on. */
export class PlayerInput {
  private lastSeq = -1;
  /** Microphone samples captured but not handed on since the last frame that was (dropped, or skipped by sequence number). */
  private lostSamples = 0;
  private readonly lastError = new Map<PlayerInputError, number>();
  private readonly now: () => number;

  constructor(private readonly c: PlayerInputContext) {
    this.now = c.now ?? (() => performance.now());
  }

  private input(): VisitorInput | null {
    return this.c.mode === 'conversation' ? this.c.inputs(this.c.sessionId) : null;
  }

  /**
   * Counts microphone audio that will not be handed on. At most a second: more is a gap the capture
   * clock starts over after anyway, and a page's sequence number is its word, not to move the clock by hours.
   */
  private lose(samples: number): void {
    this.lostSamples = Math.min(MIC_LOST_MAX_SAMPLES, this.lostSamples + samples);
  }

  /** A microphone frame that arrived and is not handed on (muted, or over the rate bound). */
  private drop(samples: number): void {
    this.c.state.samplesDropped += samples;
    this.lose(samples);
  }

  private error(code: PlayerInputError, message: string): void {
    const now = this.now();
    const last = this.lastError.get(code);
    if (last !== undefined && now - last < ERROR_EVERY_MS) return;
    this.lastError.set(code, now);
    this.c.reply({ type: 'error', code, message });
  }

  handle(bytes: Buffer, isBinary: boolean): void {
    if (isBinary) this.microphone(bytes);
    else this.text(bytes);
  }

  private microphone(bytes: Buffer): void {
    if (this.c.mode !== 'conversation') return this.error('wrong_mode', 'microphone audio is taken in conversation mode only');
    const sampleBytes = bytes.byteLength - MIC_HEADER_BYTES;
    if (sampleBytes <= 0 || sampleBytes % 2 !== 0 || sampleBytes / 2 > MIC_MAX_SAMPLES) {
      return this.error('bad_audio_frame', `a microphone frame is a 4-byte sequence number and 1–${MIC_MAX_SAMPLES} 16-bit samples`);
    }
    const state = this.c.state;
    const seq = bytes.readUInt32LE(0);
    const count = sampleBytes / 2;
    if (this.lastSeq >= 0 && seq > this.lastSeq + 1) {
      state.gaps += seq - this.lastSeq - 1;
      // Frames the page numbered but never sent, taken to be this one's size.
      this.lose((seq - this.lastSeq - 1) * count);
    }
    this.lastSeq = seq;
    const now = this.now();
    if (state.muted) return this.drop(count);
    if (!state.takeAudio(count, now)) {
      this.drop(count);
      return this.error('too_much_audio', `microphone audio arrives faster than ${MIC_RATE}× real time; the excess is dropped`);
    }
    state.framesReceived++;
    state.samplesReceived += count;
    // Copy into an aligned buffer: the socket's buffer may start at an odd offset.
    const pcm = new Int16Array(count);
    for (let i = 0; i < count; i++) pcm[i] = bytes.readInt16LE(MIC_HEADER_BYTES + i * 2);
    this.input()?.microphone(pcm, now, this.lostSamples);
    this.lostSamples = 0;
  }

  private text(bytes: Buffer): void {
    if (bytes.byteLength > MAX_PAGE_TEXT_BYTES) return this.error('invalid_message', `a message is at most ${MAX_PAGE_TEXT_BYTES} bytes`);
    let message: unknown;
    try {
      message = JSON.parse(bytes.toString('utf8'));
    } catch {
      return this.error('invalid_message', 'message is not valid JSON');
    }
    if (!message || typeof message !== 'object' || typeof (message as { type?: unknown }).type !== 'string') {
      return this.error('invalid_message', 'a message is a JSON object with a type');
    }
    const m = message as { type: string; [field: string]: unknown };
    switch (m.type) {
      case 'ready':
      case 'stats':
        return; // diagnostics only
      case 'visitor_text':
        return this.typed(m.text);
      case 'mic':
        return this.mic(m.muted);
      default:
        return this.error('unknown_type', `unknown message type ${JSON.stringify(m.type.slice(0, 40))}`);
    }
  }

  private typed(value: unknown): void {
    if (this.c.mode !== 'conversation') return this.error('wrong_mode', 'typed turns are taken in conversation mode only');
    if (typeof value !== 'string') return this.error('invalid_message', 'visitor_text needs text (a string)');
    // Control characters other than line breaks and tabs carry nothing a visitor meant.
    const text = value.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, '').trim();
    if (!text) return this.error('invalid_message', 'visitor_text needs some text');
    if (text.length > MAX_TYPED_CHARS) return this.error('text_too_long', `a typed turn is at most ${MAX_TYPED_CHARS} characters`);
    if (!this.c.state.takeTyped(this.now())) return this.error('rate_limited', 'too many typed turns; wait a moment');
    this.c.state.typedTurns++;
    this.input()?.typed(text);
  }

  private mic(value: unknown): void {
    if (this.c.mode !== 'conversation') return this.error('wrong_mode', 'mute is taken in conversation mode only');
    if (typeof value !== 'boolean') return this.error('invalid_message', 'mic needs muted (true or false)');
    if (this.c.state.muted === value) return;
    this.c.state.muted = value;
    this.input()?.setMuted(value);
  }
}
