/**
 * One live session's real-time path: commands in → utterance queue → playback clock → lip-sync →
 * player out. The clock (`tick`) is driven by the hub's shared timer; audio leaves toward the
 * player paced at real time whatever speed it arrived at, and every event about an utterance is
 * emitted at the moment its audio leaves.
 */
import crypto from 'node:crypto';
import { Utterance, UtteranceQueue, type TimedAction } from './utterance-queue.js';
import { TimedActions } from './timed-actions.js';
import { PlayerOut } from './player-out.js';
import { Slab } from './slab.js';
import { parseExpressionTags } from './expression-tags.js';
import {
  CUES,
  MAX_QUEUED_SECONDS,
  MAX_FRAME_BYTES,
  MAX_TIMED_ACTIONS,
  MAX_QUEUED_UTTERANCES,
  MAX_QUEUED_PIECES,
  MAX_QUEUED_TEXT_CHARS,
  type AvatarState,
  type ErrorType,
  type RenderCommand,
  type RenderEvent,
} from './protocol.js';
import type { Backdrop } from '../catalog/backdrops.js';
import { realtimeMetrics } from './metrics.js';
import type { PlayerState } from './player-protocol.js';
import type { SpeechPiece } from '../speech/piece.js';

/** Longest audio frame sent to the player: short enough for lip-sync, long enough to be cheap. */
export const FRAME_MAX_SECONDS = 0.04;
/** An unsealed utterance whose next audio is this late is starving. */
const STARVATION_GRACE = 0.06;
/** Audio leaving this late behind its due time (the node could not keep time) earns a warning. */
export const LATE_WARNING_SECONDS = 0.05;
const EMPTY_PCM = new Int16Array(0);

/**
 * When this process's event loop last kept time (performance.now() of the hub's last tick that was
 * on time). Audio that reached the socket during a stall of the loop is read only after it: a
 * session uses this to tell the node's lateness from a caller that let an utterance run dry.
 */
export interface LoopState {
  responsiveAt: number;
}

export interface Stage {
  camera: 'far' | 'mid' | 'close';
  camera_mode: 'auto' | 'manual';
  hold: boolean;
  backdrop: string | null;
  cameras: Array<'far' | 'mid' | 'close'>;
  face_light: number;
}

export interface SpeechRequest {
  /** Whole text, or (conversation mode) an answer's text as it streams. */
  text: string | AsyncIterable<string>;
  sampleRate: number;
  signal: AbortSignal;
}
/** Voices text for agent.speak_text (the speech layer, bound to the session's voice). */
export type Speaker = (request: SpeechRequest) => AsyncIterable<SpeechPiece>;

/** What the agent is to say (RealtimeSession.speak, the one entry for speech). */
export interface SpeechInput {
  /** The utterance's id (the render caller's event id, or one the conversation makes). */
  eventId: string;
  /** Whole text (expression tags allowed), or an answer's text as it streams. */
  text: string | AsyncIterable<string>;
  /** An expression cue at the utterance's start (agent.speak_text's `cue`). */
  cue?: string;
  /** The voice (default: the session's; a conversation passes the voice of the visitor's language). */
  speaker?: Speaker;
}

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
  /** Shown on the page between a visitor's turn and the answer's first audio (conversation mode). */
  private thinking = false;
  stage: Stage;
  /** Receives events for the caller (the render socket, when one is attached). */
  emit: (event: RenderEvent) => void = () => {};
  /** Called when the session has work for the clock (the hub adds it to its active set). */
  wake: () => void = () => {};
  audioStarted = false;
  /** Session time before which a tick of the shared clock has nothing to do (see `nextDue`). */
  dueAt = 0;
  /**
   * Conversation mode's taps (conversation/live.ts): every audio frame as it leaves toward the
   * player (the echo guard, first-audio timing), and every change of the avatar's state. The
   * samples are valid during the call only: their memory is reused once the piece has played.
   */
  onAudioOut?: (utteranceId: string, pcm: Int16Array, sampleRate: number, t: number) => void;
  onStateChange?: (state: AvatarState) => void;
  /** The session runs on the process's real clock (not a test's), so the hub's loop state applies. */
  readonly realClock: boolean;
  /** When the event loop last kept time (the hub's); never stalled for a session outside a hub. */
  loop: LoopState = { responsiveAt: Infinity };
  private listening = false;
  private carry: number | undefined;
  private lastEnd = 0;
  /** Timed actions of started utterances, by session time. */
  private readonly timed = new TimedActions();
  /** Timed actions sent while nothing is queued: they go to the next utterance. */
  private pendingForNext: TimedAction[] = [];
  /** One timer per session, for a timed action due while no audio plays (the hub ticks only audio). */
  private actionTimer?: NodeJS.Timeout;
  private actionTimerAt = Infinity;
  private closed = false;
  /** Session time the agent's voice was paused at (`pause`), while it is. */
  private pausedAt?: number;
  /** Memory for the caller's audio as it is queued (slab.ts; pieces give it back as they finish playing). */
  private readonly pcmSlab = new Slab(8 * 1024);
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
    this.realClock = setup.now === undefined;
  }

  /**
   * performance.now() of session time `t` (seconds), where the session runs on the real clock: when
   * a frame stamped `t` is due, which is when the page plays it (less its fixed playout delay).
   * Undefined on a test's clock.
   */
  performanceTimeOf(t: number): number | undefined {
    return this.realClock ? this.origin + t * 1000 : undefined;
  }

  now(): number {
    return this.clock();
  }

  /**
   * Whether the hub's clock should keep ticking this session: audio queued, or a timed action due
   * within a tick. Actions due later wait on the session's own timer instead, so a cue set an hour
   * ahead costs nothing until then.
   */
  get busy(): boolean {
    return this.queue.items.length > 0 || this.timed.next <= this.now() + 0.01;
  }

  /** Timed actions waiting, wherever they wait. */
  waitingActions(): number {
    let count = this.timed.size + this.pendingForNext.length;
    for (const u of this.queue.items) count += u.actions.length;
    return count;
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
    this.thinking = false;
    this.event('agent.state_updated', { previous_state: previous, new_state: next });
    this.player.json({ type: 'state', t: this.now(), state: next });
    this.onStateChange?.(next);
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
    const waiting = this.queue.waiting();
    if (waiting.seconds + incomingSeconds > MAX_QUEUED_SECONDS) {
      this.error('queue_full', `more than ${MAX_QUEUED_SECONDS} s of audio would be waiting to play; send more when it has played`, eventId);
      return;
    }
    if (samples > 0 || text) {
      const refusal = this.admit(waiting, 1, text?.length ?? 0, this.queue.open ? 0 : 1);
      if (refusal) {
        this.error('queue_full', refusal, eventId);
        return;
      }
    }
    this.carry = carry;
    // Copied into aligned memory from the session's slab (the incoming buffer may be odd-aligned,
    // and a slice of it would keep the socket's whole read buffer alive).
    let pcm = EMPTY_PCM;
    if (samples > 0) {
      const slot = this.pcmSlab.take(samples * 2);
      pcm = new Int16Array(slot.buffer, slot.offset, samples);
      new Uint8Array(slot.buffer, slot.offset, samples * 2).set(data.subarray(0, samples * 2));
    }
    let utterance = this.queue.open;
    if (!utterance) {
      utterance = new Utterance(eventId ?? `utt_${crypto.randomUUID()}`, this.sampleRate, 'audio');
      this.queue.open = utterance;
      this.queue.push(utterance);
    }
    if (samples > 0 && utterance.started && utterance.pendingSamples === 0 && !utterance.sealed && this.callerLet(utterance, this.now())) {
      // It ran dry (the hub may not have ticked to notice): continue from now, not in the past.
      this.starved(utterance);
    }
    if (samples > 0 || text) utterance.add({ pcm, text, arrivedAt: performance.now(), slab: samples > 0 ? this.pcmSlab : undefined });
    if (samples > 0) this.audioStarted = true;
    this.wake();
  }

  /** Why more cannot be queued (pieces, characters, utterances past their caps), or undefined. */
  private admit(waiting: ReturnType<UtteranceQueue['waiting']>, pieces: number, chars: number, utterances: number): string | undefined {
    if (utterances && this.queue.items.length + utterances > MAX_QUEUED_UTTERANCES)
      return `more than ${MAX_QUEUED_UTTERANCES} utterances would be waiting to play`;
    if (waiting.pieces + pieces > MAX_QUEUED_PIECES) return `more than ${MAX_QUEUED_PIECES} pieces would be waiting to play; send larger pieces or wait`;
    if (waiting.chars + chars > MAX_QUEUED_TEXT_CHARS) return `more than ${MAX_QUEUED_TEXT_CHARS} characters of text would be waiting to play`;
    return undefined;
  }

  /**
   * Whether the caller let a playing utterance run dry: its next audio is more than the grace late
   * and the event loop has read its sockets since then without finding it. When this process's own
   * loop stalled past that moment, the audio may have been waiting unread in the socket: the node
   * was late, not the caller, so the clock catches up (playback_late) instead of pausing the
   * utterance and shifting the rest of it.
   */
  private callerLet(u: Utterance, now: number): boolean {
    const deadline = u.cursor + STARVATION_GRACE;
    return now > deadline && this.loop.responsiveAt >= this.origin + deadline * 1000;
  }

  private starved(u: Utterance): void {
    if (!u.starving) {
      u.starving = true;
      this.event('warning', {
        warning: { type: 'audio_starvation', message: 'audio arrives slower than it plays; the avatar paused mid-utterance', source_event_id: u.id },
      });
    }
  }

  /** Seals the open utterance: it plays to its end, and the next audio opens a new one. */
  speakEnd(): void {
    const open = this.queue.open;
    if (open) open.sealed = true;
    this.queue.open = undefined;
    this.carry = undefined;
    this.wake();
  }

  /**
   * Text for the agent to say: the one way speech (text to be voiced) enters a session, whoever
   * sends it (agent.speak_text from the render socket or the commands route, an agent preview's
   * welcome, a conversation's answers and words of its own). It is queued in order with caller
   * audio as one utterance and voiced by the speech layer piece by piece. Returns the utterance, or
   * undefined when the queue's caps refuse it (a queue_full error event says why).
   *
   * - Whole text: expression tags become cues at their place, unknown ones are reported, and the
   *   queue's caps on text apply.
   * - Text as it streams (conversation mode, an answer as the engine writes it): spoken as it comes,
   *   sentence by sentence; the conversation bounds what it sends.
   */
  speak(input: SpeechInput & { text: AsyncIterable<string> }): Utterance;
  speak(input: SpeechInput): Utterance | undefined;
  speak(input: SpeechInput): Utterance | undefined {
    const { eventId, cue, speaker = this.speaker } = input;
    const tagged =
      typeof input.text === 'string'
        ? parseExpressionTags(input.text)
        : { spoken: input.text, tags: [] as ReturnType<typeof parseExpressionTags>['tags'], unknown: [] };
    if (typeof tagged.spoken === 'string') {
      const refusal = this.admit(this.queue.waiting(), 0, tagged.spoken.length, 1);
      if (refusal) {
        this.error('queue_full', refusal, eventId);
        return undefined;
      }
    }
    // Text closes any open caller utterance so the two play one after another.
    this.speakEnd();
    const utterance = new Utterance(eventId, this.sampleRate, 'text');
    utterance.abort = new AbortController();
    if (typeof tagged.spoken === 'string') utterance.waitingChars = tagged.spoken.length;
    if (cue) utterance.actions.push({ kind: 'cue', atSeconds: 0, payload: { name: cue, intensity: 0.8 }, eventId });
    this.queue.push(utterance);
    if (tagged.unknown.length) {
      this.error(
        'invalid_request_error',
        `unknown expression tag(s) ${tagged.unknown.map((t) => `[${t}]`).join(', ')} were not spoken; known tags: ${CUES.map((c) => `[${c}]`).join(', ')}`,
        eventId,
      );
    }
    void this.synthesise(utterance, tagged, speaker);
    this.wake();
    return utterance;
  }

  /**
   * Ready audio (a filler) that plays before any utterance that has not started yet, so a thinking
   * sound is heard while the answer is still being prepared.
   */
  playBeforePending(pcm: Int16Array, eventId: string, text?: string): void {
    const utterance = new Utterance(eventId, this.sampleRate, 'audio');
    utterance.add({ pcm, text, arrivedAt: performance.now() });
    utterance.sealed = true;
    const index = this.queue.items.findIndex((u) => !u.started && u !== this.queue.open);
    if (index < 0) this.queue.push(utterance);
    else this.queue.items.splice(index, 0, utterance);
    this.wake();
  }

  private async synthesise(
    utterance: Utterance,
    tagged: { spoken: string | AsyncIterable<string>; tags: ReturnType<typeof parseExpressionTags>['tags']; unknown: string[] },
    speaker: Speaker = this.speaker,
  ): Promise<void> {
    const signal = utterance.abort!.signal;
    let produced = 0;
    let spokenChars = 0;
    const totalChars = typeof tagged.spoken === 'string' ? Math.max(1, tagged.spoken.length) : 1;
    const tagsLeft = [...tagged.tags];
    let tagsDropped = 0;
    try {
      if (!tagged.spoken) throw new Error('nothing to say once expression tags are removed');
      for await (const piece of speaker({ text: tagged.spoken, sampleRate: this.sampleRate, signal })) {
        if (signal.aborted) return;
        const startSeconds = produced / this.sampleRate;
        const pieceSeconds = piece.pcm.length / this.sampleRate;
        // Tags fall at their share of the text within the piece that says it.
        const pieceChars = piece.text?.length ?? totalChars;
        while (tagsLeft.length && tagsLeft[0].offset <= spokenChars + pieceChars) {
          const tag = tagsLeft.shift()!;
          const within = pieceChars ? Math.max(0, tag.offset - spokenChars) / pieceChars : 0;
          if (this.waitingActions() >= MAX_TIMED_ACTIONS) {
            tagsDropped++;
            continue;
          }
          utterance.actions.push({
            kind: 'cue',
            atSeconds: startSeconds + within * pieceSeconds,
            payload: { name: tag.cue, intensity: tag.intensity },
            eventId: utterance.id,
          });
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
      if (tagsDropped)
        this.error(
          'queue_full',
          `${tagsDropped} expression tag(s) were not applied: more than ${MAX_TIMED_ACTIONS} timed actions would be waiting`,
          utterance.id,
        );
      utterance.sealed = true;
      utterance.waitingChars = 0;
      if (utterance.receivedSamples === 0 && !utterance.started) {
        const index = this.queue.items.indexOf(utterance);
        if (index >= 0) this.queue.items.splice(index, 1);
      }
      this.wake();
    }
  }

  /** Whether the agent's voice is paused (`pause`) and waits for `resume` or `interrupt`. */
  get paused(): boolean {
    return this.pausedAt !== undefined;
  }

  /**
   * Holds the agent's voice where it is (conversation mode: the visitor may be speaking over it):
   * the clock stops releasing the playing utterance, the page stops its audio and closes the mouth
   * (`pause`), and everything stays queued for `resume` or `interrupt`. Only a voice that is playing
   * pauses; returns whether it did.
   */
  pause(): boolean {
    if (this.closed || this.pausedAt !== undefined || !this.queue.head?.started) return false;
    const now = this.now();
    this.pausedAt = now;
    this.player.json({ type: 'pause', t: now });
    this.dueAt = Infinity;
    return true;
  }

  /**
   * The voice goes on exactly where it paused: the playing utterance, its timed actions and the
   * page's kept audio all move later by the length of the pause, so nothing is lost or said twice.
   */
  resume(): void {
    const pausedAt = this.pausedAt;
    if (pausedAt === undefined) return;
    this.pausedAt = undefined;
    const now = this.now();
    const shift = Math.max(0, now - pausedAt);
    const head = this.queue.head;
    if (head?.started) {
      head.cursor += shift;
      head.startedAt! += shift;
    }
    this.lastEnd += shift;
    this.timed.shift(shift);
    this.player.json({ type: 'resume', t: now, shift });
    this.dueAt = 0;
    this.wake();
  }

  /** agent.interrupt: drop everything queued, voice and lips together. */
  interrupt(eventId: string): void {
    const now = this.now();
    // A paused voice was last heard when it paused.
    const heardUntil = this.pausedAt ?? now;
    this.pausedAt = undefined;
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
      const played = Math.min(released, Math.max(0, heardUntil - current.startedAt!));
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
    // Every timed action goes with the audio it was timed against, camera cuts included.
    this.clearTimedActions();
    this.lastEnd = now;
    this.setState(this.restingState());
    // The next tick finds nothing to play and takes the session off the clock.
    this.dueAt = 0;
  }

  /** What the page shows: the render state, or `thinking` while a conversation's answer is prepared. */
  get shownState(): PlayerState {
    return this.thinking ? 'thinking' : this.state;
  }

  /**
   * The page shows the agent thinking (conversation mode) until it talks or `stopThinking`. Only
   * the page sees it: render clients' `agent.state_updated` knows idle, listening and talking.
   */
  showThinking(): void {
    if (this.thinking || this.state === 'talking') return;
    this.thinking = true;
    this.player.json({ type: 'state', t: this.now(), state: 'thinking' });
  }

  stopThinking(): void {
    if (!this.thinking) return;
    this.thinking = false;
    this.player.json({ type: 'state', t: this.now(), state: this.state });
  }

  /** What the recogniser heard the visitor say so far (`final`: the turn is complete), as the page's live caption. */
  showVisitorWords(text: string, final: boolean): void {
    this.player.json({ type: 'visitor_transcript', text, final });
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
    if (this.waitingActions() >= MAX_TIMED_ACTIONS) {
      this.error('queue_full', `more than ${MAX_TIMED_ACTIONS} timed actions (at_seconds) would be waiting; send them closer to their time`, action.eventId);
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

  /**
   * Gives a started utterance's timed actions their session time. Each goes to the player and takes
   * effect when it falls due (like audio, which also leaves when due), so a thousand of them never
   * leave in one burst.
   */
  private scheduleActions(utterance: Utterance): void {
    const now = this.now();
    for (const action of utterance.actions) this.timed.add(Math.max(utterance.startedAt! + action.atSeconds, now), action);
    utterance.actions.length = 0;
    this.armActionTimer();
  }

  /** Arms the session's one timer for its earliest timed action when the hub's clock will not tick it. */
  private armActionTimer(): void {
    if (this.closed || this.queue.items.length) return;
    const next = this.timed.next;
    if (next === Infinity || (this.actionTimer && this.actionTimerAt === next)) return;
    if (this.actionTimer) clearTimeout(this.actionTimer);
    this.actionTimerAt = next;
    this.actionTimer = setTimeout(
      () => {
        this.actionTimer = undefined;
        this.actionTimerAt = Infinity;
        this.wake();
      },
      Math.max(0, (next - this.now()) * 1000),
    );
    this.actionTimer.unref?.();
  }

  private clearTimedActions(): void {
    this.timed.clear();
    this.pendingForNext = [];
    if (this.actionTimer) clearTimeout(this.actionTimer);
    this.actionTimer = undefined;
    this.actionTimerAt = Infinity;
  }

  private sendStageToPlayer(action: TimedAction, at: number): void {
    if (action.kind === 'camera') this.player.json({ type: 'camera', t: at, camera: action.payload.camera, hold: action.payload.hold });
    if (action.kind === 'backdrop') {
      const id = action.payload.backdrop;
      this.player.json({ type: 'backdrop', t: at, backdrop: id ? (this.findBackdrop(id) ?? null) : null });
    }
  }

  private apply(action: TimedAction, at: number): void {
    if (action.kind === 'cue') {
      this.player.json({ type: 'expression', t: at, name: action.payload.name, intensity: action.payload.intensity });
      return;
    }
    if (action.kind === 'camera') {
      const camera = action.payload.camera;
      if (camera === 'auto') this.stage = { ...this.stage, camera_mode: 'auto', hold: action.payload.hold };
      else this.stage = { ...this.stage, camera, camera_mode: 'manual', hold: action.payload.hold };
    } else {
      this.stage = { ...this.stage, backdrop: action.payload.backdrop };
    }
    this.sendStageToPlayer(action, at);
    this.event('stage.updated', { source_event_id: action.eventId, stage: this.stageView() });
  }

  stageView() {
    const backdrop = this.stage.backdrop ? this.findBackdrop(this.stage.backdrop) : undefined;
    return { ...this.stage, backdrop_name: backdrop?.name ?? null };
  }

  // ---------------------------------------------------------------- playback clock

  /** Releases every frame that is due, emitting events as audio leaves. Called by the hub's timer. */
  tick(now = this.now()): void {
    if (this.pausedAt !== undefined) {
      // Held: nothing leaves and no timed action falls due until `resume` (which wakes the clock).
      this.dueAt = Infinity;
      return;
    }
    if (this.timed.size) this.runTimedActions(now);
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
      if (u.pendingSamples === 0 && !u.sealed && this.callerLet(u, now)) this.starved(u);
      break;
    }
    // Actions due now (those of an utterance that just began included) take effect in this tick.
    if (this.timed.size) this.runTimedActions(now);
    if (!this.queue.items.length && this.timed.size) this.armActionTimer();
    this.dueAt = this.nextDue();
  }

  /**
   * Session time of the next tick that can change anything: the playing utterance's next frame
   * (or its end), its starvation check, the next timed action. Audio, text and commands arriving
   * call `wake`, which ticks at once, so a session waiting for them needs no tick before.
   */
  private nextDue(): number {
    let due = this.timed.next;
    const u = this.queue.head;
    if (u?.started) {
      if (u.pendingSamples > 0 || u.sealed) due = Math.min(due, u.cursor);
      else if (!u.starving) due = Math.min(due, u.cursor + STARVATION_GRACE);
    }
    return due;
  }

  private begin(u: Utterance, now: number): void {
    // Back-to-back utterances continue gaplessly from the previous end if that is still recent.
    const start = now - this.lastEnd < 0.03 ? Math.min(now, this.lastEnd) : now;
    u.startedAt = start;
    u.cursor = start;
    // Concatenated, not spread into push(): a spread of many thousands overflows the call stack.
    if (this.pendingForNext.length) {
      for (const action of this.pendingForNext) u.actions.push(action);
      this.pendingForNext = [];
    }
    this.setState('talking');
    this.event('agent.speak_started', { source_event_id: u.id, at: round3(start) });
    this.scheduleActions(u);
  }

  private release(u: Utterance, now: number): void {
    const maxSamples = Math.round(this.sampleRate * FRAME_MAX_SECONDS);
    while (u.pendingSamples > 0 && u.cursor <= now + 1e-4) {
      if (u.starving) {
        // Audio came back after running dry: continue from now rather than play in the past.
        u.starving = false;
        u.cursor = Math.max(u.cursor, now);
      } else if (now - u.cursor > LATE_WARNING_SECONDS && !u.lateWarned) {
        // The clock ticked late (the node is overloaded): everything due leaves at once and the
        // player's schedule absorbs it; the caller hears about it once per utterance.
        u.lateWarned = true;
        realtimeMetrics.lateUtterances++;
        this.event('warning', {
          warning: {
            type: 'playback_late',
            message: `the server could not keep time: audio left ${Math.round((now - u.cursor) * 1000)} ms late (the node is overloaded); it caught up at once`,
            late_ms: Math.round((now - u.cursor) * 1000),
            source_event_id: u.id,
          },
        });
      }
      const frame = u.takeFrame(maxSamples);
      if (!frame) break;
      const track = this.queue.ensureTrack(frame.piece, u.sampleRate);
      if (frame.offset === 0 && frame.piece.text) this.player.json({ type: 'caption', t: u.cursor, utterance: u.id, text: frame.piece.text });
      this.player.frame(u.id, u.cursor, frame.piece.pcm, frame.offset, frame.length, u.sampleRate, track);
      this.onAudioOut?.(u.id, frame.piece.pcm.subarray(frame.offset, frame.offset + frame.length), u.sampleRate, u.cursor);
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

  private runTimedActions(now: number): void {
    for (let due = this.timed.takeDue(now + 1e-4); due; due = this.timed.takeDue(now + 1e-4)) this.apply(due.action, due.at);
  }

  /**
   * The session ended: stop everything, every timer included. As after agent.interrupt, the caller
   * first hears that the playing utterance was cut (speak_interrupted) and queued audio dropped
   * (audio_buffer_cleared, when there was any), before the socket closes with 4001.
   */
  close(): void {
    const now = this.now();
    const current = this.queue.head?.started ? this.queue.head : undefined;
    const queued = [...this.queue.items];
    const droppedSeconds = queued.reduce((sum, u) => sum + u.pendingSamples / u.sampleRate, 0);
    if (current) {
      const played = Math.min(current.releasedSamples / current.sampleRate, Math.max(0, now - current.startedAt!));
      this.event('agent.speak_interrupted', {
        source_event_id: current.id,
        played_seconds: round3(played),
        received_seconds: round3(current.receivedSamples / current.sampleRate),
        reason: 'session_ended',
      });
    }
    if (droppedSeconds > 0) {
      this.event('agent.audio_buffer_cleared', {
        dropped_utterances: queued.map((u) => u.id),
        dropped_seconds: round3(droppedSeconds),
        reason: 'session_ended',
      });
    }
    this.closed = true;
    this.reset();
  }

  /** Drops everything queued and every timer (after a fault; close() when the session ends). */
  reset(): void {
    this.pausedAt = undefined;
    for (const u of this.queue.clear()) u.abort?.abort();
    this.carry = undefined;
    this.clearTimedActions();
    this.dueAt = 0;
  }
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;
