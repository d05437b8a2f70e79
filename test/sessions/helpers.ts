/** Shared pieces of the sessions tests: starting sessions, agents, and WebSocket clients. */
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import type { TestApp } from '../support/app.js';

export { assertCoded, validationItems, itemAt } from '../agents/helpers.js';

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
/** A premium (ElevenLabs) woman's voice. */
export const PREMIUM_VOICE = '21m00Tcm4TlvDq8ikWAM';

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Creates an agent for the key's account (main account without a key); returns its id. */
export async function makeAgent(t: TestApp, body: Record<string, unknown> = {}, key?: string): Promise<number> {
  const res = await t.request('POST', '/v1/agent/create', { key, body: { name: 'Session agent', ...body } });
  assert.equal(res.status, 200, `agent create: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id;
}

/** POST /v1/sessions, answer as is. */
export function startSession(t: TestApp, body: Record<string, unknown>, key?: string) {
  return t.request('POST', '/v1/sessions', { key, body });
}

/** POST /v1/sessions that must succeed; returns the answer body. */
export async function started(t: TestApp, body: Record<string, unknown>, key?: string): Promise<any> {
  const res = await startSession(t, body, key);
  assert.equal(res.status, 201, `start: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

export async function stopSession(t: TestApp, id: string, key?: string): Promise<any> {
  const res = await t.request('POST', `/v1/sessions/${id}/stop`, { key });
  assert.equal(res.status, 200, `stop: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

export async function getSession(t: TestApp, id: string, key?: string): Promise<any> {
  const res = await t.request('GET', `/v1/sessions/${id}`, { key });
  assert.equal(res.status, 200, `get: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Polls GET /v1/sessions/{id} until it has ended (or the time is up); returns the record. */
export async function waitEnded(t: TestApp, id: string, key?: string, timeoutMs = 6000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const record = await getSession(t, id, key);
    if (record.status === 'ended' || Date.now() > deadline) return record;
    await sleep(50);
  }
}

/** A WebSocket client that records what it receives. */
export class Client {
  readonly ws: WebSocket;
  readonly messages: any[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  private waiters: Array<() => void> = [];
  closeCode: number | undefined;

  constructor(url: string, headers?: Record<string, string>) {
    this.ws = new WebSocket(url, { headers });
    this.ws.on('message', (data, isBinary) => {
      this.messages.push(isBinary ? data : JSON.parse(data.toString()));
      for (const wake of this.waiters.splice(0)) wake();
    });
    this.closed = new Promise((resolve) => {
      this.ws.on('close', (code, reason) => {
        this.closeCode = code;
        resolve({ code, reason: reason.toString() });
        for (const wake of this.waiters.splice(0)) wake();
      });
    });
    this.ws.on('error', () => {
      /* a refused upgrade shows as a close */
    });
  }

  /** The first message matching `match` (waits for it). */
  async message(match: (m: any) => boolean, timeoutMs = 4000): Promise<any> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.messages.find(match);
      if (found) return found;
      if (this.closeCode !== undefined)
        throw new Error(`socket closed (${this.closeCode}) before the message; got ${JSON.stringify(this.messages).slice(0, 400)}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no such message within ${timeoutMs} ms; got ${JSON.stringify(this.messages).slice(0, 400)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** The close code, waiting at most `timeoutMs`; fails if the socket stays open. */
  async closeCodeWithin(timeoutMs = 4000): Promise<number> {
    const result = await Promise.race([this.closed, sleep(timeoutMs).then(() => undefined)]);
    assert.ok(result, `socket still open after ${timeoutMs} ms`);
    return result.code;
  }

  close(): void {
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) this.ws.terminate();
  }
}

/** The render socket of a session, connected (session.state_updated `connected` received). */
export async function renderSocket(wsUrl: string): Promise<Client> {
  const client = new Client(wsUrl);
  await client.message((m) => m.type === 'session.state_updated' && m.state === 'connected');
  return client;
}

/** Opens the visitor's player page socket (`{player_url}/ws`) and waits for its hello. */
export async function openPlayer(playerUrl: string): Promise<Client> {
  const client = new Client(playerUrl.replace(/^http/, 'ws') + '/ws');
  await client.message((m) => m.type === 'hello');
  return client;
}
