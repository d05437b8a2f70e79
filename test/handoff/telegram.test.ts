/**
 * The chat-messenger destination of a data handoff: a rule sending to a connected Telegram chat
 * (the Bot API's local fake, driven by grammY) gets the rendered template, visitor values
 * included, once per conversation even when the ended job runs again; a rule naming another
 * account's chat is refused when saved; without TELEGRAM_BOT_TOKEN the destination is unavailable.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { forEachEngine, startTestApp, type TestApp } from '../support/app.js';
import { connectChat, startFakeTelegram, type FakeTelegram } from '../notifications/support/fake-telegram.js';
import { conversation, makeAgent, sleep, until } from './support.js';
import { assertCoded } from '../agents/helpers.js';

const TURNS: Array<['visitor' | 'agent', string]> = [
  ['agent', 'Hello! What is your email address?'],
  ['visitor', 'It is sam.lee@example.com, and I need a <big> "van" & trailer'],
];
const DETAILS = [
  { name: 'email', description: "the visitor's email address", required: true },
  { name: 'notes', description: 'what the visitor needs', required: false },
];

forEachEngine('handoff to a Telegram chat', (engine) => {
  let t: TestApp;
  let telegram: FakeTelegram;
  before(async () => {
    telegram = await startFakeTelegram();
    t = await startTestApp(engine, { TELEGRAM_BOT_TOKEN: telegram.token, TELEGRAM_API_URL: telegram.url, WEBHOOK_RETRY_DELAYS: '1,1,1,1' });
  });
  after(async () => {
    await t.close();
    await telegram.close();
  });

  test('the rendered template reaches the connected chat with visitor values, once per conversation', async () => {
    const { destination, chat } = await connectChat(t, telegram, { id: 7101, first_name: 'Owner' });
    const agent = await makeAgent(t, 'Vans');
    const saved = await t.request('POST', `/v1/agent/${agent}/v2/rules`, {
      body: {
        name: 'New van lead',
        details: DETAILS,
        destination: { type: 'telegram', destination_id: destination.id, template: 'Lead {{email}} from {{visitor.page}}' },
      },
    });
    assert.equal(saved.status, 200, JSON.stringify(saved.body));
    const id = await conversation(t, agent, TURNS, { page: '/vans?x=1&y=2' });
    const message = await until(
      () => telegram.sent.find((m) => m.chat_id === String(chat.id) && m.text.startsWith('New van lead')),
      30_000,
      'the chat message',
    );
    assert.equal(message.text, 'New van lead\nLead sam.lee@example.com from /vans?x=1&y=2');

    // The ended job running again (a crash after sending, say) sends nothing twice.
    await t.context.conversations.end({
      id,
      account_id: t.accountId,
      agent_id: agent,
      mode: 'conversation',
      created_at: new Date(Date.now() - 60_000),
      ended_at: new Date(),
      duration_seconds: 60,
      end_reason: 'stopped',
    } as any);
    await sleep(1500);
    assert.equal(telegram.sent.filter((m) => m.chat_id === String(chat.id) && m.text.startsWith('New van lead')).length, 1);
  });

  test("a rule naming another account's chat, or no chat, is refused when saved", async () => {
    const other = await t.account('paid');
    const { destination } = await connectChat(t, telegram, { id: 7102, first_name: 'Other' }, other.key);
    const agent = await makeAgent(t, 'Mine');
    const foreign = await t.request('POST', `/v1/agent/${agent}/v2/rules`, {
      body: { name: 'x', details: DETAILS, destination: { type: 'telegram', destination_id: destination.id, template: '{{email}}' } },
    });
    assert.equal(foreign.status, 422, JSON.stringify(foreign.body));
    assert.deepEqual(
      foreign.body.detail.map((d: any) => d.loc),
      [['body', 'destination', 'destination_id']],
    );
    const missing = await t.request('POST', `/v1/agent/${agent}/v2/rules`, {
      body: { name: 'x', details: DETAILS, destination: { type: 'telegram', template: '{{email}}' } },
    });
    assert.equal(missing.status, 422);
  });
});

forEachEngine('handoff to a Telegram chat without a bot', (engine) => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(engine);
  });
  after(() => t.close());

  test('without TELEGRAM_BOT_TOKEN the destination is unavailable: 422 destination_unavailable', async () => {
    const agent = await makeAgent(t, 'NoBot');
    const res = await t.request('POST', `/v1/agent/${agent}/v2/rules`, {
      body: { name: 'x', details: DETAILS, destination: { type: 'telegram', destination_id: 1, template: '{{email}}' } },
    });
    assertCoded(res, 422, 'destination_unavailable');
  });
});
