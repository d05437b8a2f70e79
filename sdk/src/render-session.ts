/**
 * RenderSession: a client for a render-mode session's WebSocket (`ws_url`), in browsers and Node.
 *
 * - Every command resolves when the server has taken it and rejects when it refused it: after a
 *   command the SDK sends `stage.get`, and the socket handles messages in order, so the answering
 *   `stage.updated` means everything before it was processed; an `error` event naming the
 *   command's event_id before that means it was refused.
 * - Back-pressure: audio (and text) refused with `queue_full` is sent again once some of the queue
 *   has played; speak() resolves only when all its audio was accepted. Nothing is dropped silently.
 * - A closed or refused socket rejects every waiting call (RenderSocketClosedError); connecting
 *   has a timeout. Close codes 1011/1012 (and a lost connection) reconnect automatically within
 *   the protocol's rules; 4xxx codes are final.
 */
import { audioChunks, type AudioSource } from './audio.js';
import { Emitter } from './emitter.js';
import { RenderAckTimeoutError, RenderCommandError, RenderConnectTimeoutError, RenderSocketClosedError, SpeakInterruptedError } from './errors.js';
import {
  CloseCodes,
  DEFAULT_SAMPLE_RATE,
  isReconnectable,
  type CameraChoice,
  type Cue,
  type RenderCommand,
  type RenderEvent,
  type RenderEventOf,
  type RenderEventType,
  type SampleRate,
  type Stage,
} from './protocol.js';

/** The WebSocket API the session needs: the browser's, Node 22's global, or the `ws` package's. */
export interface WebSocketLike {
  binaryType: string;
  readonly readyState: number;
  send(data: string | ArrayBufferLike | ArrayBufferView): void;
  close(code?: number, reason?: string): void;
  onopen: ((event: any) => void) | null;
  // Handlers take `any`: the browser's, undici's and ws's event classes differ; only `data`, `code` and `reason` are read.
  onmessage: ((event: any) => void) | null;
  onclose: ((event: any) => void) | null;
  onerror: ((event: any) => void) | null;
}
/** Any WebSocket class taking the URL first (its other constructor arguments are not used). */
export type WebSocketConstructor = new (url: string, ...rest: any[]) => WebSocketLike;

export interface ReconnectOptions {
  /** Attempts after a reconnectable close before giving up (default 5). */
  attempts?: number;
  /** First delay, doubled each attempt (default 250 ms). */
  delayMs?: number;
  /** Longest delay (default 5000 ms). */
  maxDelayMs?: number;
}

export interface RenderSessionOptions {
  /** A WebSocket class; default the global one (browsers, Node 22+). On Node 20 pass `WebSocket` from the `ws` package. */
  WebSocket?: WebSocketConstructor;
  /** The audio rate speak() sends (default 24000); appended to ws_url as `sample_rate`. */
  sampleRate?: SampleRate;
  /** How long to wait for `connected` (default 10 s); past it connect() rejects. */
  connectTimeoutMs?: number;
  /** How long a command may wait for the server's acknowledgement (default 30 s). */
  ackTimeoutMs?: number;
  /** Automatic reconnection after 1011/1012 or a lost connection; `false` to turn off. */
  reconnect?: ReconnectOptions | false;
  /** Seconds of audio per agent.speak message (default 0.5). */
  pieceSeconds?: number;
  /** How long to wait before offering audio again after a `queue_full` when nothing finished playing meanwhile (default 1000 ms). */
  queueRetryMs?: number;
}

export interface SpeakOptions {
  /** Names the utterance: every event about it carries this as `source_event_id` (default: generated). */
  eventId?: string;
  /** What the audio says (selects expressions; may carry tags like `[smile]`). */
  text?: string;
  /** Seal the utterance after this audio (default true); false to continue it with the next speak() (which then ignores its own eventId). */
  end?: boolean;
}

/** How an utterance finished playing. */
export type UtteranceOutcome = 'ended' | 'interrupted';

/** An accepted utterance: its id, and a way to wait until it has played. */
export class Utterance {
  private outcome?: UtteranceOutcome;
  private failure?: Error;
  private waiters: Array<{ resolve: (o: UtteranceOutcome) => void; reject: (e: Error) => void }> = [];

  constructor(readonly id: string) {}

  /** Resolves when the utterance's last audio left (`ended`) or it was cut or dropped (`interrupted`); rejects on tts_error or a closed socket. */
  played(): Promise<UtteranceOutcome> {
    if (this.outcome) return Promise.resolve(this.outcome);
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  /** @internal */
  settle(outcome: UtteranceOutcome | Error): void {
    if (this.outcome || this.failure) return;
    if (outcome instanceof Error) this.failure = outcome;
    else this.outcome = outcome;
    for (const w of this.waiters.splice(0)) outcome instanceof Error ? w.reject(outcome) : w.resolve(outcome);
  }

  /** @internal */
  get settled(): boolean {
    return this.outcome !== undefined || this.failure !== undefined;
  }
}

/** What a RenderSession emits: each socket event by its type, `event` for all of them, and the connection's life. */
export type RenderSessionEvents = { [T in RenderEventType]: RenderEventOf<T> } & {
  /** Every event from the socket. */
  event: RenderEvent;
  /** A command's audio or text was refused with queue_full; the SDK waits and sends it again. */
  backpressure: { sourceEventId: string; message: string };
  /** The socket closed with a reconnectable code; a new connection is being tried. */
  reconnecting: { code: number; reason: string; attempt: number };
  /** Connected again after a reconnectable close. */
  reconnected: { attempts: number };
  /** Closed for good (a final close code, close(), or reconnection gave up). */
  close: { code: number; reason: string };
};

type State = 'connecting' | 'open' | 'reconnecting' | 'closed';
interface Pending {
  resolve: (event?: RenderEvent) => void;
  reject: (error: Error) => void;
  timer: ReturnType<typeof setTimeout>;
  commandType: string;
}

let counter = 0;
const newId = (prefix: string) => `${prefix}_${Date.now().toString(36)}${(counter++).toString(36)}${Math.random().toString(36).slice(2, 8)}`;
/** Barrier ids: the SDK's own stage.get, whose answers are not passed on as events. */
const BARRIER = 'sdk_ack_';

/**
 * A render-mode session's socket: `RenderSession.connect(ws_url)`, then speak(), speakText(),
 * cue(), camera(), backdrop(), interrupt(), startListening()/stopListening(); events through
 * on(type, listener) or waitFor(type).
 */
export class RenderSession extends Emitter<RenderSessionEvents> {
  /** The audio rate speak() sends. */
  readonly sampleRate: SampleRate;
  private socket?: WebSocketLike;
  private state: State = 'connecting';
  private readonly options: Required<Omit<RenderSessionOptions, 'reconnect' | 'sampleRate'>> & { reconnect: Required<ReconnectOptions> | false };
  /** Commands waiting for their acknowledgement (by the barrier's or command's event_id). */
  private readonly pending = new Map<string, Pending>();
  /** Refusals (`error` events) by the event_id of the refused command. */
  private readonly refusals = new Map<string, { type: string; message: string }>();
  private readonly utterances = new Map<string, Utterance>();
  /** Ordered lane for audio and text, so utterances never interleave. */
  private lane: Promise<unknown> = Promise.resolve();
  /** Bumped by interrupt(): calls made before it stop sending. */
  private generation = 0;
  private ready!: Promise<void>;
  private closeInfo?: { code: number; reason: string };
  private drainWaiters: Array<() => void> = [];
  /** The utterance a speak() with `end: false` left open, continued by the next speak(). */
  private openUtterance?: Utterance;
  /** Stops the speak() calls reading their source (interrupt, or the socket closed). */
  private readonly stoppers = new Set<(error: Error | 'interrupt') => void>();

  private constructor(
    readonly wsUrl: string,
    options: RenderSessionOptions,
  ) {
    super();
    const WS = options.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
    if (!WS) throw new TypeError('no WebSocket class: pass options.WebSocket (on Node 20, `import WebSocket from "ws"`)');
    this.sampleRate = options.sampleRate ?? DEFAULT_SAMPLE_RATE;
    this.options = {
      WebSocket: WS,
      connectTimeoutMs: options.connectTimeoutMs ?? 10_000,
      ackTimeoutMs: options.ackTimeoutMs ?? 30_000,
      pieceSeconds: options.pieceSeconds ?? 0.5,
      queueRetryMs: options.queueRetryMs ?? 1000,
      reconnect: options.reconnect === false ? false : { attempts: 5, delayMs: 250, maxDelayMs: 5000, ...options.reconnect },
    };
  }

  /**
   * Opens the socket and resolves once the server said `connected`. Rejects with
   * RenderSocketClosedError when it refuses (4003: bad token or no such session) or
   * RenderConnectTimeoutError when it does not answer in time.
   */
  static async connect(wsUrl: string, options: RenderSessionOptions = {}): Promise<RenderSession> {
    const session = new RenderSession(wsUrl, options);
    session.ready = session.open();
    await session.ready;
    return session;
  }

  /** Whether the socket is open and connected (false while reconnecting and after close). */
  get connected(): boolean {
    return this.state === 'open';
  }

  // ------------------------------------------------------------------------------------ socket

  private url(): string {
    if (this.sampleRate === DEFAULT_SAMPLE_RATE || /[?&]sample_rate=/.test(this.wsUrl)) return this.wsUrl;
    return `${this.wsUrl}${this.wsUrl.includes('?') ? '&' : '?'}sample_rate=${this.sampleRate}`;
  }

  private open(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      const socket = new this.options.WebSocket(this.url());
      socket.binaryType = 'arraybuffer';
      this.socket = socket;
      const timer = setTimeout(() => {
        if (settled) return;
        settled = true;
        socket.onclose = socket.onmessage = null;
        // Keep an error handler: closing a socket still connecting reports an error (ws throws without one).
        socket.onerror = () => {};
        try {
          socket.close();
        } catch {
          /* not open yet */
        }
        reject(new RenderConnectTimeoutError(this.options.connectTimeoutMs));
      }, this.options.connectTimeoutMs);
      socket.onerror = () => {
        /* the close event that follows says why */
      };
      socket.onmessage = (message: { data: unknown }) => {
        const event = this.parse(message.data);
        if (!event) return;
        if (!settled && event.type === 'session.state_updated') {
          settled = true;
          clearTimeout(timer);
          this.state = 'open';
          resolve();
        }
        this.handle(event);
      };
      socket.onclose = (close: { code: number; reason?: string }) => {
        clearTimeout(timer);
        if (!settled) {
          settled = true;
          reject(new RenderSocketClosedError(close.code, close.reason ?? ''));
          return;
        }
        this.closed(close.code, close.reason ?? '');
      };
    });
  }

  private parse(data: unknown): RenderEvent | undefined {
    if (typeof data !== 'string') return undefined;
    try {
      return JSON.parse(data) as RenderEvent;
    } catch {
      return undefined;
    }
  }

  /** The socket closed after it had connected: reconnect or close for good. */
  private closed(code: number, reason: string): void {
    if (this.state === 'closed') return;
    const reconnect = this.options.reconnect;
    const willReconnect = reconnect !== false && isReconnectable(code);
    this.failAll(new RenderSocketClosedError(code, reason, willReconnect));
    if (!willReconnect) {
      this.finish(code, reason);
      return;
    }
    this.state = 'reconnecting';
    this.ready = this.reconnect(code, reason, reconnect);
    // Calls wait on `ready`; its failure is theirs to see, not an unhandled rejection here.
    this.ready.catch(() => {});
  }

  private async reconnect(code: number, reason: string, options: Required<ReconnectOptions>): Promise<void> {
    let lastError: unknown;
    for (let attempt = 1; attempt <= options.attempts; attempt++) {
      this.emit('reconnecting', { code, reason, attempt });
      await new Promise((r) => setTimeout(r, Math.min(options.maxDelayMs, options.delayMs * 2 ** (attempt - 1))));
      if (this.state === 'closed') throw new RenderSocketClosedError(this.closeInfo!.code, this.closeInfo!.reason);
      try {
        await this.open();
        this.emit('reconnected', { attempts: attempt });
        return;
      } catch (error) {
        lastError = error;
        // A final refusal (4003: the session is gone) ends the attempts at once.
        if (error instanceof RenderSocketClosedError && !isReconnectable(error.code)) break;
      }
    }
    const final = lastError instanceof RenderSocketClosedError ? lastError : new RenderSocketClosedError(code, reason);
    this.finish(final.code, final.reason);
    throw final;
  }

  private finish(code: number, reason: string): void {
    this.state = 'closed';
    this.closeInfo = { code, reason };
    this.failAll(new RenderSocketClosedError(code, reason));
    this.emit('close', { code, reason });
  }

  /** Rejects every waiting call and utterance: the socket they were on is gone. */
  private failAll(error: RenderSocketClosedError): void {
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      this.pending.delete(id);
      p.reject(error);
    }
    for (const u of this.utterances.values()) u.settle(error);
    this.utterances.clear();
    for (const stop of [...this.stoppers]) stop(error);
    this.openUtterance = undefined;
    this.wakeDrainWaiters();
  }

  /** Closes the socket for good (the session itself goes on until stopped through the REST API). */
  close(): void {
    if (this.state === 'closed') return;
    const socket = this.socket;
    this.finish(1000, 'closed by the client');
    socket?.close(1000, 'closed by the client');
  }

  // ------------------------------------------------------------------------------------ events

  private handle(event: RenderEvent): void {
    const source = (event as { source_event_id?: string }).source_event_id;
    if (event.type === 'error') {
      const refused = event.error.source_event_id;
      if (refused) this.refusals.set(refused, { type: event.error.type, message: event.error.message });
      // A text utterance that could not be voiced fails its played().
      if (refused && event.error.type === 'tts_error') this.settleUtterance(refused, new RenderCommandError(event.error.type, event.error.message, refused));
    }
    if (event.type === 'stage.updated' && source?.startsWith(BARRIER)) {
      this.acknowledge(source, event);
      return;
    }
    if (event.type === 'stage.updated' && source) this.acknowledge(source, event);
    if (event.type === 'agent.speak_ended') this.settleUtterance(event.source_event_id, 'ended');
    if (event.type === 'agent.speak_interrupted') this.settleUtterance(event.source_event_id, 'interrupted');
    if (event.type === 'agent.audio_buffer_cleared') {
      for (const id of (event as { dropped_utterances?: string[] }).dropped_utterances ?? []) this.settleUtterance(id, 'interrupted');
      if (event.source_event_id) this.acknowledge(event.source_event_id, event);
    }
    if (
      event.type === 'agent.speak_ended' ||
      event.type === 'agent.speak_interrupted' ||
      event.type === 'agent.audio_buffer_cleared' ||
      event.type === 'agent.speak_started'
    )
      this.wakeDrainWaiters();
    this.emit(event.type, event as never);
    this.emit('event', event);
  }

  private settleUtterance(id: string, outcome: UtteranceOutcome | Error): void {
    const u = this.utterances.get(id);
    if (!u) return;
    u.settle(outcome);
    this.utterances.delete(id);
  }

  private acknowledge(id: string, event: RenderEvent): void {
    const p = this.pending.get(id);
    if (!p) return;
    clearTimeout(p.timer);
    this.pending.delete(id);
    p.resolve(event);
  }

  /**
   * Resolves with the next event of `type` (matching `predicate` if given); rejects after
   * `timeoutMs` (default 30 s) or when the socket closes for good.
   */
  waitFor<T extends RenderEventType>(type: T, predicate: (event: RenderEventOf<T>) => boolean = () => true, timeoutMs = 30_000): Promise<RenderEventOf<T>> {
    if (this.state === 'closed') return Promise.reject(new RenderSocketClosedError(this.closeInfo!.code, this.closeInfo!.reason));
    return new Promise((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        offEvent();
        offClose();
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`no ${type} within ${timeoutMs} ms`));
      }, timeoutMs);
      const offEvent = this.on(type, ((event: RenderEventOf<T>) => {
        if (!predicate(event)) return;
        done();
        resolve(event);
      }) as never);
      const offClose = this.on('close', ({ code, reason }) => {
        done();
        reject(new RenderSocketClosedError(code, reason));
      });
    });
  }

  // ------------------------------------------------------------------------------------ sending

  /** Waits for a connection (while reconnecting) and sends; rejects once closed for good. */
  private async sendRaw(message: RenderCommand | { type: string; [field: string]: unknown }): Promise<void> {
    if (this.state !== 'open') {
      if (this.state === 'closed') throw new RenderSocketClosedError(this.closeInfo!.code, this.closeInfo!.reason);
      await this.ready;
    }
    if (this.state !== 'open' || !this.socket) throw new RenderSocketClosedError(this.closeInfo?.code ?? 1006, this.closeInfo?.reason ?? '');
    this.socket.send(JSON.stringify(message));
  }

  /** Registers a wait for the event answering `id`; rejects on timeout or close. */
  private expect(id: string, commandType: string): Promise<RenderEvent | undefined> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new RenderAckTimeoutError(commandType, this.options.ackTimeoutMs));
      }, this.options.ackTimeoutMs);
      this.pending.set(id, { resolve, reject, timer, commandType });
    });
  }

  /**
   * Sends a command and resolves once the server has processed it; a refusal rejects with
   * RenderCommandError, except `queue_full` on audio or text, which is waited out and sent again
   * (when `retryQueueFull`).
   */
  private async sendAccepted(message: RenderCommand & { event_id: string }, retryQueueFull: boolean, generation?: number): Promise<void> {
    for (;;) {
      if (generation !== undefined && generation !== this.generation) throw new SpeakInterruptedError(message.event_id);
      const barrier = `${BARRIER}${newId('b')}`;
      this.refusals.delete(message.event_id);
      const acknowledged = this.expect(barrier, message.type);
      try {
        await this.sendRaw(message);
        await this.sendRaw({ type: 'stage.get', event_id: barrier });
      } catch (error) {
        const p = this.pending.get(barrier);
        if (p) {
          clearTimeout(p.timer);
          this.pending.delete(barrier);
        }
        acknowledged.catch(() => {});
        throw error;
      }
      await acknowledged;
      const refusal = this.refusals.get(message.event_id);
      this.refusals.delete(message.event_id);
      if (!refusal) return;
      if (refusal.type !== 'queue_full' || !retryQueueFull) throw new RenderCommandError(refusal.type, refusal.message, message.event_id);
      this.emit('backpressure', { sourceEventId: message.event_id, message: refusal.message });
      await this.drained();
    }
  }

  /** Resolves when something finished or started playing (the queue moved), or after queueRetryMs. */
  private drained(): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(wake, this.options.queueRetryMs);
      function wake() {
        clearTimeout(timer);
        resolve();
      }
      this.drainWaiters.push(wake);
    });
  }

  private wakeDrainWaiters(): void {
    for (const wake of this.drainWaiters.splice(0)) wake();
  }

  /** Runs `job` after every earlier speak()/speakText() (one utterance at a time). */
  private inLane<T>(job: () => Promise<T>): Promise<T> {
    const run = this.lane.then(job);
    this.lane = run.catch(() => {});
    return run;
  }

  /**
   * Speaks audio: PCM s16le mono at the session's rate (`sampleRate`), as bytes, an Int16Array,
   * a ReadableStream or an (async) iterable of chunks. Sent in pieces; resolves with the
   * utterance once all of it was accepted (waiting out `queue_full`), rejects if the socket
   * closes or interrupt() is called first. `await (await speak(pcm)).played()` waits for it to play.
   */
  speak(audio: AudioSource, options: SpeakOptions = {}): Promise<Utterance> {
    const generation = this.generation;
    return this.inLane(async () => {
      // A speak() after one with `end: false` continues that utterance (the server names an
      // utterance by the message that opened it), so it shares its id and played().
      const continued = this.openUtterance;
      const utterance = continued ?? new Utterance(options.eventId ?? newId('utt'));
      const id = utterance.id;
      const pieceBytes = Math.max(2, Math.round(this.options.pieceSeconds * this.sampleRate) * 2);
      let buffered = new Uint8Array(0);
      let pieces = 0;
      const sendPiece = async (bytes: Uint8Array) => {
        const first = pieces === 0 && !continued;
        const eventId = first ? id : `${id.slice(0, 100)}.${newId('p')}`;
        await this.sendAccepted(
          { type: 'agent.speak', event_id: eventId, audio: toBase64(bytes), ...(pieces === 0 && options.text !== undefined && { text: options.text }) },
          true,
          generation,
        );
        if (first) this.utterances.set(id, utterance);
        pieces++;
      };
      // Reading the source stops (and a ReadableStream is cancelled) at interrupt() or a close,
      // so a call waiting on a slow source rejects instead of hanging.
      const controller = new AbortController();
      let rejectStopped!: (error: Error) => void;
      const stopped = new Promise<never>((_, reject) => (rejectStopped = reject));
      stopped.catch(() => {});
      const stop = (error: Error | 'interrupt') => {
        const reason = error === 'interrupt' ? new SpeakInterruptedError(id) : error;
        controller.abort(reason);
        rejectStopped(reason);
      };
      this.stoppers.add(stop);
      const iterator = audioChunks(audio, controller.signal);
      try {
        for (;;) {
          const next = await Promise.race([iterator.next(), stopped]);
          if (next.done) break;
          if (generation !== this.generation) throw new SpeakInterruptedError(id);
          const chunk = next.value;
          const joined = new Uint8Array(buffered.length + chunk.length);
          joined.set(buffered);
          joined.set(chunk, buffered.length);
          buffered = joined;
          while (buffered.length >= pieceBytes) {
            await sendPiece(buffered.subarray(0, pieceBytes));
            buffered = buffered.slice(pieceBytes);
          }
        }
        // The rest, whole samples only (an odd last byte is half a sample).
        const rest = buffered.subarray(0, buffered.length - (buffered.length % 2));
        if (rest.length || pieces === 0) await sendPiece(rest);
      } finally {
        this.stoppers.delete(stop);
        // A source stuck inside its own await cannot finish a return(): do not wait for it then.
        if (controller.signal.aborted) void iterator.return(undefined).catch(() => {});
        else await iterator.return(undefined);
      }
      if (options.end !== false) {
        this.openUtterance = undefined;
        await this.sendRaw({ type: 'agent.speak_end' });
      } else this.openUtterance = utterance;
      return utterance;
    });
  }

  /**
   * The service voices `text` with the agent's voice, in order with audio sent by speak().
   * Resolves with the utterance once accepted; its played() rejects on tts_error.
   */
  speakText(text: string, options: { eventId?: string; cue?: Cue } = {}): Promise<Utterance> {
    const generation = this.generation;
    const id = options.eventId ?? newId('utt');
    return this.inLane(async () => {
      // The server seals an open caller utterance before voicing text.
      this.openUtterance = undefined;
      const utterance = new Utterance(id);
      this.utterances.set(id, utterance);
      try {
        await this.sendAccepted({ type: 'agent.speak_text', event_id: id, text, ...(options.cue && { cue: options.cue }) }, true, generation);
      } catch (error) {
        this.utterances.delete(id);
        throw error;
      }
      return utterance;
    });
  }

  /**
   * Stops playback and drops everything queued; speak()/speakText() calls not yet fully sent
   * reject with SpeakInterruptedError. Resolves with agent.audio_buffer_cleared.
   */
  async interrupt(): Promise<RenderEventOf<'agent.audio_buffer_cleared'>> {
    this.generation++;
    this.openUtterance = undefined;
    for (const stop of [...this.stoppers]) stop('interrupt');
    const id = newId('int');
    const cleared = this.expect(id, 'agent.interrupt');
    try {
      await this.sendRaw({ type: 'agent.interrupt', event_id: id });
    } catch (error) {
      cleared.catch(() => {});
      this.pending.delete(id);
      throw error;
    }
    return (await cleared) as RenderEventOf<'agent.audio_buffer_cleared'>;
  }

  /** An expression now, or `atSeconds` into the current (or next) utterance. */
  cue(cue: Cue, options: { intensity?: number; atSeconds?: number } = {}): Promise<void> {
    return this.sendAccepted(
      {
        type: 'agent.cue',
        event_id: newId('cue'),
        cue,
        ...(options.intensity !== undefined && { intensity: options.intensity }),
        ...(options.atSeconds !== undefined && { at_seconds: options.atSeconds }),
      },
      true,
    );
  }

  /** Cuts the camera now or timed; `auto` lets the player choose shots. Rejects with stage_error for a shot the session does not enable. */
  camera(camera: CameraChoice, options: { hold?: boolean; atSeconds?: number } = {}): Promise<void> {
    return this.sendAccepted(
      {
        type: 'stage.camera',
        event_id: newId('cam'),
        camera,
        ...(options.hold !== undefined && { hold: options.hold }),
        ...(options.atSeconds !== undefined && { at_seconds: options.atSeconds }),
      },
      true,
    );
  }

  /** Swaps the backdrop (null removes it). Rejects with stage_error for an unknown backdrop. */
  backdrop(backdrop: string | null, options: { atSeconds?: number } = {}): Promise<void> {
    return this.sendAccepted(
      { type: 'stage.backdrop', event_id: newId('bd'), backdrop, ...(options.atSeconds !== undefined && { at_seconds: options.atSeconds }) },
      true,
    );
  }

  /** The listening look between utterances. */
  startListening(): Promise<void> {
    return this.sendAccepted({ type: 'agent.start_listening', event_id: newId('listen') }, false);
  }

  stopListening(): Promise<void> {
    return this.sendAccepted({ type: 'agent.stop_listening', event_id: newId('listen') }, false);
  }

  /** The stage now. */
  async getStage(): Promise<Stage> {
    const id = newId('stage');
    const answered = this.expect(id, 'stage.get');
    try {
      await this.sendRaw({ type: 'stage.get', event_id: id });
    } catch (error) {
      answered.catch(() => {});
      this.pending.delete(id);
      throw error;
    }
    return ((await answered) as RenderEventOf<'stage.updated'>).stage;
  }

  /** Sends any command as is (no acknowledgement awaited). */
  send(command: RenderCommand): Promise<void> {
    return this.sendRaw(command);
  }
}

const BASE64_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** Base64 without Buffer or btoa's string round trip (browsers and Node alike). */
export function toBase64(bytes: Uint8Array): string {
  let out = '';
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
    out += BASE64_ALPHABET[n >> 18] + BASE64_ALPHABET[(n >> 12) & 63] + BASE64_ALPHABET[(n >> 6) & 63] + BASE64_ALPHABET[n & 63];
  }
  if (i < bytes.length) {
    const n = (bytes[i] << 16) | ((bytes[i + 1] ?? 0) << 8);
    out += BASE64_ALPHABET[n >> 18] + BASE64_ALPHABET[(n >> 12) & 63] + (i + 1 < bytes.length ? BASE64_ALPHABET[(n >> 6) & 63] : '=') + '=';
  }
  return out;
}

export { CloseCodes };
