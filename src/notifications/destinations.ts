/**
 * Notification destinations of an account: signed webhooks (each with its own `whsec_` secret,
 * shown to keys with `setup`, rotatable) and Telegram chats, connected through a one-time deep
 * link (`https://t.me/<bot>?start=<token>`): the person opens it and presses Start, the bot reads
 * `/start <token>` (getUpdates) and the chat becomes a destination. The token route polls the bot
 * and tells whether the chat connected. Only the token's hash is stored; it expires after 10
 * minutes and works once.
 */
import type { Db } from '../core/db/database.js';
import type { NotificationDestinationsTable } from '../core/db/schema.js';
import { maskHeaders } from '../delivery/signing.js';
import { randomToken, sha256Hex } from '../core/secrets.js';
import { ensureSetting } from '../core/settings.js';
import type { Selectable } from 'kysely';
import { startToken, type TelegramBot } from './telegram.js';
import { notificationsErrors } from './errors.js';

export const LIMITS = {
  destinationsPerAccount: 20,
  pendingLinksPerAccount: 10,
  linkSeconds: 600,
  headers: 20,
} as const;

export type DestinationRow = Selectable<NotificationDestinationsTable>;

export interface DestinationView {
  id: number;
  type: 'webhook' | 'telegram';
  name: string;
  enabled: boolean;
  state: 'active' | 'needs_attention' | 'paused';
  url?: string;
  headers?: Record<string, string>;
  secret?: string;
  chat?: { id: string; title: string | null };
  consecutive_failures: number;
  last_error: string | null;
  created_at: string;
  updated_at: string;
}

export function maskSecret(secret: string): string {
  return `whsec_${'•'.repeat(8)}${secret.slice(-4)}`;
}

export function destinationView(row: DestinationRow, showSecret: boolean): DestinationView {
  const view: DestinationView = {
    id: row.id,
    type: row.type,
    name: row.name,
    enabled: row.enabled,
    state: row.state,
    consecutive_failures: row.consecutive_failures,
    last_error: row.last_error,
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  };
  if (row.type === 'webhook') {
    view.url = row.url ?? '';
    view.headers = showSecret ? (row.headers ?? {}) : maskHeaders(row.headers ?? {});
    view.secret = showSecret ? row.secret! : maskSecret(row.secret!);
  } else {
    view.chat = { id: row.chat_id!, title: row.chat_title };
  }
  return view;
}

export const newWebhookSecret = () => randomToken('whsec_', 24);

export interface WebhookInput {
  url: string;
  name?: string;
  headers?: Record<string, string>;
  enabled?: boolean;
}

export interface DestinationPatch {
  name?: string;
  enabled?: boolean;
  url?: string;
  headers?: Record<string, string>;
  rotate_secret?: boolean;
}

/** The notification logger's shape. */
export interface Logger {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
}

const notFound = (id: number) => notificationsErrors.destination_not_found(`No notification destination with id ${id} in this account`);

export class Destinations {
  private polling: Promise<void> | undefined;
  private lastPoll = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Db,
    private readonly bot: TelegramBot | undefined,
    private readonly logger: Logger,
    /** Refuses a webhook URL the delivery engine would refuse (422 private_address). */
    private readonly checkUrl: (url: string) => Promise<void>,
  ) {}

  async list(accountId: number): Promise<DestinationRow[]> {
    return this.db.selectFrom('notification_destinations').selectAll().where('account_id', '=', accountId).orderBy('id').execute();
  }

  async get(accountId: number, id: number): Promise<DestinationRow> {
    const row = await this.db.selectFrom('notification_destinations').selectAll().where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
    if (!row) throw notFound(id);
    return row;
  }

  /** Any account's destination (for the send jobs, which carry its id). */
  byId(id: number): Promise<DestinationRow | undefined> {
    return this.db.selectFrom('notification_destinations').selectAll().where('id', '=', id).executeTakeFirst();
  }

  private async roomFor(accountId: number): Promise<void> {
    const { count } = await this.db
      .selectFrom('notification_destinations')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .where('account_id', '=', accountId)
      .executeTakeFirstOrThrow();
    if (Number(count) >= LIMITS.destinationsPerAccount) {
      throw notificationsErrors.destination_limit(`An account has at most ${LIMITS.destinationsPerAccount} notification destinations; delete one first`);
    }
  }

  async createWebhook(accountId: number, input: WebhookInput): Promise<DestinationRow> {
    await this.checkUrl(input.url);
    await this.roomFor(accountId);
    return this.db
      .insertInto('notification_destinations')
      .values({
        account_id: accountId,
        type: 'webhook',
        name: input.name?.trim() || new URL(input.url).host,
        url: input.url,
        headers: JSON.stringify(input.headers ?? {}),
        secret: newWebhookSecret(),
        enabled: input.enabled ?? true,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  async patch(accountId: number, id: number, patch: DestinationPatch): Promise<DestinationRow> {
    const row = await this.get(accountId, id);
    if (row.type === 'telegram' && (patch.url !== undefined || patch.headers !== undefined || patch.rotate_secret)) {
      throw notificationsErrors.not_a_webhook();
    }
    if (patch.url !== undefined) await this.checkUrl(patch.url);
    const set: Record<string, unknown> = { updated_at: new Date() };
    if (patch.name !== undefined) set.name = patch.name.trim();
    if (patch.enabled !== undefined) set.enabled = patch.enabled;
    if (patch.url !== undefined) set.url = patch.url;
    if (patch.headers !== undefined) set.headers = JSON.stringify(patch.headers);
    if (patch.rotate_secret) set.secret = newWebhookSecret();
    // A new address is a fresh start: whatever needed attention was about the old one.
    if (patch.url !== undefined && patch.url !== row.url) Object.assign(set, { state: 'active', consecutive_failures: 0, last_error: null });
    return this.db.updateTable('notification_destinations').set(set).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
  }

  async remove(accountId: number, id: number): Promise<void> {
    await this.get(accountId, id);
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('notification_destinations').where('id', '=', id).execute();
      // Rules stop naming it (they keep their other destinations and the inbox).
      await trx
        .updateTable('notification_rules')
        .set((eb) => ({ destination_ids: eb.fn('array_remove', [eb.ref('destination_ids'), eb.val(id)]) }))
        .where('account_id', '=', accountId)
        .execute();
    });
  }

  /** Marks the outcome of a send on the destination (needs_attention, pause after 10 failures). */
  async recordOutcome(id: number, outcome: 'delivered' | 'retrying' | 'failed' | 'rejected', error: string | null, db: Db = this.db): Promise<void> {
    if (outcome === 'retrying') return;
    if (outcome === 'delivered') {
      await db.updateTable('notification_destinations').set({ consecutive_failures: 0, state: 'active', last_error: null }).where('id', '=', id).execute();
      return;
    }
    const row = await db
      .updateTable('notification_destinations')
      .set((eb) => ({
        consecutive_failures: eb('consecutive_failures', '+', 1),
        last_error: error,
        ...(outcome === 'rejected' ? { state: 'needs_attention' as const } : {}),
      }))
      .where('id', '=', id)
      .returning(['consecutive_failures'])
      .executeTakeFirst();
    if (row && row.consecutive_failures >= 10) {
      await db.updateTable('notification_destinations').set({ state: 'paused' }).where('id', '=', id).execute();
      this.logger.warn({ destination_id: id }, 'notification destination paused after 10 failed deliveries in a row; a successful test send resumes it');
    }
  }

  /** A successful test send resumes a paused destination. */
  async resume(id: number): Promise<void> {
    await this.db
      .updateTable('notification_destinations')
      .set({ state: 'active', consecutive_failures: 0, last_error: null, updated_at: new Date() })
      .where('id', '=', id)
      .execute();
  }

  // ---------- Telegram ----------

  private requireBot(): TelegramBot {
    if (!this.bot)
      throw notificationsErrors.telegram_not_configured(
        'Telegram is not set up on this server: the operator sets TELEGRAM_BOT_TOKEN to a bot token from @BotFather',
      );
    return this.bot;
  }

  /** A one-time deep link; the chat that opens it and presses Start becomes a destination. */
  async connectTelegram(accountId: number): Promise<{ token: string; url: string; bot: string; expires_at: string; status: 'pending' }> {
    const bot = this.requireBot();
    let username: string;
    try {
      username = await bot.botUsername();
      // Reading now also tells whether the bot can be read at all: a bot whose updates go to a
      // webhook (another program) never sees the /start.
      await this.pollUpdates(true);
    } catch (error) {
      if (bot.isWebhookConflict(error)) {
        throw notificationsErrors.telegram_webhook_set();
      }
      throw notificationsErrors.telegram_unavailable(`The Telegram Bot API did not answer: ${(error as Error).message}`);
    }
    await this.roomFor(accountId);
    const token = randomToken('', 24);
    const expiresAt = new Date(Date.now() + LIMITS.linkSeconds * 1000);
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('notification_telegram_links').where('account_id', '=', accountId).where('expires_at', '<', new Date()).execute();
      await trx
        .insertInto('notification_telegram_links')
        .values({ token_hash: sha256Hex(token), account_id: accountId, expires_at: expiresAt })
        .execute();
      // Bounded: the oldest pending links go when an account asks for more than ten.
      const pending = await trx
        .selectFrom('notification_telegram_links')
        .select('token_hash')
        .where('account_id', '=', accountId)
        .where('connected_at', 'is', null)
        .orderBy('created_at', 'desc')
        .offset(LIMITS.pendingLinksPerAccount)
        .limit(1000)
        .execute();
      if (pending.length)
        await trx
          .deleteFrom('notification_telegram_links')
          .where(
            'token_hash',
            'in',
            pending.map((p) => p.token_hash),
          )
          .execute();
    });
    this.watch();
    return { token, url: `https://t.me/${username}?start=${token}`, bot: username, expires_at: expiresAt.toISOString(), status: 'pending' };
  }

  /** Whether the chat connected (reads the bot's new messages first). */
  async telegramLink(
    accountId: number,
    token: string,
  ): Promise<{ status: 'pending' | 'connected' | 'expired'; expires_at: string; destination: DestinationRow | null }> {
    const hash = sha256Hex(token);
    const find = () =>
      this.db.selectFrom('notification_telegram_links').selectAll().where('token_hash', '=', hash).where('account_id', '=', accountId).executeTakeFirst();
    let link = await find();
    if (!link) throw notificationsErrors.connect_token_not_found();
    if (!link.connected_at && new Date(link.expires_at) > new Date()) {
      await this.pollUpdates().catch((error) => this.logger.warn({ err: error }, 'could not read the Telegram bot updates'));
      link = (await find())!;
    }
    const destination = link.destination_id ? ((await this.byId(link.destination_id)) ?? null) : null;
    const status = link.connected_at ? 'connected' : new Date(link.expires_at) <= new Date() ? 'expired' : 'pending';
    return { status, expires_at: new Date(link.expires_at).toISOString(), destination };
  }

  /**
   * Reads the bot's messages since the stored offset and connects the chats that sent a valid
   * `/start <token>`. One read at a time in this process, at most one a second; several nodes may
   * read the same messages, and connecting is idempotent (the link is taken once).
   */
  pollUpdates(now = false): Promise<void> {
    if (this.polling) return this.polling;
    if (!now && Date.now() - this.lastPoll < 1000) return Promise.resolve();
    this.polling = this.readUpdates().finally(() => {
      this.polling = undefined;
      this.lastPoll = Date.now();
    });
    return this.polling;
  }

  private async readUpdates(): Promise<void> {
    const bot = this.requireBot();
    const offset = Number(await ensureSetting(this.db, 'telegram_update_offset', () => '0'));
    const { messages, nextOffset } = await bot.messages(offset);
    for (const message of messages) {
      const token = startToken(message.text);
      if (!token) continue;
      const connected = await this.connectChat(token, message.chatId, message.chatTitle);
      const reply = connected
        ? `Connected. Notifications from Presence will arrive in this chat (${connected}).`
        : 'This link has expired or was already used. Create a new one in the console.';
      const outcome = await bot.send(message.chatId, reply);
      if (!outcome.delivered) this.logger.warn({ chat: message.chatId, error: outcome.error }, 'could not answer a Telegram /start');
    }
    if (nextOffset !== offset)
      await this.db
        .updateTable('settings')
        .set({ value: String(nextOffset) })
        .where('key', '=', 'telegram_update_offset')
        .execute();
  }

  /** Takes the link once; answers the destination's name, or undefined for a bad or used token. */
  private async connectChat(token: string, chatId: string, chatTitle: string): Promise<string | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const link = await trx
        .updateTable('notification_telegram_links')
        .set({ connected_at: new Date() })
        .where('token_hash', '=', sha256Hex(token))
        .where('connected_at', 'is', null)
        .where('expires_at', '>', new Date())
        .returningAll()
        .executeTakeFirst();
      if (!link) return undefined;
      // The same chat connected twice is one destination, its title refreshed.
      const existing = await trx
        .selectFrom('notification_destinations')
        .select('id')
        .where('account_id', '=', link.account_id)
        .where('type', '=', 'telegram')
        .where('chat_id', '=', chatId)
        .executeTakeFirst();
      const name = `Telegram: ${chatTitle}`.slice(0, 100);
      const destination = existing
        ? await trx
            .updateTable('notification_destinations')
            .set({ chat_title: chatTitle, name, state: 'active', consecutive_failures: 0, last_error: null, updated_at: new Date() })
            .where('id', '=', existing.id)
            .returning(['id', 'name'])
            .executeTakeFirstOrThrow()
        : await trx
            .insertInto('notification_destinations')
            .values({ account_id: link.account_id, type: 'telegram', name, chat_id: chatId, chat_title: chatTitle })
            .returning(['id', 'name'])
            .executeTakeFirstOrThrow();
      await trx.updateTable('notification_telegram_links').set({ destination_id: destination.id }).where('token_hash', '=', link.token_hash).execute();
      this.logger.info({ account_id: link.account_id, destination_id: destination.id }, 'Telegram chat connected');
      return destination.name;
    });
  }

  /**
   * While links are pending, read the bot every 2 seconds so the person who pressed Start gets the
   * confirmation promptly even if nobody asks the token route. One timer; it stops when no link
   * is pending.
   */
  private watch(): void {
    if (this.timer || !this.bot) return;
    this.timer = setInterval(() => {
      void (async () => {
        const pending = await this.db
          .selectFrom('notification_telegram_links')
          .select('token_hash')
          .where('connected_at', 'is', null)
          .where('expires_at', '>', new Date())
          .limit(1)
          .executeTakeFirst();
        if (!pending) return this.stop();
        await this.pollUpdates();
      })().catch((error) => this.logger.warn({ err: error }, 'could not read the Telegram bot updates'));
    }, 2000);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
