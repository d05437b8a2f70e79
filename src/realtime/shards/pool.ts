/**
 * The main process's side of the real-time shards (REALTIME_SHARDS): one child process per shard,
 * each carrying the live side of the render-mode sessions whose id hashes to it. The main process
 * keeps the database, the API and everything about a session but its real-time path: it opens and
 * ends sessions on their shard, forwards HTTP commands, hands over their sockets once
 * authenticated (handoff.ts), voices their speak_text, and adds their figures to /metrics.
 *
 * A shard that dies is started again; its sessions' sockets closed with it, and callers and pages
 * reconnect by themselves (the protocols say to), reaching the new shard, which opens the session's
 * live side again.
 */
import { fork, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SessionRow } from '../../sessions/service.js';
import type { RealtimeHttpCommand } from '../protocol.js';
import type { RealtimeSnapshot } from '../metrics.js';
import type { SpeakerFactory } from '../service.js';
import type { FromShard, ToShard, UpgradeRequest } from './messages.js';

/**
 * V8 flags of a shard process, chosen on measurements (bench/README.md, "27 Nov (third session)").
 * A shard's heap is small (about 25 MB live for 500 sessions), and V8 set the old generation's
 * limit so near it that the room left was under the young generation's size, which starts a full
 * collection at once: one every half second, each pausing every session of the shard 8–26 ms.
 * Letting the old generation grow to five times what is live (about 120 MB) puts them a minute or
 * more apart, each pausing 5–8 ms.
 */
const SHARD_V8_FLAGS = ['--heap-growing-percent=400'];

const ENTRY = path.join(path.dirname(fileURLToPath(import.meta.url)), 'entry.mjs');
/** A shard that has not said it is ready by then is killed and started again. */
const READY_TIMEOUT_MS = 60_000;
/** How long /metrics waits for a shard's figures. */
const METRICS_TIMEOUT_MS = 2_000;
/** Sockets and openings held for a shard that is starting; past it, sockets are closed (clients retry). */
const MAX_PENDING = 10_000;
/** A shard that ran this long before it died is restarted after 1 s again. */
const STABLE_MS = 60_000;
/** Restarts back off from 1 s to at most this, when a shard keeps dying. */
const MAX_RESTART_DELAY_MS = 30_000;

export interface PoolLog {
  error(details: object, message: string): void;
  warn(details: object, message: string): void;
  info(details: object, message: string): void;
}

export interface PoolOptions {
  count: number;
  log: PoolLog;
  /** The main process's voices (billing-aware) for the shards' speak_text. */
  speakerFor: SpeakerFactory;
  /** The face a session's page shows (the studio catalog: custom faces live in the database). */
  faceFor: (row: SessionRow) => unknown;
}

class Shard {
  child?: ChildProcess;
  ready = false;
  /** Messages (and sockets) sent before the shard said it is ready. */
  private readonly pending: Array<[ToShard, Socket | undefined]> = [];
  private readonly metricsWaiting = new Map<number, (snapshot: RealtimeSnapshot | undefined) => void>();
  private readonly speaking = new Map<number, AbortController>();
  private restartDelay = 1_000;
  private restartTimer?: NodeJS.Timeout;
  private stopping = false;
  startedAt = 0;

  constructor(
    readonly index: number,
    private readonly options: PoolOptions,
  ) {}

  start(): Promise<void> {
    this.startedAt = Date.now();
    this.restartTimer = undefined;
    // No inspector or test-runner flags: a shard is a plain Node process (running the compiled
    // modules when its parent does: PRESENCE_COMPILED is in the environment it inherits).
    const child = fork(ENTRY, [], {
      serialization: 'advanced',
      execArgv: SHARD_V8_FLAGS,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      env: { ...process.env, PRESENCE_SHARD: String(this.index) },
    });
    this.child = child;
    return new Promise<void>((resolve) => {
      const readyTimer = setTimeout(() => {
        this.options.log.error({ shard: this.index }, 'real-time shard did not start in time; starting it again');
        child.kill('SIGKILL');
      }, READY_TIMEOUT_MS);
      readyTimer.unref();
      child.on('message', (message: FromShard) => {
        if (message.type === 'ready') {
          clearTimeout(readyTimer);
          this.ready = true;
          for (const [queued, handle] of this.pending.splice(0)) this.send(queued, handle);
          resolve();
          return;
        }
        this.receive(message);
      });
      child.on('exit', (code, signal) => {
        clearTimeout(readyTimer);
        this.ready = false;
        this.child = undefined;
        for (const done of this.metricsWaiting.values()) done(undefined);
        this.metricsWaiting.clear();
        for (const controller of this.speaking.values()) controller.abort();
        this.speaking.clear();
        // Sockets waiting for a shard that died are closed: their clients reconnect.
        for (const [, handle] of this.pending.splice(0)) handle?.destroy();
        resolve();
        if (this.stopping) return;
        this.options.log.error({ shard: this.index, code, signal }, 'real-time shard exited; its sessions reconnect to the shard started in its place');
        // A shard that had run for a while died once: start again soon. One that keeps dying backs off.
        if (Date.now() - this.startedAt > STABLE_MS) this.restartDelay = 1_000;
        this.restartTimer = setTimeout(() => void this.start(), this.restartDelay);
        this.restartTimer.unref();
        this.restartDelay = Math.min(MAX_RESTART_DELAY_MS, this.restartDelay * 2);
      });
      child.on('error', (error) => this.options.log.error({ err: error, shard: this.index }, 'real-time shard channel failed'));
    });
  }

  send(message: ToShard, handle?: Socket): void {
    if (!this.ready || !this.child?.connected) {
      // While the shard starts, what concerns its sessions waits for it, in order (bounded): a
      // socket authenticated before its session ended must meet that end in the new shard.
      // Requests about the old process (figures, speech) do not wait. A stopping pool takes nothing.
      const waits = message.type === 'open' || message.type === 'end' || message.type === 'command' || message.type === 'socket';
      if (!this.stopping && waits && this.pending.length < MAX_PENDING) this.pending.push([message, handle]);
      else handle?.destroy();
      return;
    }
    if (handle) {
      // Passed as a plain socket: a socket that names its server makes child_process enrol this
      // process's HTTP server to poll the child for its connections on close, and a server whose
      // polled child has exited never finishes closing. So the socket forgets its server, is sent
      // with our copy kept, and our copy is then destroyed, which settles the server's count of
      // connections as for any closed socket (the shard holds its own descriptor of it).
      (handle as unknown as { server: unknown }).server = null;
      this.child.send(message, handle, { keepOpen: true }, () => handle.destroy());
    } else
      this.child.send(
        message,
        (error: Error | null) => error && this.options.log.warn({ err: error, shard: this.index }, 'message to real-time shard not delivered'),
      );
  }

  metrics(id: number): Promise<RealtimeSnapshot | undefined> {
    if (!this.ready) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.metricsWaiting.delete(id);
        resolve(undefined);
      }, METRICS_TIMEOUT_MS);
      this.metricsWaiting.set(id, (snapshot) => {
        clearTimeout(timer);
        this.metricsWaiting.delete(id);
        resolve(snapshot);
      });
      this.send({ type: 'metrics', id });
    });
  }

  private receive(message: FromShard): void {
    switch (message.type) {
      case 'metrics':
        this.metricsWaiting.get(message.id)?.(message.snapshot);
        return;
      case 'speak':
        void this.speak(message);
        return;
      case 'speak_abort':
        this.speaking.get(message.id)?.abort();
        return;
      case 'log':
        this.options.log[message.level]({ ...message.details, shard: this.index }, message.message);
        return;
    }
  }

  /** Voices a shard's speak_text here, where the engines and the billing meter are, piece by piece. */
  private async speak(request: Extract<FromShard, { type: 'speak' }>): Promise<void> {
    const controller = new AbortController();
    this.speaking.set(request.id, controller);
    try {
      const speaker = this.options.speakerFor(request.voice);
      for await (const piece of speaker({ text: request.text, sampleRate: request.sampleRate, signal: controller.signal })) {
        if (controller.signal.aborted) return;
        this.send({ type: 'speech', id: request.id, piece: { pcm: piece.pcm, text: piece.text, words: piece.words } });
      }
      if (!controller.signal.aborted) this.send({ type: 'speech', id: request.id, done: true });
    } catch (error) {
      if (!controller.signal.aborted) this.send({ type: 'speech', id: request.id, error: (error as Error).message });
    } finally {
      this.speaking.delete(request.id);
    }
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    const child = this.child;
    if (!child) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    if (child.connected) child.send({ type: 'stop' } satisfies ToShard);
    else child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
    await exited;
    clearTimeout(timer);
  }
}

export class ShardPool {
  private readonly shards: Shard[];
  private nextRequest = 1;

  private constructor(private readonly options: PoolOptions) {
    this.shards = Array.from({ length: options.count }, (_, i) => new Shard(i, options));
  }

  /** Starts every shard and resolves when all are ready (or, for one that failed, restarting). */
  static async start(options: PoolOptions): Promise<ShardPool> {
    const pool = new ShardPool(options);
    await Promise.all(pool.shards.map((shard) => shard.start()));
    options.log.info({ shards: options.count }, `real-time shards: ${options.count} processes carry render-mode sessions`);
    return pool;
  }

  get size(): number {
    return this.shards.length;
  }

  /** The shard that carries a session: a hash of its id, so its render and player sockets meet. */
  shardOf(sessionId: string): number {
    let hash = 2166136261;
    for (let i = 0; i < sessionId.length; i++) hash = Math.imul(hash ^ sessionId.charCodeAt(i), 16777619);
    return (hash >>> 0) % this.shards.length;
  }

  private shardFor(sessionId: string): Shard {
    return this.shards[this.shardOf(sessionId)];
  }

  open(row: SessionRow): void {
    this.shardFor(row.id).send({ type: 'open', row, face: this.options.faceFor(row) });
  }

  end(sessionId: string, reason: string): void {
    this.shardFor(sessionId).send({ type: 'end', sessionId, reason });
  }

  command(row: SessionRow, command: RealtimeHttpCommand, eventId: string): void {
    this.shardFor(row.id).send({ type: 'command', row, face: this.options.faceFor(row), command, eventId });
  }

  /** Hands an authenticated upgrade's socket to the session's shard, which finishes the handshake. */
  handOff(kind: 'render' | 'player', row: SessionRow, request: UpgradeRequest, socket: Socket, head: Buffer, sampleRate?: string): void {
    this.shardFor(row.id).send({ type: 'socket', kind, row, face: this.options.faceFor(row), request, head: new Uint8Array(head), sampleRate }, socket);
  }

  /** Every ready shard's real-time figures, with its index (one restarting or not answering in time is left out). */
  async metrics(): Promise<RealtimeSnapshot[]> {
    const snapshots = await Promise.all(
      this.shards.map(async (shard) => {
        const snapshot = await shard.metrics(this.nextRequest++);
        return snapshot && { ...snapshot, shard: shard.index };
      }),
    );
    return snapshots.filter((s): s is RealtimeSnapshot & { shard: number } => s !== undefined);
  }

  /** Each shard's process id, by shard index (undefined while one restarts); operators, tests. */
  pids(): Array<number | undefined> {
    return this.shards.map((shard) => shard.child?.pid);
  }

  async stop(): Promise<void> {
    await Promise.all(this.shards.map((shard) => shard.stop()));
  }
}
