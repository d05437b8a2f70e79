/** A render-protocol client for tests: records every event with its arrival time. */
import WebSocket from 'ws';
import { decodeFrame } from '../../src/realtime/frame-codec.js';

export interface Received {
  at: number;
  event: any;
}

export class RenderClient {
  readonly events: Received[] = [];
  closeCode?: number;
  closeReason?: string;
  private waiters: Array<() => void> = [];

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data, isBinary) => {
      if (isBinary) return;
      this.events.push({ at: performance.now() / 1000, event: JSON.parse(data.toString()) });
      this.notify();
    });
    socket.on('close', (code, reason) => {
      this.closeCode = code;
      this.closeReason = reason.toString();
      this.notify();
    });
  }

  private notify(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  static async open(url: string, headers?: Record<string, string>): Promise<RenderClient> {
    const client = new RenderClient(new WebSocket(url, { headers }));
    await client.waitFor(() => client.closeCode !== undefined || client.events.some((e) => e.event.type === 'session.state_updated'), 5000);
    return client;
  }

  send(message: object): void {
    this.socket.send(JSON.stringify(message));
  }

  sendBinary(bytes: Uint8Array): void {
    this.socket.send(bytes, { binary: true });
  }

  speak(pcm: Int16Array, extra: Record<string, unknown> = {}): void {
    this.send({ type: 'agent.speak', audio: Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength).toString('base64'), ...extra });
  }

  of(type: string): Received[] {
    return this.events.filter((e) => e.event.type === type);
  }

  async waitFor(predicate: () => boolean, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(
          `timed out; ${this.events.length} events, the last: ${this.events
            .slice(-20)
            .map((e) => e.event.type)
            .join(', ')}; close ${this.closeCode ?? '-'}`,
        );
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 200));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  async waitForType(type: string, count = 1, timeoutMs = 10_000): Promise<Received> {
    await this.waitFor(() => this.of(type).length >= count, timeoutMs);
    return this.of(type)[count - 1];
  }

  async waitClose(timeoutMs = 5000): Promise<number> {
    await this.waitFor(() => this.closeCode !== undefined, timeoutMs);
    return this.closeCode!;
  }

  close(): void {
    this.socket.close();
  }
}

/** A player-channel client: JSON messages and binary audio frames, with arrival times. */
export class PlayerClient {
  readonly messages: Received[] = [];
  readonly frames: Array<{ at: number; seq: number; t: number; pcm: Int16Array }> = [];
  closeCode?: number;

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data, isBinary) => {
      const at = performance.now() / 1000;
      const buffer = data as Buffer;
      if (isBinary) {
        // docs/player-protocol.md: the frame's track (if packed in) is a message of its own here.
        const frame = decodeFrame(buffer);
        if (!frame) throw new Error('malformed binary frame from the player channel');
        if (frame.track) this.messages.push({ at, event: frame.track });
        this.frames.push({ at, seq: frame.seq, t: frame.t, pcm: frame.samples });
      } else {
        this.messages.push({ at, event: JSON.parse(buffer.toString()) });
      }
    });
    socket.on('close', (code) => {
      this.closeCode = code;
    });
  }

  static async open(playerUrl: string): Promise<PlayerClient> {
    const client = new PlayerClient(new WebSocket(playerUrl.replace(/^http/, 'ws') + '/ws'));
    const deadline = Date.now() + 5000;
    while (!client.messages.some((m) => m.event.type === 'hello')) {
      if (Date.now() > deadline) throw new Error('no hello from the player channel');
      await new Promise((r) => setTimeout(r, 10));
    }
    return client;
  }

  of(type: string): any[] {
    return this.messages.filter((m) => m.event.type === type).map((m) => m.event);
  }

  /** How many samples the page has received. */
  get sampleCount(): number {
    return this.frames.reduce((n, f) => n + f.pcm.length, 0);
  }

  /** Every sample the page has received, in order. */
  heard(): Int16Array {
    const all = new Int16Array(this.sampleCount);
    let at = 0;
    for (const f of this.frames) {
      all.set(f.pcm, at);
      at += f.pcm.length;
    }
    return all;
  }

  close(): void {
    this.socket.close();
  }
}

/** A voiced, speech-like test signal: a 120 Hz harmonic series shaped by two formants. */
export function voiced(seconds: number, sampleRate = 24000, amplitude = 0.4): Int16Array {
  const out = new Int16Array(Math.round(seconds * sampleRate));
  for (let i = 0; i < out.length; i++) {
    const t = i / sampleRate;
    let x = 0;
    for (let h = 1; h <= 20; h++) {
      const f = 120 * h;
      const formant = Math.exp(-(((f - 700) / 250) ** 2)) + 0.6 * Math.exp(-(((f - 1200) / 300) ** 2)) + 0.05;
      x += formant * Math.sin(2 * Math.PI * f * t);
    }
    out[i] = Math.round(Math.max(-1, Math.min(1, x * amplitude * 0.5)) * 32767);
  }
  return out;
}

export function silence(seconds: number, sampleRate = 24000): Int16Array {
  return new Int16Array(Math.round(seconds * sampleRate));
}

export function concat(...parts: Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export function pieces(pcm: Int16Array, seconds: number, sampleRate = 24000): Int16Array[] {
  const size = Math.round(seconds * sampleRate);
  const out: Int16Array[] = [];
  for (let i = 0; i < pcm.length; i += size) out.push(pcm.subarray(i, i + size));
  return out;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
