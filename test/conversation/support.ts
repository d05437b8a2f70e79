/** Helpers for the live-conversation tests: an agent that knows a few facts, a page that talks. */
import assert from 'node:assert/strict';
import type { TestApp } from '../support/app.js';
import { PlayerClient } from '../support/render-client.js';

export const SHOP_PROMPT =
  'You are Ava, the assistant of Rosa Bakery in Lisbon. Opening hours: we are open Monday to Saturday from 8 am to 6 pm and closed on Sundays. ' +
  'Phone: you can call us on 555 0142. Delivery: we deliver cakes within the city for 5 euros.';

export async function talkingAgent(t: TestApp, fields: Record<string, unknown> = {}): Promise<number> {
  const created = await t.request('POST', '/v1/agent/create', {
    body: { name: 'Ava', system_prompt: SHOP_PROMPT, concurrency_limit: 20, ...pick(fields, ['languages', 'voice_id']) },
  });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const id = created.body.id;
  const update = pick(fields, ['welcome_message', 'fillers_enabled']);
  if (Object.keys(update).length) {
    const patched = await t.request('PATCH', `/v1/agent/${id}`, { body: update });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
  }
  return id;
}

function pick(object: Record<string, unknown>, keys: string[]) {
  return Object.fromEntries(Object.entries(object).filter(([k]) => keys.includes(k)));
}

export async function startConversation(t: TestApp, agentId: number): Promise<{ id: string; playerUrl: string }> {
  const started = await t.request('POST', '/v1/sessions', { body: { agent_id: agentId } });
  assert.equal(started.status, 201, JSON.stringify(started.body));
  return { id: started.body.session_id, playerUrl: started.body.player_url };
}

/** The player page's side: JSON to the server and microphone frames (seq + 16 kHz PCM). */
export class TalkingPage {
  private seq = 0;
  constructor(readonly player: PlayerClient) {}

  static async open(playerUrl: string): Promise<TalkingPage> {
    return new TalkingPage(await PlayerClient.open(playerUrl));
  }

  send(message: object): void {
    this.player.socket.send(JSON.stringify(message));
  }

  /** Streams 16 kHz audio in 100 ms frames at real time, as the page's AudioWorklet does. */
  async speak(pcm: Int16Array): Promise<void> {
    const frame = 1600;
    const began = performance.now();
    for (let i = 0, n = 0; i < pcm.length; i += frame, n++) {
      const piece = pcm.subarray(i, Math.min(pcm.length, i + frame));
      const bytes = Buffer.alloc(4 + piece.length * 2);
      bytes.writeUInt32LE(this.seq++, 0);
      Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength).copy(bytes, 4);
      this.player.socket.send(bytes, { binary: true });
      const due = began + (n + 1) * 100;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
  }

  of(type: string): any[] {
    return this.player.of(type);
  }

  async waitFor(predicate: () => boolean, timeoutMs = 20_000, what = 'condition'): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; got ${this.player.messages.map((m) => m.event.type).join(',')}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  /** Everything the agent said in captions, in order. */
  captions(): string {
    return this.of('caption')
      .map((c) => c.text)
      .join(' ');
  }

  close(): void {
    this.player.close();
  }
}

export async function turnsOf(t: TestApp, conversationId: string) {
  return t.database.db
    .selectFrom('conversation_turns')
    .select(['role', 'text', 'language', 'details', 'at'])
    .where('conversation_id', '=', conversationId)
    .orderBy('id')
    .execute();
}

export async function waitForTurns(t: TestApp, conversationId: string, count: number, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const turns = await turnsOf(t, conversationId);
    if (turns.length >= count) return turns;
    if (Date.now() > deadline) throw new Error(`only ${turns.length} turns after ${timeoutMs} ms: ${JSON.stringify(turns.map((x) => [x.role, x.text]))}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
