/**
 * One live session's real-time path: commands in → utterance queue → playback clock → lip-sync →
 * player out. The clock (`tick`) is driven by the hub's shared timer; audio leaves toward the
 * player paced at real time whatever speed it arrived at, and every event about an utterance is
 * emitted at the moment its audio leaves.
 */
import crypto from 'node:crypto';
import { Utterance, UtteranceQueue, type TimedAction } from './utterance-queue.js';
import { PlayerOut } from './player-out.js';
import { parseExpressionTags } from './expression-tags.js';
import { MAX_QUEUED_SECONDS, MAX_FRAME_BYTES, type AvatarState, type ErrorType, type RenderCommand, type RenderEvent } from './protocol.js';
import type { Backdrop } from '../catalog/backdrops.js';
import { realtimeMetrics } from './metrics.js';

/** Longest audio frame sent to the player: short enough for lip-sync, long enough to be cheap. */
export const FRAME_MAX_SECONDS = 0.04;
/** An unsealed utterance whose next audio is this late is starving. */
const STARVATION_GRACE = 0.06;

export interface Stage {
  camera: 'far' | 'mid' | 'close';
  camera_mode: 'auto' | 'manual';
  hold: boolean;
  backdrop: string | null;
  cameras: Array<'far' | 'mid' | 'close'>;
  face_light: number;
}

export interface SpeechRequest {
  text: string;
  sampleRate: number;
  signal: AbortSignal;
}
export interface SpeechPiece {
  pcm: Int16Array;
  text?: string;
  words?: Array<{ word: string; start: number; end: number }>;
}
/** Voices text for agent.speak_text (the speech layer, bound to the session's voice). */
export type Speaker = (request: SpeechRequest) => AsyncIterable<SpeechPiece>;

export interface SessionSetup {
  sessionId: string;
  sampleRate: number;
  stage: Stage;
  speaker: Speaker;
  findBackdrop: (id: string) => Backdrop | undefined;
  /** Session clock in seconds (tests inject their own). */
  now?: () => number;
}

export class RealtimeSession {
  readonly id: string;
  readonly player = new PlayerOut();
  readonly queue = new UtteranceQueue();
  sampleRate: number;
  state: AvatarState = 'idle';
  stage: Stage;
  /** Receives events for the caller (the render socket, when one is attached). */
  emit: (event: RenderEvent) => void = () => {};
  /** Called when the session has work for the clock (the hub adds it to its active set). */
  wake: () => void = () => {};
  audioStarted = false;
  private listening = false;
  private carry: number | undefined;
  private lastEnd = 0;
  private stageTimers: Array<{ at: number; action: TimedAction }> = [];
  private readonly origin = performance.now();
  private readonly clock: () => number;
  private readonly speaker: Speaker;
  private readonly findBackdrop: SessionSetup['findBackdrop'];

  constructor(setup: SessionSetup) {
    this.id = setup.sessionId;
    this.sampleRate = setup.sampleRate;
    this.stage = setup.stage;
    this.speaker = setup.speaker;
    this.findBackdrop = setup.findBackdrop;
    this.clock = setup.now ?? (() => (performance.now() - this.origin) / 1000);
  }

  now(): number {
    return this.clock();
  }

  /** Whether the clock has anything to do. */
  get busy(): boolean {
    return this.queue.items.length > 0 || this.stageTimers.length > 0;
  }

  private event(type: string, fields: Record<string, unknown> = {}): void {
    this.emit({ type, event_id: `evt_${crypto.randomUUID()}`, ...fields });
  }

  error(type: ErrorType, message: string, sourceEventId?: string): void {
    this.event('error', { error: { type, message, ...(sourceEventId && { source_event_id: sourceEventId }) } });
  }

  private setState(next: AvatarState): void {
    if (next === this.state) return;
    const previous = this.state;
    this.state = next;
    this.event('agent.state_updated', { previous_state: previous, new_state: next });
    this.player.json({ type: 'state', t: this.now(), state: next });
  }

  private restingState(): AvatarState {
    return this.listening ? 'listening' : 'idle';
  }

  // ---------------------------------------------------------------- socket in

  /** Caller audio (agent.speak, agent.speak_end's audio, or a binary frame). */
  audio(bytes: Uint8Array, eventId: string | undefined, text?: string): void {
    if (bytes.byteLength > MAX_FRAME_BYTES) {
      this.error('invalid_request_error', `audio frame is ${bytes.byteLength} bytes; at most ${MAX_FRAME_BYTES} (1 MB) per frame`, eventId);
      return;
    }
    // Whole samples only: an odd trailing byte waits for the next piece.
    let data = bytes;
    if (this.carry !== undefined) {
      const joined = new Uint8Array(bytes.byteLength + 1);
      joined[0] = this.carry;
      joined.set(bytes, 1);
      data = joined;
    }
    const odd = data.byteLength % 2;
    const carry = odd ? data[data.byteLength - 1] : undefined;
    const samples = (data.byteLength - odd) / 2;
    const incomingSeconds = samples / this.sampleRate;
    if (this.queue.queuedSeconds() + incomingSeconds > MAX_QUEUED_SECONDS) {
      this.error('queue_full', `more than ${MAX_QUEUED_SECONDS} s of audio would be waiting to play; send more when it has played`, eventId);
      return;
    }
    this.carry = carry;
    // Copy into an aligned Int16Array (the incoming buffer may be odd-aligned or reused by ws).
    const pcm = new Int16Array(samples);
    new Uint8Array(pcm.buffer).set(data.subarray(0, samples * 2));
    let utterance = this.queue.open;
    if (!utterance) {
      utterance = new Utterance(eventId ?? `utt_${crypto.randomUUID()}`, this.sampleRate, 'audio');
      this.queue.open = utterance;
      this.queue.push(utterance);
    }
    if (samples > 0 || text) utterance.add({ pcm, text, arrivedAt: performance.now() });
    if (samples > 0) this.audioStarted = true;
    this.wake();
  }

  /** Seals the open utterance: it plays to its end, and the next audio opens a new one. */
  speakEnd(): void {
    const open = this.queue.open;
    if (open) open.sealed = true;
    this.queue.open = undefined;
    this.carry = undefined;
    this.wake();
  }

  /** agent.speak_text: queued in order with caller audio, voiced by the speech layer. */
  speakText(text: string, eventId: string, cue?: string): void {
    const tagged = parseExpressionTags(text);
    // Text closes any open caller utterance so the two play one after another.
    this.speakEnd();
    const utterance = new Utterance(eventId, this.sampleRate, 'text');
    utterance.abort = new AbortController();
    if (cue) utterance.actions.push({ kind: 'cue', atSeconds: 0, payload: { name: cue, intensity: 0.8 }, eventId });
    this.queue.push(utterance);
    if (tagged.unknown.length) {
      this.error('invalid_request_error', `unknown expression tag(s) ${tagged.unknown.map((t) => `[${t}]`).join(', ')} were not spoken; known: see docs`, eventId);
    }
    void this.synthesise(utterance, tagged);
    this.wake();
  }

  private async synthesise(utterance: Utterance, tagged: ReturnType<typeof parseExpressionTags>): Promise<void> {
    const signal = utterance.abort!.signal;
    let produced = 0;
    let spokenChars = 0;
    const totalChars = Math.max(1, tagged.spoken.length);
    const tagsLeft = [...tagged.tags];
    try {
      if (!tagged.spoken) throw new Error('nothing to say once expression tags are removed');
      for await (const piece of this.speaker({ text: tagged.spoken, sampleRate: this.sampleRate, signal })) {
        if (signal.aborted) return;
        const startSeconds = produced / this.sampleRate;
        const pieceSeconds = piece.pcm.length / this.sampleRate;
        // Tags fall at their share of the text within the piece that says it.
        const pieceChars = piece.text?.length ?? totalChars;
        while (tagsLeft.length && tagsLeft[0].offset <= spokenChars + pieceChars) {
          const tag = tagsLeft.shift()!;
          const within = pieceChars ? Math.max(0, tag.offset - spokenChars) / pieceChars : 0;
          utterance.actions.push({ kind: 'cue', atSeconds: startSeconds + within * pieceSeconds, payload: { name: tag.cue, intensity: tag.intensity }, eventId: utterance.id });
        }
        spokenChars += pieceChars;
        produced += piece.pcm.length;
        if (this.queue.queuedSeconds() + pieceSeconds > MAX_QUEUED_SECONDS) {
          this.error('queue_full', `more than ${MAX_QUEUED_SECONDS} s of audio would be waiting to play`, utterance.id);
          break;
        }
        utterance.add({ pcm: piece.pcm, text: piece.text, words: piece.words });
        if (utterance.started && utterance.actions.length) this.scheduleActions(utterance);
        this.wake();
      }
    } catch (error) {
      if (signal.aborted) return;
      this.error('tts_error', `text could not be voiced: ${(error as Error).message}`, utterance.id);
    } finally {
      utterance.sealed = true;
      if (utterance.receivedSamples === 0 && !utterance.started) {
        const index = this.queue.items.indexOf(utterance);
        if (index >= 0) this.queue.items.splice(index, 1);
      }
      this.wake();
    }
  }

  /** agent.interrupt: drop everything queued, voice and lips together. */
  interrupt(eventId: string): void {
    const now = this.now();
    const current = this.queue.head?.started ? this.queue.head : undefined;
    const dropped = this.queue.clear();
    this.carry = undefined;
    let droppedSeconds = 0;
    for (const u of dropped) {
      u.abort?.abort();
      droppedSeconds += u.pendingSamples / u.sampleRate;
    }
    this.player.json({ type: 'interrupt', t: now });
    if (current) {
      const released = current.releasedSamples / current.sampleRate;
      const played = Math.min(released, Math.max(0, now - current.startedAt!));
      this.event('agent.speak_interrupted', {
        source_event_id: current.id,
        played_seconds: round3(played),
        received_seconds: round3(current.receivedSamples / current.sampleRate),
      });
    }
    this.event('agent.audio_buffer_cleared', {
      source_event_id: eventId,
      dropped_utterances: dropped.map((u) => u.id),
      dropped_seconds: round3(droppedSeconds),
    });
    this.stageTimers = this.stageTimers.filter((s) => s.action.kind !== 'cue');
    this.lastEnd = now;
    this.setState(this.restingState());
  }

  startListening(): void {
    this.listening = true;
    if (this.state === 'idle') this.setState('listening');
  }

  stopListening(): void {
    this.listening = false;
    if (this.state === 'listening') this.setState('idle');
  }

  // ---------------------------------------------------------------- stage and cues

  /** agent.cue, stage.camera, stage.backdrop: now, or at_seconds into the current or next utterance. */
  action(action: TimedAction, atSeconds: number | undefined): void {
    if (atSeconds === undefined) {
      this.apply(action, this.now());
      return;
    }
    const target = this.queue.target();
    if (target) {
      target.actions.push(action);
      if (target.started) this.scheduleActions(target);
    } else {
      this.pendingForNext.push(action);
    }
    this.wake();
  }

  private pendingForNext: TimedAction[] = [];

  /** Gives an utterance's timed actions their session time, tells the player at once, applies them on time. */
  private scheduleActions(utterance: Utterance): void {
    for (const action of utterance.actions.splice(0)) {
      const at = Math.max(utterance.startedAt! + action.atSeconds, this.now());
      if (action.kind === 'cue') {
        this.player.json({ type: 'expression', t: at, name: action.payload.name, intensity: action.payload.intensity ?? 0.8 });
        this.stageTimers.push({ at, action });
      } else {
        this.stageTimers.push({ at, action });
        this.sendStageToPlayer(action, at);
      }
    }
  }

  private sendStageToPlayer(action: TimedAction, at: number): void {
    if (action.kind === 'camera') this.player.json({ type: 'camera', t: at, camera: action.payload.camera, hold: action.payload.hold ?? false });
    if (action.kind === 'backdrop') {
      const id = action.payload.backdrop as string | null;
      this.player.json({ type: 'backdrop', t: at, backdrop: id ? this.findBackdrop(id) ?? null : null });
    }
  }

  private apply(action: TimedAction, at: number, alreadySent = false): void {
    if (action.kind === 'cue') {
      if (!alreadySent) this.player.json({ type: 'expression', t: at, name: action.payload.name, intensity: action.payload.intensity ?? 0.8 });
      return;
    }
    if (action.kind === 'camera') {
      const camera = action.payload.camera as Stage['camera'] | 'auto';
      if (camera === 'auto') this.stage = { ...this.stage, camera_mode: 'auto', hold: Boolean(action.payload.hold) };
      else this.stage = { ...this.stage, camera, camera_mode: 'manual', hold: Boolean(action.payload.hold) };
    } else {
      this.stage = { ...this.stage, backdrop: action.payload.backdrop as string | null };
    }
    if (!alreadySent) this.sendStageToPlayer(action, at);
    this.event('stage.updated', { source_event_id: action.eventId, stage: this.stageView() });
  }

  stageView() {
    const backdrop = this.stage.backdrop ? this.findBackdrop(this.stage.backdrop) : undefined;
    return { ...this.stage, backdrop_name: backdrop?.name ?? null };
  }

  // ---------------------------------------------------------------- playback clock

  /** Releases every frame that is due, emitting events as audio leaves. Called by the hub's timer. */
  tick(now = this.now()): void {
    if (this.stageTimers.length) this.runStageTimers(now);
    for (;;) {
      const u = this.queue.head;
      if (!u) break;
      if (!u.started) {
        if (u.pendingSamples === 0) {
          // A sealed utterance with no audio (speak_end alone) is simply dropped.
          if (u.sealed && (u.source === 'audio' || u.receivedSamples === 0)) {
            this.queue.shift();
            continue;
          }
          break;
        }
        this.begin(u, now);
      }
      this.release(u, now);
      if (u.drained) {
        if (now + 1e-4 < u.cursor) break; // its last audio is still leaving
        this.finish(u);
        continue;
      }
      if (u.pendingSamples === 0 && !u.sealed) {
        if (!u.starving && now > u.cursor + STARVATION_GRACE) {
          u.starving = true;
          this.event('warning', { warning: { type: 'audio_starvation', message: 'audio arrives slower than it plays; the avatar paused mid-utterance', source_event_id: u.id } });
        }
      }
      break;
    }
  }

  private begin(u: Utterance, now: number): void {
    // Back-to-back utterances continue gaplessly from the previous end if that is still recent.
    const start = now - this.lastEnd < 0.03 ? Math.min(now, this.lastEnd) : now;
    u.startedAt = start;
    u.cursor = start;
    if (this.pendingForNext.length) u.actions.push(...this.pendingForNext.splice(0));
    this.setState('talking');
    this.event('agent.speak_started', { source_event_id: u.id, at: round3(start) });
    this.scheduleActions(u);
  }

  private release(u: Utterance, now: number): void {
    const maxSamples = Math.round(this.sampleRate * FRAME_MAX_SECONDS);
    while (u.pendingSamples > 0 && u.cursor <= now + 1e-4) {
      if (u.starving || u.cursor < now - STARVATION_GRACE) {
        // Audio came back after running dry: continue from now rather than play in the past.
        u.starving = false;
        u.cursor = Math.max(u.cursor, now);
      }
      const frame = u.takeFrame(maxSamples);
      if (!frame) break;
      const track = this.queue.ensureTrack(frame.piece, u.sampleRate);
      this.player.frame(u.id, u.cursor, frame.piece.pcm, frame.offset, frame.length, u.sampleRate, track);
      if (frame.piece.arrivedAt !== undefined) {
        const dueAt = this.origin + u.cursor * 1000;
        realtimeMetrics.relayDelay.observe(performance.now() - Math.max(frame.piece.arrivedAt, dueAt));
      }
      realtimeMetrics.framesRelayed++;
      u.cursor += frame.length / u.sampleRate;
    }
  }

  private finish(u: Utterance): void {
    this.queue.shift();
    this.lastEnd = u.cursor;
    this.player.json({ type: 'utterance_end', t: u.cursor, utterance: u.id });
    this.event('agent.speak_ended', {
      source_event_id: u.id,
      duration_seconds: round3(u.releasedSamples / u.sampleRate),
      at: round3(u.cursor),
    });
    this.setState(this.restingState());
  }

  private runStageTimers(now: number): void {
    const due = this.stageTimers.filter((s) => s.at <= now + 1e-4);
    if (!due.length) return;
    this.stageTimers = this.stageTimers.filter((s) => s.at > now + 1e-4);
    for (const { at, action } of due) this.apply(action, at, true);
  }

  /** The session ended: stop everything. */
  close(): void {
    for (const u of this.queue.clear()) u.abort?.abort();
    this.stageTimers = [];
  }
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;
