/**
 * Data-handoff rules (contract: "Data handoff (the v2/rules routes)"): storage, the checks made
 * when a rule is saved (details, destination, template, custom headers, private addresses), each
 * webhook's own `whsec_` secret, and the rule's state as its deliveries turn out:
 *
 *   active ──(a 4xx or a redirect)──▶ needs_attention ──(a delivery delivered, or the destination edited)──▶ active
 *   any ──(10 failed deliveries in a row)──▶ paused ──(a successful test send)──▶ active
 */
import { sql } from 'kysely';
import type { Db } from '../core/db/database.js';
import { ValidationFailed, validationItem, type ValidationItem } from '../core/errors.js';
import { maskHeaders, maskSecret, newWebhookSecret } from '../delivery/signing.js';
import { RESERVED_HEADERS, type DeliveryOutcomeEvent } from '../delivery/engine.js';
import { BUILT_INS, checkTemplate, defaultTemplate } from './templates.js';
import { FORMATS, methodFor, type Format } from './formats.js';
import type { DetailKind, DetailSpec } from './details/spec.js';
import { handoffErrors } from './errors.js';

export const RULES_PER_AGENT = 20;
/** Failed deliveries in a row that pause a rule (interface: Delivery outcomes). */
export const PAUSE_AFTER_FAILURES = 10;
export const DESTINATION_TYPES = ['webhook', 'inbox', 'telegram'] as const;
export type DestinationType = (typeof DESTINATION_TYPES)[number];
export type RuleState = 'active' | 'needs_attention' | 'paused';

export interface Destination {
  type: DestinationType;
  url?: string;
  method?: 'POST' | 'GET';
  format?: Format;
  headers?: Record<string, string>;
  /** Telegram only: the account's Telegram destination (GET /v1/notifications/destinations). */
  destination_id?: number;
  template: string;
}

export interface Rule {
  id: number;
  accountId: number;
  agentId: number;
  name: string;
  details: DetailSpec[];
  destination: Destination;
  enabled: boolean;
  state: RuleState;
  secret: string;
  consecutiveFailures: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface RuleInput {
  name: string;
  details: Array<{ name: string; description?: string; required?: boolean; type?: DetailKind }>;
  destination: Partial<Destination> & { type: DestinationType };
  enabled: boolean;
}

export interface RulePatch {
  name?: string;
  details?: RuleInput['details'];
  destination?: Partial<Destination>;
  enabled?: boolean;
  rotate_secret?: boolean;
}

export interface RuleView {
  id: number;
  agent_id: number;
  name: string;
  details: DetailSpec[];
  destination: Destination;
  enabled: boolean;
  state: RuleState;
  secret?: string;
  consecutive_failures: number;
  created_at: string;
  updated_at: string;
}

export interface RulesOptions {
  /** The delivery engine's check of a webhook URL (422 private_address, invalid_url). */
  checkUrl(url: string): Promise<void>;
  /**
   * Answers whether an id is one of the account's Telegram chats; absent when this deployment
   * has no chat messenger (no TELEGRAM_BOT_TOKEN).
   */
  telegram?: (accountId: number, destinationId: number) => Promise<boolean>;
}

const RESERVED_DETAIL_NAMES = new Set<string>([...BUILT_INS, 'visitor']);

export class HandoffRules {
  constructor(
    private readonly db: Db,
    private readonly options: RulesOptions,
  ) {}

  view(rule: Rule, showSecret: boolean): RuleView {
    return {
      id: rule.id,
      agent_id: rule.agentId,
      name: rule.name,
      details: rule.details,
      destination: showSecret || !rule.destination.headers ? rule.destination : { ...rule.destination, headers: maskHeaders(rule.destination.headers) },
      enabled: rule.enabled,
      state: rule.state,
      ...(rule.destination.type === 'webhook' && { secret: showSecret ? rule.secret : maskSecret(rule.secret) }),
      consecutive_failures: rule.consecutiveFailures,
      created_at: rule.createdAt.toISOString(),
      updated_at: rule.updatedAt.toISOString(),
    };
  }

  async list(agentId: number): Promise<Rule[]> {
    const rows = await this.db.selectFrom('handoff_rules').selectAll().where('agent_id', '=', agentId).orderBy('id').execute();
    return rows.map(toRule);
  }

  async get(accountId: number, agentId: number, ruleId: number): Promise<Rule> {
    const row = await this.db
      .selectFrom('handoff_rules')
      .selectAll()
      .where('id', '=', ruleId)
      .where('agent_id', '=', agentId)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    if (!row) throw handoffErrors.rule_not_found();
    return toRule(row);
  }

  async byId(ruleId: number): Promise<Rule | undefined> {
    const row = await this.db.selectFrom('handoff_rules').selectAll().where('id', '=', ruleId).executeTakeFirst();
    return row && toRule(row);
  }

  async create(accountId: number, agentId: number, input: RuleInput): Promise<Rule> {
    const details = checkDetails(input.details, ['body', 'details']);
    const destination = await this.checkDestination(accountId, input.destination, details, undefined);
    return this.db.transaction().execute(async (trx) => {
      // Counted under a lock on the agent's row, so two creates at once cannot both pass the limit.
      await trx.selectFrom('agents').select('id').where('id', '=', agentId).forUpdate().execute();
      const { count } = await trx
        .selectFrom('handoff_rules')
        .select((eb) => eb.fn.countAll<string>().as('count'))
        .where('agent_id', '=', agentId)
        .executeTakeFirstOrThrow();
      if (Number(count) >= RULES_PER_AGENT) throw handoffErrors.rule_limit(`An agent has at most ${RULES_PER_AGENT} handoff rules`);
      const row = await trx
        .insertInto('handoff_rules')
        .values({
          account_id: accountId,
          agent_id: agentId,
          name: input.name,
          details: JSON.stringify(details),
          destination: JSON.stringify(destination),
          enabled: input.enabled,
          secret: newWebhookSecret(),
          updated_at: new Date(),
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return toRule(row);
    });
  }

  async update(accountId: number, agentId: number, ruleId: number, patch: RulePatch): Promise<Rule> {
    const rule = await this.get(accountId, agentId, ruleId);
    const details = patch.details ? checkDetails(patch.details, ['body', 'details']) : rule.details;
    let destination = rule.destination;
    if (patch.destination || patch.details) {
      const merged: Partial<Destination> & { type: DestinationType } = {
        ...rule.destination,
        ...patch.destination,
        type: patch.destination?.type ?? rule.destination.type,
      };
      if (merged.type !== 'webhook')
        for (const key of ['url', 'method', 'format', 'headers'] as const) if (!patch.destination || !(key in patch.destination)) delete merged[key];
      if (merged.type !== 'telegram' && !(patch.destination && 'destination_id' in patch.destination)) delete merged.destination_id;
      // A template the service wrote follows the details and format; one the owner wrote is theirs.
      const wasDefault =
        rule.destination.template ===
        defaultTemplate(
          messageFormat(rule.destination),
          rule.details.map((d) => d.name),
        );
      if (wasDefault && patch.destination?.template === undefined) delete merged.template;
      if (patch.destination?.format && !patch.destination.method && merged.type === 'webhook') merged.method = methodFor(patch.destination.format);
      destination = await this.checkDestination(accountId, merged, details, patch.destination ? 'body' : undefined);
    }
    const destinationChanged = JSON.stringify(destination) !== JSON.stringify(rule.destination);
    const row = await this.db
      .updateTable('handoff_rules')
      .set({
        ...(patch.name !== undefined && { name: patch.name }),
        ...(patch.enabled !== undefined && { enabled: patch.enabled }),
        details: JSON.stringify(details),
        destination: JSON.stringify(destination),
        ...(patch.rotate_secret && { secret: newWebhookSecret() }),
        // The owner fixed the destination: it no longer needs attention (a paused rule waits for a test).
        ...(destinationChanged && rule.state === 'needs_attention' && { state: 'active' as const }),
        updated_at: new Date(),
      })
      .where('id', '=', ruleId)
      .returningAll()
      .executeTakeFirstOrThrow();
    return toRule(row);
  }

  async remove(accountId: number, agentId: number, ruleId: number): Promise<Rule> {
    const rule = await this.get(accountId, agentId, ruleId);
    await this.db.deleteFrom('handoff_rules').where('id', '=', ruleId).execute();
    return rule;
  }

  /** A successful test send: the rule is active again, its count of failures cleared. */
  async resume(ruleId: number): Promise<void> {
    await this.db.updateTable('handoff_rules').set({ state: 'active', consecutive_failures: 0, updated_at: new Date() }).where('id', '=', ruleId).execute();
  }

  /** The delivery engine's outcome hook (in the transaction that records the outcome). */
  async recordOutcome(event: DeliveryOutcomeEvent, trx: Db): Promise<void> {
    const id = Number(event.owner.id);
    if (event.outcome === 'delivered') {
      await trx
        .updateTable('handoff_rules')
        .set({ consecutive_failures: 0, state: sql<RuleState>`CASE WHEN state = 'needs_attention' THEN 'active' ELSE state END`, updated_at: new Date() })
        .where('id', '=', id)
        .execute();
      return;
    }
    await trx
      .updateTable('handoff_rules')
      .set({
        consecutive_failures: sql<number>`consecutive_failures + 1`,
        state: sql<RuleState>`CASE WHEN consecutive_failures + 1 >= ${PAUSE_AFTER_FAILURES} THEN 'paused'
                                   WHEN state = 'paused' THEN 'paused'
                                   WHEN ${event.outcome === 'rejected'} THEN 'needs_attention'
                                   ELSE state END`,
        updated_at: new Date(),
      })
      .where('id', '=', id)
      .execute();
  }

  private async checkDestination(
    accountId: number,
    input: Partial<Destination> & { type: DestinationType },
    details: DetailSpec[],
    where: 'body' | undefined,
  ): Promise<Destination> {
    const loc = (...path: string[]) => [where ?? 'body', 'destination', ...path];
    const problems: ValidationItem[] = [];
    const names = details.map((d) => d.name);
    if (input.type === 'telegram' && !this.options.telegram) {
      throw handoffErrors.destination_unavailable();
    }
    if (input.type !== 'telegram' && input.destination_id !== undefined)
      problems.push(validationItem(loc('destination_id'), 'destination_id is for a telegram destination only', input.destination_id, 'extra_forbidden'));
    if (input.type !== 'webhook') {
      for (const key of ['url', 'method', 'format', 'headers'] as const) {
        if (input[key] !== undefined) problems.push(validationItem(loc(key), `${key} is for a webhook destination only`, input[key], 'extra_forbidden'));
      }
      if (input.type === 'telegram' && input.destination_id === undefined)
        problems.push(
          validationItem(loc('destination_id'), 'Field required: the Telegram destination to send to (GET /v1/notifications/destinations)', null, 'missing'),
        );
      const template = input.template ?? defaultTemplate('message', names);
      for (const problem of checkTemplate(template, 'message', names)) problems.push(validationItem(loc('template'), problem, template));
      if (input.type === 'telegram' && input.destination_id !== undefined && !(await this.options.telegram!(accountId, input.destination_id))) {
        problems.push(
          validationItem(loc('destination_id'), 'not a Telegram destination of this account (GET /v1/notifications/destinations)', input.destination_id),
        );
      }
      if (problems.length) throw new ValidationFailed(problems);
      return { type: input.type, ...(input.type === 'telegram' && { destination_id: input.destination_id }), template };
    }
    if (!input.url) problems.push(validationItem(loc('url'), 'Field required', null, 'missing'));
    const format: Format = input.format ?? (input.method === 'GET' ? 'query' : 'json');
    const method = input.method ?? methodFor(format);
    if (method !== methodFor(format)) {
      problems.push(
        validationItem(
          loc('method'),
          method === 'GET' ? 'a GET webhook sends its details as query parameters: use format "query"' : 'format "query" is sent with method GET',
          method,
        ),
      );
    }
    const headers = input.headers ?? {};
    for (const name of Object.keys(headers)) {
      if (RESERVED_HEADERS.includes(name.toLowerCase()))
        problems.push(validationItem(loc('headers', name), `${name} is set by the service on every delivery and cannot be replaced`, headers[name]));
    }
    const template = input.template ?? defaultTemplate(format, names);
    for (const problem of checkTemplate(template, format, names)) problems.push(validationItem(loc('template'), problem, template));
    if (problems.length) throw new ValidationFailed(problems);
    await this.options.checkUrl(input.url!);
    return { type: 'webhook', url: input.url!, method, format, headers, template };
  }
}

function messageFormat(destination: Destination): Format | 'message' {
  return destination.type === 'webhook' ? (destination.format ?? 'json') : 'message';
}

function checkDetails(input: RuleInput['details'], at: Array<string | number>): DetailSpec[] {
  const problems: ValidationItem[] = [];
  const seen = new Set<string>();
  const details = input.map((d, i) => {
    if (RESERVED_DETAIL_NAMES.has(d.name))
      problems.push(validationItem([...at, i, 'name'], `"${d.name}" is a built-in template variable; name the detail differently`, d.name));
    if (seen.has(d.name)) problems.push(validationItem([...at, i, 'name'], `two details are named "${d.name}"`, d.name));
    seen.add(d.name);
    return { name: d.name, description: d.description ?? '', required: d.required ?? false, ...(d.type && { type: d.type }) };
  });
  if (problems.length) throw new ValidationFailed(problems);
  return details;
}

function toRule(row: {
  id: number;
  account_id: number;
  agent_id: number;
  name: string;
  details: unknown;
  destination: unknown;
  enabled: boolean;
  state: RuleState;
  secret: string;
  consecutive_failures: number;
  created_at: Date;
  updated_at: Date;
}): Rule {
  return {
    id: row.id,
    accountId: row.account_id,
    agentId: row.agent_id,
    name: row.name,
    details: row.details as DetailSpec[],
    destination: row.destination as Destination,
    enabled: row.enabled,
    state: row.state,
    secret: row.secret,
    consecutiveFailures: row.consecutive_failures,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}

export { FORMATS };
