/** Shared pieces of the notification tests: ending conversations and waiting for the inbox. */
import type { TestApp } from '../support/app.js';
import { started, stopSession, sleep } from '../sessions/helpers.js';

export { makeAgent, sleep } from '../sessions/helpers.js';
import { until } from '../support/until.js';

export { until };
export { assertCoded, itemAt, validationItems } from '../agents/helpers.js';

/**
 * A real conversation: a render-mode session starts (its record begins), the visitor's and the
 * agent's turns are recorded, the session is stopped (the record ends and its durable ended job
 * runs the hooks). Answers the conversation id.
 */
export async function converse(t: TestApp, agentId: number, visitorSays: string[], key?: string): Promise<string> {
  const session = await started(t, { agent_id: agentId, mode: 'render' }, key);
  const id = session.session_id as string;
  for (const text of visitorSays) {
    await t.context.conversations.addTurn(id, { role: 'visitor', text });
    await t.context.conversations.addTurn(id, { role: 'agent', text: 'Thanks, noted.' });
  }
  await stopSession(t, id, key);
  return id;
}

/** Waits until the inbox has a notification of this conversation (answers it). */
export async function notificationOf(t: TestApp, conversationId: string, key?: string, timeoutMs = 10_000): Promise<any> {
  return until(
    async () => {
      const res = await t.request('GET', '/v1/notifications?limit=200', { key });
      return res.body.items?.find((i: any) => i.conversation_id === conversationId);
    },
    timeoutMs,
    `a notification of ${conversationId}`,
  );
}

/** Waits until the ended job of a conversation has run every hook (its record is ended and idle). */
export async function endedHandled(t: TestApp, conversationId: string): Promise<void> {
  await until(
    async () => {
      const { rows } = await (await import('kysely')).sql<{
        n: string;
      }>`SELECT count(*) AS n FROM pgboss.job WHERE name = 'conversation.ended' AND singleton_key = ${conversationId} AND state IN ('created', 'retry', 'active')`.execute(
        t.database.db,
      );
      return Number(rows[0]!.n) === 0 && (await t.context.conversations.ended(conversationId)) !== undefined;
    },
    10_000,
    'the ended job',
  );
}
