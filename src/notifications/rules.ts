/** Alert rules per agent: saved, tested against a sample or a past conversation, drafted from words. */
import type { Db } from '../core/db/database.js';
import { ValidationFailed, validationItem } from '../core/errors.js';
import { evaluate, type ConversationFacts } from './conditions.js';
import { buildWithModel, parseRequest, type BuilderAnswer, type ProposedRule } from './builder.js';
import { notificationText, ruleView } from './texts.js';
import {
  RULE_LIMITS,
  type AlertRuleInput,
  type NotificationHooks,
  type NotificationSettings,
  type RuleRow,
  type SampleConversation,
  type TestAnswer,
} from './types.js';
import { notificationsErrors } from './errors.js';

export class AlertRules {
  constructor(
    private readonly db: Db,
    private readonly hooks: NotificationHooks,
    private readonly settings: NotificationSettings,
  ) {}

  async list(accountId: number, agentId: number): Promise<RuleRow[]> {
    await this.hooks.agent(accountId, agentId);
    return this.db.selectFrom('notification_rules').selectAll().where('account_id', '=', accountId).where('agent_id', '=', agentId).orderBy('id').execute();
  }

  async get(accountId: number, agentId: number, ruleId: number): Promise<RuleRow> {
    await this.hooks.agent(accountId, agentId);
    const row = await this.db
      .selectFrom('notification_rules')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('agent_id', '=', agentId)
      .where('id', '=', ruleId)
      .executeTakeFirst();
    if (!row) throw notificationsErrors.rule_not_found(`No alert rule with id ${ruleId} for this agent`);
    return row;
  }

  /** Destination ids must be the account's own: 422 naming the first unknown one. */
  private async checkDestinations(accountId: number, ids: number[], loc: Array<string | number>): Promise<void> {
    if (!ids.length) return;
    const rows = await this.db.selectFrom('notification_destinations').select('id').where('account_id', '=', accountId).where('id', 'in', ids).execute();
    const known = new Set(rows.map((r) => r.id));
    const index = ids.findIndex((id) => !known.has(id));
    if (index >= 0)
      throw new ValidationFailed([
        validationItem([...loc, index], `No notification destination with id ${ids[index]} in this account`, ids[index], 'unknown_destination'),
      ]);
  }

  async create(accountId: number, agentId: number, input: AlertRuleInput): Promise<RuleRow> {
    await this.hooks.agent(accountId, agentId);
    await this.checkDestinations(accountId, input.destination_ids, ['body', 'destination_ids']);
    const { count } = await this.db
      .selectFrom('notification_rules')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .where('agent_id', '=', agentId)
      .executeTakeFirstOrThrow();
    if (Number(count) >= RULE_LIMITS.rulesPerAgent)
      throw notificationsErrors.rule_limit(`An agent has at most ${RULE_LIMITS.rulesPerAgent} alert rules; delete one first`);
    return this.db
      .insertInto('notification_rules')
      .values({
        account_id: accountId,
        agent_id: agentId,
        name: input.name,
        category: input.category,
        conditions: JSON.stringify(input.when),
        destination_ids: input.destination_ids,
        enabled: input.enabled,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  async update(accountId: number, agentId: number, ruleId: number, input: AlertRuleInput): Promise<RuleRow> {
    await this.get(accountId, agentId, ruleId);
    await this.checkDestinations(accountId, input.destination_ids, ['body', 'destination_ids']);
    return this.db
      .updateTable('notification_rules')
      .set({
        name: input.name,
        category: input.category,
        conditions: JSON.stringify(input.when),
        destination_ids: input.destination_ids,
        enabled: input.enabled,
        updated_at: new Date(),
      })
      .where('id', '=', ruleId)
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  async delete(accountId: number, agentId: number, ruleId: number): Promise<RuleRow[]> {
    await this.get(accountId, agentId, ruleId);
    await this.db.deleteFrom('notification_rules').where('id', '=', ruleId).execute();
    return this.list(accountId, agentId);
  }

  /** The enabled rules of an agent, in order (the ended hook evaluates them). */
  enabledFor(accountId: number, agentId: number): Promise<RuleRow[]> {
    return this.db
      .selectFrom('notification_rules')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('agent_id', '=', agentId)
      .where('enabled', '=', true)
      .orderBy('id')
      .execute();
  }

  /** Whether a rule (saved, or as given) would fire for a sample or a past conversation. */
  async test(
    accountId: number,
    agentId: number,
    request: { rule_id?: number; rule?: AlertRuleInput; conversation_id?: string; sample?: SampleConversation },
  ): Promise<TestAnswer> {
    const agent = await this.hooks.agent(accountId, agentId);
    const rule = request.rule_id !== undefined ? ruleView(await this.get(accountId, agentId, request.rule_id)) : request.rule!;
    let facts: ConversationFacts & { conversationId: string | null; agentName: string };
    if (request.conversation_id) {
      const conversation = await this.hooks.conversation(accountId, request.conversation_id);
      if (!conversation) throw notificationsErrors.conversation_not_found(`No ended conversation with id ${request.conversation_id} in this account`);
      facts = { ...conversation, agentName: conversation.agentName };
    } else {
      const sample = request.sample!;
      const start = Date.now() - sample.duration_seconds * 1000;
      const transcript = sample.transcript.map((turn, i) => ({ role: turn.role, text: turn.text, at: new Date(start + i * 1000).toISOString() }));
      facts = {
        conversationId: null,
        agentName: agent.name,
        transcript,
        durationSeconds: sample.duration_seconds,
        visitorTurns: sample.visitor_turns ?? transcript.filter((t) => t.role === 'visitor').length,
        visitor: sample.visitor ?? {},
      };
    }
    const evaluation = await evaluate(rule.when, facts, this.hooks.findDetail);
    return {
      would_fire: evaluation.fires,
      conditions: evaluation.checks,
      notification: evaluation.fires ? { category: rule.category, ...notificationText(rule.name, facts.agentName, facts, evaluation) } : null,
    };
  }

  async build(accountId: number, agentId: number, message: string, draft?: Partial<ProposedRule>): Promise<BuilderAnswer> {
    await this.hooks.agent(accountId, agentId);
    if (draft?.destination_ids?.length) await this.checkDestinations(accountId, draft.destination_ids, ['body', 'draft', 'destination_ids']);
    return this.settings.llm ? buildWithModel(this.settings.llm, message, draft) : parseRequest(message, draft);
  }
}
