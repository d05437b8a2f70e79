/**
 * A fake player-channel server for browser tests: Fastify on 127.0.0.1 with the real player
 * routes, and a WebSocket at /p/:player_key/ws speaking docs/player-protocol.md (hello, track,
 * camera, backdrop, state, interrupt, ended, binary audio frames sent LEAD ahead of due).
 */
import Fastify, { type FastifyInstance } from 'fastify';
import websocket from '@fastify/websocket';
import type { WebSocket } from 'ws';
import { BACKDROPS } from '../../../src/catalog/backdrops.js';
import { BUILTIN_FACES } from '../../../src/faces/builtin.js';
import { playerRoutes, type PlayerLink } from '../../../src/player/routes.js';
import type { Speech } from './speech.js';

export const LEAD = 0.25;
const FRAME_SECONDS = 0.02;

export interface FakeOptions {
  facesDir: string;
  face?: string;
  backdrop?: string | null;
  cameras?: ('far' | 'mid' | 'close')[];
  camera?: string;
  faceLight?: number;
  mode?: string;
  rate?: number;
}

export class FakeChannel {
  app!: FastifyInstance;
  url = '';
  readonly key = 'pk_test_player_key_0001';
  sockets: WebSocket[] = [];
  private readonly start = performance.now();
  private seq = 0;
  private utterance = 0;
  private timers = new Set<ReturnType<typeof setInterval>>();
  opts: Required<FakeOptions>;
  received: unknown[] = [];
  connections = 0;

  constructor(opts: FakeOptions) {
    this.opts = {
      face: 'face01',
      backdrop: 'studio_grey',
      cameras: ['far', 'mid', 'close'],
      camera: 'mid',
      faceLight: 1,
      mode: 'conversation',
      rate: 24000,
      ...opts,
    };
  }

  /** Session clock, seconds. */
  now(): number {
    return (performance.now() - this.start) / 1000;
  }

  async listen(): Promise<void> {
    this.app = Fastify({ logger: false });
    await this.app.register(websocket);
    await playerRoutes(this.app, {
      facesDir: this.opts.facesDir,
      customFace: async (id) => (id === 'custom_face' ? { bytes: Buffer.from('glTF-test-bytes'), sha256: 'ab'.repeat(32) } : undefined),
      resolve: (key): PlayerLink | null =>
        key === this.key ? { status: 'valid', faceUrl: `/assets/faces/${this.opts.face}.glb` } : key === 'pk_expired_key_0001' ? { status: 'expired' } : null,
    });
    this.app.get<{ Params: { player_key: string } }>('/p/:player_key/ws', { websocket: true }, (socket, request) => {
      if (request.params.player_key !== this.key) return socket.close(4004, 'invalid link');
      this.connections++;
      this.sockets.push(socket);
      socket.on('message', (data: Buffer, binary: boolean) => {
        if (!binary) this.received.push(JSON.parse(data.toString()));
      });
      socket.on('close', () => (this.sockets = this.sockets.filter((s) => s !== socket)));
      this.hello(socket);
    });
    await this.app.listen({ host: '127.0.0.1', port: 0 });
    const addr = this.app.server.address();
    this.url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  }

  get pageUrl(): string {
    return `${this.url}/p/${this.key}`;
  }

  hello(socket: WebSocket): void {
    this.seq = 0;
    const o = this.opts;
    socket.send(
      JSON.stringify({
        type: 'hello',
        session: { session_id: 'ses_test', mode: o.mode, status: 'active', max_session_seconds: 300 },
        face: BUILTIN_FACES.find((f) => f.avatar_id === o.face) ?? { avatar_id: o.face, gender: 'f', model_url: `/assets/faces/${o.face}.glb`, look: {} },
        studio: {
          backdrop: BACKDROPS.find((b) => b.backdrop_id === o.backdrop) ?? null,
          cameras: o.cameras,
          camera: o.camera === 'auto' ? 'mid' : o.camera,
          camera_mode: o.camera === 'auto' ? 'auto' : 'manual',
          hold: false,
          face_light: o.faceLight,
        },
        sample_rate: o.rate,
        state: 'idle',
        now: this.now(),
      }),
    );
  }

  send(msg: object): void {
    for (const s of this.sockets) s.send(JSON.stringify(msg));
  }

  /**
   * Plays `speech` from session time `t0` (default: LEAD from now): the track first, then audio
   * frames each sent LEAD before it is due. Resolves with t0 once everything is sent.
   */
  speak(speech: Speech, t0 = this.now() + LEAD): Promise<number> {
    const id = ++this.utterance;
    this.send({ type: 'state', t: t0, state: 'talking' });
    this.send({
      type: 'track',
      utterance: id,
      t: t0,
      duration: speech.duration,
      visemes: speech.visemes.map(([t, n, w]) => [t0 + t, n, w]),
      mouth: { t0, step: speech.mouth.step, values: speech.mouth.values },
    });
    const per = Math.round(speech.rate * FRAME_SECONDS);
    let i = 0;
    return new Promise((resolve) => {
      const timer = setInterval(() => {
        while (i < speech.pcm.length) {
          const t = t0 + i / speech.rate;
          if (t - LEAD > this.now()) break;
          const chunk = speech.pcm.subarray(i, Math.min(speech.pcm.length, i + per));
          const buf = Buffer.alloc(12 + chunk.length * 2);
          buf.writeUInt32LE(this.seq++, 0);
          buf.writeDoubleLE(t, 4);
          for (let k = 0; k < chunk.length; k++) buf.writeInt16LE(chunk[k], 12 + k * 2);
          for (const s of this.sockets) s.send(buf);
          i += per;
        }
        if (i >= speech.pcm.length) {
          clearInterval(timer);
          this.timers.delete(timer);
          this.send({ type: 'utterance_end', t: t0 + speech.duration, utterance: id });
          this.send({ type: 'state', t: t0 + speech.duration, state: 'listening' });
          resolve(t0);
        }
      }, 5);
      this.timers.add(timer);
    });
  }

  /** Stops sending audio (like a server dropping the rest of an utterance). */
  stopAudio(): void {
    for (const t of this.timers) clearInterval(t);
    this.timers.clear();
  }

  dropSockets(): void {
    for (const s of this.sockets) s.terminate();
    this.sockets = [];
  }

  async close(): Promise<void> {
    this.stopAudio();
    for (const s of this.sockets) s.terminate();
    await this.app.close();
  }
}
