/**
 * The Telegram Bot API through grammY's `Api` client (the well-kept TypeScript client; its
 * `apiRoot` option is the TELEGRAM_API_URL knob, so tests drive the real client against a local
 * fake of the Bot API). Only what notifications need: the bot's name for deep links, reading
 * `/start <token>` messages with getUpdates, and sendMessage with its outcomes classified like a
 * webhook's (retry on 429, 5xx and network failures; not on 400/403, e.g. a bot the user blocked).
 */
import type { Api, GrammyError, HttpError } from 'grammy';

export interface TelegramMessageUpdate {
  updateId: number;
  chatId: string;
  chatTitle: string;
  text: string;
}

export type TelegramOutcome =
  | { delivered: true; statusCode: 200; durationMs: number }
  | { delivered: false; retry: boolean; retryAfterSeconds?: number; statusCode: number | null; error: string; durationMs: number };

export class TelegramBot {
  private username: string | undefined;

  /** grammY is loaded only by a server with TELEGRAM_BOT_TOKEN. */
  static async create(token: string, apiRoot: string, timeoutSeconds: number): Promise<TelegramBot> {
    const grammy = await import('grammy');
    return new TelegramBot(new grammy.Api(token, { apiRoot, timeoutSeconds }), grammy);
  }

  private constructor(
    private readonly api: Api,
    private readonly errors: { GrammyError: typeof GrammyError; HttpError: typeof HttpError },
  ) {}

  /** The Bot API refused because the bot's updates go to a webhook (409): Presence cannot read them. */
  isWebhookConflict(error: unknown): boolean {
    return error instanceof this.errors.GrammyError && error.error_code === 409;
  }

  /** The bot's @username (asked once), for `https://t.me/<username>?start=<token>`. */
  async botUsername(): Promise<string> {
    this.username ??= (await this.api.getMe()).username;
    return this.username;
  }

  /** Text messages after `offset` (none waited for: the caller polls). */
  async messages(offset: number): Promise<{ messages: TelegramMessageUpdate[]; nextOffset: number }> {
    const updates = await this.api.getUpdates({ offset, limit: 100, timeout: 0, allowed_updates: ['message'] });
    let nextOffset = offset;
    const messages: TelegramMessageUpdate[] = [];
    for (const update of updates) {
      nextOffset = Math.max(nextOffset, update.update_id + 1);
      const message = update.message;
      if (!message || typeof message.text !== 'string') continue;
      const chat = message.chat as { id: number; type: string; title?: string; first_name?: string; last_name?: string; username?: string };
      const title = [chat.first_name, chat.last_name].filter(Boolean).join(' ') || chat.title || chat.username || String(chat.id);
      messages.push({ updateId: update.update_id, chatId: String(chat.id), chatTitle: title, text: message.text });
    }
    return { messages, nextOffset };
  }

  async send(chatId: string, text: string): Promise<TelegramOutcome> {
    const started = Date.now();
    try {
      await this.api.sendMessage(chatId, text.slice(0, 4096), { link_preview_options: { is_disabled: true } });
      return { delivered: true, statusCode: 200, durationMs: Date.now() - started };
    } catch (error) {
      const durationMs = Date.now() - started;
      if (error instanceof this.errors.GrammyError) {
        const code = error.error_code;
        const retry = code === 429 || code >= 500;
        return {
          delivered: false,
          retry,
          retryAfterSeconds: error.parameters?.retry_after,
          statusCode: code,
          error: error.description.slice(0, 300),
          durationMs,
        };
      }
      const message = error instanceof this.errors.HttpError ? `unreachable: ${(error.error as Error)?.message ?? error.message}` : (error as Error).message;
      return { delivered: false, retry: true, statusCode: null, error: message.slice(0, 300), durationMs };
    }
  }
}

/** `/start <token>` (also `/start@BotName <token>`): the token of a deep link, if any. */
export function startToken(text: string): string | undefined {
  return /^\/start(?:@\w+)?\s+([A-Za-z0-9_-]{16,64})\s*$/.exec(text.trim())?.[1];
}
