/** How rules, inbox entries and messages read: the API's views and the notification's words. */
import type { Selectable } from 'kysely';
import type { NotificationsTable } from '../core/db/schema.js';
import { excerpt, formatDuration, type AlertConditions, type ConversationFacts, type Evaluation } from './conditions.js';
import type { NotificationItem, RuleRow, RuleView } from './types.js';

type NotificationRow = Selectable<NotificationsTable>;

const iso = (d: Date | string) => new Date(d).toISOString();

export function ruleView(row: RuleRow): RuleView {
  return {
    id: row.id,
    agent_id: row.agent_id,
    name: row.name,
    category: row.category,
    when: row.conditions as AlertConditions,
    destination_ids: row.destination_ids,
    enabled: row.enabled,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

export function itemView(row: NotificationRow): NotificationItem {
  return {
    id: Number(row.id),
    agent_id: row.agent_id,
    agent_name: row.agent_name,
    conversation_id: row.conversation_id,
    rule_id: row.rule_id,
    source: row.source,
    category: row.category,
    title: row.title,
    body: row.body,
    created_at: iso(row.created_at),
    read: row.read_at !== null,
  };
}

/** The inbox entry's words: the rule's name, then what happened and what the visitor said. */
export function notificationText(
  ruleName: string,
  agentName: string,
  conversation: ConversationFacts,
  evaluation: Evaluation,
): { title: string; body: string } {
  const lines: string[] = [];
  if (evaluation.matched) lines.push(`Visitor said: "${evaluation.matched.excerpt}"`);
  else {
    const first = conversation.transcript.find((t) => t.role === 'visitor');
    if (first) lines.push(`Visitor said: "${excerpt(first.text, 200)}"`);
  }
  if (evaluation.detail) lines.push(`${evaluation.detail.name}: ${evaluation.detail.value}`);
  lines.push(
    `${agentName} · ${formatDuration(conversation.durationSeconds)} · ${conversation.visitorTurns} visitor turn${conversation.visitorTurns === 1 ? '' : 's'}`,
  );
  return { title: ruleName.slice(0, 200), body: lines.join('\n') };
}

export function telegramText(title: string, body: string): string {
  return `🔔 ${title}\n${body}`.slice(0, 4096);
}
