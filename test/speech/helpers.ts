/** Measures and fixtures shared by the speech tests. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SpeechService, type SpeechLogger } from '../../src/speech/synthesis.js';
import { speechConfig } from '../../src/core/config.js';

export function silentLogger(lines: string[] = []): SpeechLogger & { lines: string[] } {
  const put = (obj: object | string, msg?: string) => void lines.push(typeof obj === 'string' ? obj : (msg ?? JSON.stringify(obj)));
  return { lines, info: put, warn: put, error: put };
}

export function makeService(env: Record<string, string> = {}, lines: string[] = []) {
  return new SpeechService(speechConfig({ SPEECH_TIMEOUT_MS: '1500', ...env }, env.DATA_DIR ?? 'memory'), {
    logger: silentLogger(lines),
    fliteWorkers: 2,
  });
}

/** Pitch (Hz) of a voiced stretch by autocorrelation, median over 40 ms frames that carry energy. */
export function medianPitch(pcm: Int16Array, rate: number): number {
  const frame = Math.round(rate * 0.04);
  const minLag = Math.round(rate / 400);
  const maxLag = Math.round(rate / 60);
  const pitches: number[] = [];
  for (let start = 0; start + frame + maxLag < pcm.length; start += frame) {
    let energy = 0;
    for (let i = 0; i < frame; i++) energy += (pcm[start + i] / 32768) ** 2;
    if (Math.sqrt(energy / frame) < 0.05) continue;
    let best = 0;
    let bestLag = 0;
    for (let lag = minLag; lag <= maxLag; lag++) {
      let sum = 0;
      for (let i = 0; i < frame; i++) sum += pcm[start + i] * pcm[start + i + lag];
      if (sum > best) {
        best = sum;
        bestLag = lag;
      }
    }
    if (bestLag) pitches.push(rate / bestLag);
  }
  pitches.sort((a, b) => a - b);
  return pitches.length ? pitches[Math.floor(pitches.length / 2)] : 0;
}

/** Power of one frequency (Goertzel), normalised per sample. */
export function tonePower(x: Float32Array | Int16Array, rate: number, hz: number, scale = 1): number {
  const k = (2 * Math.PI * hz) / rate;
  const c = 2 * Math.cos(k);
  let s1 = 0;
  let s2 = 0;
  for (let i = 0; i < x.length; i++) {
    const s0 = x[i] / scale + c * s1 - s2;
    s2 = s1;
    s1 = s0;
  }
  return (s1 * s1 + s2 * s2 - c * s1 * s2) / (x.length * x.length);
}

export interface FakeServer {
  url: string;
  port: number;
  requests: Array<{ method: string; url: string; headers: http.IncomingHttpHeaders; body: string }>;
  close(): Promise<void>;
}

/** A local HTTP server on 127.0.0.1 that records requests and answers with the handler. */
export async function fakeServer(handler: (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void | Promise<void>): Promise<FakeServer> {
  const requests: FakeServer['requests'] = [];
  const sockets = new Set<import('node:net').Socket>();
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      requests.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      void handler(req, res, body);
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

/** A port nothing listens on. */
export async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

/** s16le bytes of a sine. */
export function sineBytes(hz: number, seconds: number, rate = 24000, amplitude = 0.5): Buffer {
  const n = Math.round(seconds * rate);
  const b = Buffer.alloc(n * 2);
  for (let i = 0; i < n; i++) b.writeInt16LE(Math.round(Math.sin((2 * Math.PI * hz * i) / rate) * amplitude * 32767), i * 2);
  return b;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
