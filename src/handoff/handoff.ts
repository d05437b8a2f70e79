/**
 * The data handoff: after each conversation, every enabled rule of its agent whose required details
 * were found is rendered and sent to its destination (a signed webhook through the delivery engine,
 * the console inbox, or the chat messenger). The conversation-ended hook only queues a job
 * (`handoff.conversation`); the job finds the details (kept per conversation, so a rerun does not
 * ask the model again) and enqueues one delivery per rule, keyed by rule and conversation.
 * While a conversation runs, `missingDetails` tells the answering engine which required details
 * are still missing, so the agent can ask for them.
 */
import type { Db } from '../core/db/database.js';
import type { Jobs, JobsLogger } from '../core/jobs.js';
import type { EndedConversation } from '../conversation/types.js';
import type { MissingDetail } from '../brain/engine.js';
import { DeliveryNotFailed, DeliveryNotFound, type DeliveryEngine, type TestSendResult, type WebhookDeliveryView } from '../delivery/engine.js';
import { CONTENT_TYPES, methodFor } from './formats.js';
import { renderTemplate, sampleValues, type TemplateValues } from './templates.js';
import { HandoffRules, type Rule } from './rules.js';
import type { Turn } from './details/offline.js';
import { detailParsers } from './details/load.js';
import type { DetailFinder } from './details/finder.js';
import type { DetailSpec } from './details/spec.js';
import { handoffErrors } from './errors.js';

export const HANDOFF_QUEUE = 'handoff.conversation';
export const OWNER_KIND = 'handoff';
export const USER_AGENT = 'Presence-DataHandoff/1.0';

/** A handoff message for the console inbox or the chat messenger. */
export interface HandoffMessage {
  accountId: number;
  agentId: number;
  conversationId: string | null;
  ruleId: number;
  title: string;
  body: string;
  /** The chat-messenger destination (Telegram destination id); null for the inbox. */
  chatDestinationId: number | null;
  /** The same for a retried job: a destination makes one message per key. */
  dedupeKey: string;
  test: boolean;
}

export interface HandoffHooks {
  /** The ended conversation (from the conversation records). */
  conversation(conversationId: string): Promise<EndedConversation | undefined>;
  /** Posts to the console inbox (a notification); provided by notifications. */
  postInbox?(message: HandoffMessage): Promise<void>;
  /** Sends through the chat messenger (Telegram); provided by notifications when it has it. */
  sendChat?(message: HandoffMessage): Promise<void>;
  /** Whether an id is one of the account's chats; given together with sendChat. */
  isChat?(accountId: number, destinationId: number): Promise<boolean>;
  /**
   * A handoff of this rule reached its destination for the conversation (the reports count them);
   * `db` is the transaction recording a webhook's outcome, when there is one. Must be idempotent.
   */
  delivered?(conversationId: string, ruleId: number, db?: Db): Promise<void>;
}

export interface ConversationSoFar {
  accountId: number;
  agentId: number;
  /** The turns so far, oldest first (the visitor's latest included). */
  transcript: Turn[];
}

export class Handoff {
  readonly rules: HandoffRules;

  constructor(
    private readonly db: Db,
    private readonly jobs: Jobs,
    private readonly deliveries: DeliveryEngine,
    private readonly finder: DetailFinder,
    private readonly hooks: HandoffHooks,
    private readonly logger: JobsLogger,
  ) {
    this.rules = new HandoffRules(db, { checkUrl: (url) => deliveries.checkUrl(url), telegram: hooks.sendChat && hooks.isChat });
    deliveries.owner(OWNER_KIND, {
      secret: async (ownerId) => (await this.rules.byId(Number(ownerId)))?.secret ?? null,
      outcome: async (event, trx) => {
        await this.rules.recordOutcome(event, trx);
        if (event.outcome === 'delivered' && event.conversationId) await this.hooks.delivered?.(event.conversationId, Number(event.owner.id), trx);
      },
    });
  }

  async start(): Promise<void> {
    await this.jobs.work<{ conversationId: string }>(
      HANDOFF_QUEUE,
      { retryLimit: 10, retryDelay: 5, retryBackoff: true, expireInSeconds: 300, concurrency: 2 },
      ({ conversationId }) => this.run(conversationId),
    );
  }

  /** The conversation-ended hook: queues the handoff job (never delivers inline). */
  readonly onConversationEnded = async (conversation: EndedConversation): Promise<void> => {
    if (!(await this.hasRules(conversation.agentId))) return;
    await this.jobs.send(HANDOFF_QUEUE, { conversationId: conversation.conversationId }, { singletonKey: conversation.conversationId });
  };

  /** Required details of the agent's active rules not yet found in the conversation so far. */
  readonly missingDetails = async (conversation: ConversationSoFar): Promise<MissingDetail[]> => {
    const rules = (await this.rules.list(conversation.agentId)).filter((r) => r.accountId === conversation.accountId && applies(r));
    const required = uniqueDetails(rules.flatMap((r) => r.details.filter((d) => d.required)));
    if (!required.length) return [];
    const { extractOffline } = await detailParsers.get();
    const found = extractOffline(conversation.transcript, required, { reference: new Date() });
    return required.filter((d) => !found[d.name]).map((d) => ({ name: d.name, description: d.description }));
  };

  private async hasRules(agentId: number): Promise<boolean> {
    const row = await this.db.selectFrom('handoff_rules').select('id').where('agent_id', '=', agentId).where('enabled', '=', true).limit(1).executeTakeFirst();
    return !!row;
  }

  /** The job: details found, then one delivery per rule that applies. Safe to run twice. */
  async run(conversationId: string): Promise<void> {
    const conversation = await this.hooks.conversation(conversationId);
    if (!conversation) return;
    const rules = (await this.rules.list(conversation.agentId)).filter((r) => r.accountId === conversation.accountId && applies(r));
    if (!rules.length) return;
    const found = await this.findings(conversation, uniqueDetails(rules.flatMap((r) => r.details)));
    const { unverifiedDetails } = await detailParsers.get();
    for (const rule of rules) {
      const missing = rule.details.filter((d) => d.required && !found[d.name]);
      if (missing.length) {
        this.logger.info(
          { rule: rule.id, conversation: conversationId, missing: missing.map((d) => d.name) },
          'handoff not sent: required details were not collected',
        );
        continue;
      }
      const values: TemplateValues = {
        details: Object.fromEntries(rule.details.map((d) => [d.name, found[d.name] ?? ''])),
        visitor: conversation.visitor,
        agentName: conversation.agentName,
        ruleName: rule.name,
        conversationTime: conversation.startedAt,
        visitorTurns: conversation.visitorTurns,
        unverified: unverifiedDetails(rule.details, found),
      };
      await this.deliver(rule, values, conversationId, false);
    }
  }

  private async findings(conversation: EndedConversation, details: DetailSpec[]): Promise<Record<string, string>> {
    const kept = await this.db.selectFrom('handoff_findings').select('found').where('conversation_id', '=', conversation.conversationId).executeTakeFirst();
    const known = (kept?.found ?? {}) as Record<string, string>;
    const unasked = details.filter((d) => !(d.name in known));
    if (!unasked.length) return known;
    const result = await this.finder.find({ transcript: conversation.transcript, details: unasked, reference: conversation.startedAt });
    // Details asked and not found are kept as '' so a rerun does not ask again.
    const found = { ...known, ...Object.fromEntries(unasked.map((d) => [d.name, result.values[d.name] ?? ''])) };
    await this.db
      .insertInto('handoff_findings')
      .values({ conversation_id: conversation.conversationId, agent_id: conversation.agentId, found: JSON.stringify(found), engine: result.engine })
      .onConflict((oc) => oc.column('conversation_id').doUpdateSet({ found: JSON.stringify(found), engine: result.engine }))
      .execute();
    return found;
  }

  private async deliver(rule: Rule, values: TemplateValues, conversationId: string | null, test: boolean): Promise<TestSendResult | undefined> {
    const destination = rule.destination;
    const dedupeKey = `${OWNER_KIND}:${rule.id}:${conversationId ?? 'test'}`;
    if (destination.type === 'webhook') {
      const format = destination.format ?? 'json';
      const input = {
        accountId: rule.accountId,
        owner: { kind: OWNER_KIND, id: String(rule.id) },
        conversationId,
        url: destination.url!,
        method: destination.method ?? methodFor(format),
        contentType: CONTENT_TYPES[format] ?? undefined,
        headers: destination.headers ?? {},
        payload: renderTemplate(destination.template, format, values),
        secret: rule.secret,
        userAgent: USER_AGENT,
      };
      if (test) return this.deliveries.sendNow(input);
      await this.deliveries.enqueue({ ...input, dedupeKey });
      return undefined;
    }
    const message: HandoffMessage = {
      accountId: rule.accountId,
      agentId: rule.agentId,
      conversationId,
      ruleId: rule.id,
      title: rule.name,
      body: renderTemplate(destination.template, 'message', values),
      chatDestinationId: destination.destination_id ?? null,
      dedupeKey,
      test,
    };
    const send = destination.type === 'inbox' ? this.hooks.postInbox : this.hooks.sendChat;
    if (!send) {
      const error = `the ${destination.type === 'inbox' ? 'console inbox' : 'chat messenger'} is not available on this deployment`;
      if (test) return { delivery_id: '', delivered: false, status_code: null, error, duration_ms: 0 };
      this.logger.warn({ rule: rule.id }, `handoff not sent: ${error}`);
      return undefined;
    }
    const started = performance.now();
    try {
      await send(message);
      if (!test && conversationId) await this.hooks.delivered?.(conversationId, rule.id);
      return { delivery_id: '', delivered: true, status_code: null, error: null, duration_ms: Math.round(performance.now() - started) };
    } catch (error) {
      if (!test) throw error; // the job runs again; the destination dedupes on the key
      return { delivery_id: '', delivered: false, status_code: null, error: (error as Error).message, duration_ms: Math.round(performance.now() - started) };
    }
  }

  /** "Send test": one delivery now with sample values; a success resumes a paused rule. */
  async test(accountId: number, agentId: number, ruleId: number, agentName: string): Promise<TestSendResult> {
    const rule = await this.rules.get(accountId, agentId, ruleId);
    const sample = sampleValues(rule.details.map((d) => d.name));
    const result = (await this.deliver(rule, { ...sample, agentName, ruleName: rule.name, visitor: {} }, null, true))!;
    if (result.delivered) await this.rules.resume(rule.id);
    return result;
  }

  async deliveryLog(accountId: number, agentId: number, ruleId: number, page: { limit: number; offset: number }): Promise<WebhookDeliveryView[]> {
    const rule = await this.rules.get(accountId, agentId, ruleId);
    // Handoff deliveries are all signed webhooks (the http channel): none is ever skipped.
    return (await this.deliveries.list({ kind: OWNER_KIND, id: String(rule.id) }, page)) as WebhookDeliveryView[];
  }

  async replay(accountId: number, agentId: number, ruleId: number, deliveryId: string): Promise<WebhookDeliveryView> {
    const rule = await this.rules.get(accountId, agentId, ruleId);
    try {
      return (await this.deliveries.replay({ kind: OWNER_KIND, id: String(rule.id) }, deliveryId)) as WebhookDeliveryView;
    } catch (error) {
      if (error instanceof DeliveryNotFound) throw handoffErrors.delivery_not_found();
      if (error instanceof DeliveryNotFailed) throw handoffErrors.delivery_not_failed();
      throw error;
    }
  }

  async remove(accountId: number, agentId: number, ruleId: number): Promise<void> {
    const rule = await this.rules.remove(accountId, agentId, ruleId);
    await this.deliveries.forget({ kind: OWNER_KIND, id: String(rule.id) });
  }
}

/** A rule sends only when enabled and not paused. */
function applies(rule: Rule): boolean {
  return rule.enabled && rule.state !== 'paused';
}

function uniqueDetails(details: DetailSpec[]): DetailSpec[] {
  const byName = new Map<string, DetailSpec>();
  for (const d of details) if (!byName.has(d.name)) byName.set(d.name, d);
  return [...byName.values()];
}
