/**
 * Notifications: alert rules per agent (rules.ts), the inbox (inbox.ts), prefs (prefs.ts), and
 * sending to destinations (sends.ts), composed here with the ended hook that joins them.
 *
 * Entry: `conversationEnded` (a ConversationEndedHook app.ts wires to the conversation records'
 * durable ended job). It evaluates the agent's enabled rules; each rule that fires makes one inbox
 * notification (keyed by rule and conversation, so a re-run hook adds nothing) and, in the same
 * transaction, one durable send job per destination of the rule, unless the agent's prefs turn the
 * category off; during quiet hours the sends wait for the window's end. Every send goes through the
 * shared delivery engine, the one retry engine (webhooks signed; Telegram as its `telegram`
 * channel; one schedule, log, outcomes and replay: sends.ts, deliveries.ts).
 *
 * For handoff's destinations it offers two small channels (`channels`): a post to the console
 * inbox, and a Telegram message to one of the account's connected chats.
 */
import type { Db } from '../core/db/database.js';
import type { Jobs } from '../core/jobs.js';
import type { EndedConversation } from '../conversation/types.js';
import { evaluate, type AlertConditions } from './conditions.js';
import { quietUntil } from './quiet-hours.js';
import { Destinations, destinationView, type DestinationRow, type Logger } from './destinations.js';
import type { TelegramBot } from './telegram.js';
import { AlertRules } from './rules.js';
import { NotificationPrefs } from './prefs.js';
import { Inbox } from './inbox.js';
import { Sends } from './sends.js';
import { notificationText } from './texts.js';
import type { NotificationChannels, NotificationDeliveries, NotificationHooks, NotificationSettings } from './types.js';

export class NotificationService {
  readonly destinations: Destinations;
  readonly channels: NotificationChannels;
  readonly rules: AlertRules;
  readonly prefs: NotificationPrefs;
  readonly inbox: Inbox;
  readonly sends: Sends;

  constructor(
    private readonly db: Db,
    jobs: Jobs,
    private readonly hooks: NotificationHooks,
    settings: NotificationSettings,
    logger: Logger,
    bot: TelegramBot | undefined,
    private readonly deliveries: NotificationDeliveries,
  ) {
    this.destinations = new Destinations(db, bot, logger, (url) => this.checkWebhookUrl(url));
    this.rules = new AlertRules(db, hooks, settings);
    this.prefs = new NotificationPrefs(db, hooks);
    this.inbox = new Inbox(db);
    this.sends = new Sends(db, jobs, this.destinations, this.rules, hooks, bot, deliveries);
    this.channels = {
      postToInbox: (post) => this.inbox.post(post),
      sendTelegram: (post) => this.sends.sendTelegram(post),
      isTelegramDestination: async (accountId, destinationId) => !!(await this.sends.telegramDestination(accountId, destinationId)),
    };
  }

  private checkWebhookUrl(url: string): Promise<void> {
    return this.deliveries.checkUrl(url);
  }

  start(): Promise<void> {
    return this.sends.start();
  }

  stop(): void {
    this.destinations.stop();
  }

  // ---------- the ended hook ----------

  /** The ConversationEndedHook: idempotent (one notification per rule and conversation). */
  async conversationEnded(conversation: EndedConversation): Promise<void> {
    const rules = await this.rules.enabledFor(conversation.accountId, conversation.agentId);
    if (!rules.length) return;
    const prefs = await this.prefs.load(conversation.agentId);
    for (const rule of rules) {
      const evaluation = await evaluate(rule.conditions as AlertConditions, conversation, this.hooks.findDetail);
      if (!evaluation.fires) continue;
      const text = notificationText(rule.name, conversation.agentName, conversation, evaluation);
      // Tagged first (idempotent), so a conversation in the inbox already carries its category.
      await this.hooks.tagConversation(conversation.conversationId, rule.category);
      await this.db.transaction().execute(async (trx) => {
        const id = await this.inbox.insert(trx, {
          account_id: conversation.accountId,
          agent_id: conversation.agentId,
          agent_name: conversation.agentName,
          conversation_id: conversation.conversationId,
          rule_id: rule.id,
          source: 'alert_rule',
          dedupe_key: `rule:${rule.id}:${conversation.conversationId}`,
          category: rule.category,
          title: text.title,
          body: text.body,
        });
        if (!id || prefs.categories[rule.category] === false || !rule.destination_ids.length) return;
        const hold = quietUntil(prefs.quiet_hours, new Date());
        const destinations = await trx
          .selectFrom('notification_destinations')
          .selectAll()
          .where('account_id', '=', conversation.accountId)
          .where('id', 'in', rule.destination_ids)
          .where('enabled', '=', true)
          .execute();
        const item = {
          id: Number(id),
          agent_id: conversation.agentId,
          agent_name: conversation.agentName,
          conversation_id: conversation.conversationId,
          rule_id: rule.id,
          rule_name: rule.name,
          category: rule.category,
          ...text,
          created_at: new Date().toISOString(),
        };
        for (const destination of destinations) await this.sends.queue(trx, destination, id, item, hold);
      });
    }
  }

  view(row: DestinationRow, showSecret: boolean) {
    return destinationView(row, showSecret);
  }
}
