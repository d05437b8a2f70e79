/**
 * A local stand-in for the Telegram Bot API (`https://api.telegram.org/bot<token>/<method>`), in
 * its real wire format: JSON (or form) parameters in, `{"ok": true, "result": …}` or
 * `{"ok": false, "error_code", "description", "parameters"}` out with the matching HTTP status.
 * getMe, getUpdates (offset confirms earlier updates; 409 while a webhook is set), setWebhook,
 * deleteWebhook and sendMessage (400 for an unknown chat, 403 for a chat that blocked the bot).
 * Tests play the person: `userSends(chat, "/start <token>")`.
 */
import http from 'node:http';
import { until } from '../../support/until.js';

export interface Chat {
  id: number;
  first_name: string;
  last_name?: string;
  username?: string;
}

export interface FakeTelegram {
  url: string;
  token: string;
  username: string;
  /** Every call: method and parameters. */
  calls: Array<{ method: string; params: Record<string, any> }>;
  /** Messages the bot sent, per chat id. */
  sent: Array<{ chat_id: string; text: string }>;
  /** Chats that blocked the bot (sendMessage answers 403). */
  blocked: Set<string>;
  /** Errors the next sendMessage calls answer, in order. */
  failSends: Array<{ error_code: number; description: string; retry_after?: number }>;
  webhookUrl: string;
  userSends(chat: Chat, text: string): void;
  close(): Promise<void>;
}

export async function startFakeTelegram(token = '123456:TEST-token_abc'): Promise<FakeTelegram> {
  const updates: any[] = [];
  const knownChats = new Map<string, Chat>();
  let nextUpdate = 1000;
  let nextMessage = 1;
  const bot = {
    id: 987654321,
    is_bot: true,
    first_name: 'Presence Alerts',
    username: 'presence_alerts_bot',
    can_join_groups: true,
    can_read_all_group_messages: false,
    supports_inline_queries: false,
  };

  const fake = {
    token,
    username: bot.username,
    calls: [] as FakeTelegram['calls'],
    sent: [] as FakeTelegram['sent'],
    blocked: new Set<string>(),
    failSends: [] as FakeTelegram['failSends'],
    webhookUrl: '',
    userSends(chat: Chat, text: string) {
      knownChats.set(String(chat.id), chat);
      const entities = text.startsWith('/') ? [{ offset: 0, length: text.split(/\s/)[0]!.length, type: 'bot_command' }] : undefined;
      updates.push({
        update_id: nextUpdate++,
        message: {
          message_id: nextMessage++,
          from: {
            id: chat.id,
            is_bot: false,
            first_name: chat.first_name,
            ...(chat.last_name && { last_name: chat.last_name }),
            ...(chat.username && { username: chat.username }),
            language_code: 'en',
          },
          chat: { ...chat, type: 'private' },
          date: Math.floor(Date.now() / 1000),
          text,
          ...(entities && { entities }),
        },
      });
    },
  };

  const answer = (res: http.ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };
  const fail = (res: http.ServerResponse, error_code: number, description: string, parameters?: object) =>
    answer(res, error_code, { ok: false, error_code, description, ...(parameters && { parameters }) });

  const server = http.createServer(async (req, res) => {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    const url = new URL(req.url ?? '/', 'http://fake');
    const match = /^\/bot([^/]+)\/(\w+)$/.exec(url.pathname);
    if (!match) return fail(res, 404, 'Not Found');
    if (match[1] !== token) return fail(res, 401, 'Unauthorized');
    const method = match[2]!;
    let params: Record<string, any> = Object.fromEntries(url.searchParams);
    const type = req.headers['content-type'] ?? '';
    if (raw && type.includes('application/json')) params = { ...params, ...JSON.parse(raw) };
    else if (raw && type.includes('application/x-www-form-urlencoded')) params = { ...params, ...Object.fromEntries(new URLSearchParams(raw)) };
    fake.calls.push({ method, params });

    switch (method) {
      case 'getMe':
        return answer(res, 200, { ok: true, result: bot });
      case 'getUpdates': {
        if (fake.webhookUrl)
          return fail(res, 409, "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first");
        const offset = Number(params.offset ?? 0);
        // An offset confirms every update before it: they are never sent again.
        while (updates.length && updates[0].update_id < offset) updates.shift();
        const limit = Math.min(Number(params.limit ?? 100), 100);
        return answer(res, 200, { ok: true, result: updates.slice(0, limit) });
      }
      case 'setWebhook':
        fake.webhookUrl = String(params.url ?? '');
        return answer(res, 200, { ok: true, result: true, description: 'Webhook was set' });
      case 'deleteWebhook':
        fake.webhookUrl = '';
        return answer(res, 200, { ok: true, result: true, description: 'Webhook was deleted' });
      case 'sendMessage': {
        const chatId = String(params.chat_id ?? '');
        const text = String(params.text ?? '');
        if (!text) return fail(res, 400, 'Bad Request: message text is empty');
        if (text.length > 4096) return fail(res, 400, 'Bad Request: message is too long');
        const scripted = fake.failSends.shift();
        if (scripted)
          return fail(res, scripted.error_code, scripted.description, scripted.retry_after !== undefined ? { retry_after: scripted.retry_after } : undefined);
        const chat = knownChats.get(chatId);
        if (!chat) return fail(res, 400, 'Bad Request: chat not found');
        if (fake.blocked.has(chatId)) return fail(res, 403, 'Forbidden: bot was blocked by the user');
        fake.sent.push({ chat_id: chatId, text });
        return answer(res, 200, {
          ok: true,
          result: { message_id: nextMessage++, from: bot, chat: { ...chat, type: 'private' }, date: Math.floor(Date.now() / 1000), text },
        });
      }
      default:
        return fail(res, 404, 'Not Found: method not found');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return Object.assign(fake, {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  }) as FakeTelegram;
}

/**
 * Connects a new Telegram chat to the account of `key` the way an owner does: asks for the deep
 * link, presses Start in the fake, and waits until the token route says connected.
 */
export async function connectChat(
  t: { request(method: string, path: string, options?: { key?: string | null; body?: unknown }): Promise<{ status: number; body: any }> },
  telegram: FakeTelegram,
  chat: Chat,
  key?: string,
): Promise<{ destination: any; chat: Chat }> {
  const link = await t.request('POST', '/v1/notifications/destinations/telegram/connect', { key });
  if (link.status !== 200) throw new Error(`connect: ${link.status} ${JSON.stringify(link.body)}`);
  telegram.userSends(chat, `/start ${link.body.token}`);
  const connected = await until(
    async () => {
      const res = await t.request('GET', `/v1/notifications/destinations/telegram/connect/${link.body.token}`, { key });
      return res.body.status === 'connected' ? res.body : undefined;
    },
    10_000,
    'the chat to connect',
  );
  return { destination: connected.destination, chat };
}
