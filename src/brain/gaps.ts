/**
 * Knowledge gaps: questions the agent could not answer, grouped with the same question asked in
 * other words (their stemmed content words overlap enough) and counted. The owner answers a gap
 * (the answer becomes knowledge the agent uses at once) or dismisses it. Bounded per agent.
 */
import { sql } from 'kysely';
import type { Db } from '../core/db/database.js';
import type { AgentDirectory, KnowledgeService } from '../knowledge/service.js';
import { iso } from '../knowledge/service.js';
import { terms } from './text.js';
import { brainErrors } from './errors.js';

export const MAX_GAPS_PER_AGENT = 1000;
export type GapStatus = 'open' | 'answered' | 'dismissed';

export interface GapRecorder {
  /** Records an unanswered question; answers the gap's id (undefined for a question without content words). */
  record(input: { accountId: number; agentId: number; question: string; conversationId?: string }): Promise<number | undefined>;
}

/** Two questions are one gap when most of their content words are shared. */
export function sameQuestion(a: string[], b: string[]): boolean {
  const left = new Set(a);
  const right = new Set(b);
  let shared = 0;
  for (const term of left) if (right.has(term)) shared++;
  if (!shared) return false;
  const union = left.size + right.size - shared;
  const jaccard = shared / union;
  return jaccard >= 0.6 || (shared === Math.min(left.size, right.size) && jaccard >= 0.5);
}

export class KnowledgeGaps implements GapRecorder {
  constructor(
    private readonly db: Db,
    private readonly knowledge: KnowledgeService,
    private readonly agents: AgentDirectory,
  ) {}

  async record(input: { accountId: number; agentId: number; question: string; conversationId?: string }): Promise<number | undefined> {
    const question = input.question.replace(/\s+/g, ' ').trim().slice(0, 500);
    const questionTerms = [...new Set(terms(question))].sort().slice(0, 40);
    if (!questionTerms.length) return undefined;
    return this.db.transaction().execute(async (trx) => {
      // One writer per agent at a time, so two askings of a new question make one gap.
      await sql`SELECT pg_advisory_xact_lock(${7_501}, ${input.agentId})`.execute(trx);
      const existing = await trx
        .selectFrom('knowledge_gaps')
        .select(['id', 'terms'])
        .where('agent_id', '=', input.agentId)
        .orderBy('last_asked_at', 'desc')
        .limit(MAX_GAPS_PER_AGENT)
        .execute();
      const match = existing.find((gap) => sameQuestion(gap.terms, questionTerms));
      if (match) {
        await trx
          .updateTable('knowledge_gaps')
          .set({ times_asked: sql`times_asked + 1`, last_asked_at: new Date(), last_conversation_id: input.conversationId ?? null } as never)
          .where('id', '=', match.id)
          .execute();
        return match.id;
      }
      if (existing.length >= MAX_GAPS_PER_AGENT) {
        // Full: the gap asked longest ago (dismissed ones first) makes room.
        const oldest = await trx
          .selectFrom('knowledge_gaps')
          .select('id')
          .where('agent_id', '=', input.agentId)
          .orderBy(sql`status = 'dismissed'`, 'desc')
          .orderBy('last_asked_at')
          .limit(1)
          .executeTakeFirst();
        if (oldest) await trx.deleteFrom('knowledge_gaps').where('id', '=', oldest.id).execute();
      }
      const row = await trx
        .insertInto('knowledge_gaps')
        .values({ agent_id: input.agentId, question, terms: questionTerms, last_conversation_id: input.conversationId ?? null })
        .returning('id')
        .executeTakeFirstOrThrow();
      return row.id;
    });
  }

  async list(accountId: number, agentId: number, status?: GapStatus) {
    await this.agents.get(accountId, agentId);
    let query = this.db.selectFrom('knowledge_gaps').selectAll().where('agent_id', '=', agentId);
    if (status) query = query.where('status', '=', status);
    const rows = await query.orderBy('times_asked', 'desc').orderBy('last_asked_at', 'desc').orderBy('id').execute();
    return { gaps: rows.map(gapAnswer) };
  }

  private async gap(accountId: number, agentId: number, gapId: number) {
    const agent = await this.agents.get(accountId, agentId);
    const row = await this.db.selectFrom('knowledge_gaps').selectAll().where('id', '=', gapId).where('agent_id', '=', agentId).executeTakeFirst();
    if (!row) throw brainErrors.gap_not_found(`No knowledge gap with id ${gapId} for this agent`);
    return { agent, row };
  }

  /** The owner's answer: the gap is answered and the agent knows the answer from the next turn on. */
  async answer(accountId: number, agentId: number, gapId: number, answer: string) {
    const { agent, row } = await this.gap(accountId, agentId, gapId);
    const updated = await this.db
      .updateTable('knowledge_gaps')
      .set({ status: 'answered', answer, resolved_at: new Date() })
      .where('id', '=', gapId)
      .returningAll()
      .executeTakeFirstOrThrow();
    await this.knowledge.setAnswer(agent, gapId, row.question, answer);
    return gapAnswer(updated);
  }

  async dismiss(accountId: number, agentId: number, gapId: number) {
    await this.gap(accountId, agentId, gapId);
    const updated = await this.db
      .updateTable('knowledge_gaps')
      .set({ status: 'dismissed', resolved_at: new Date() })
      .where('id', '=', gapId)
      .returningAll()
      .executeTakeFirstOrThrow();
    return gapAnswer(updated);
  }
}

function gapAnswer(row: {
  id: number;
  question: string;
  status: string;
  times_asked: number;
  first_asked_at: Date;
  last_asked_at: Date;
  answer: string | null;
  resolved_at: Date | string | null;
}) {
  return {
    id: row.id,
    question: row.question,
    status: row.status as GapStatus,
    times_asked: row.times_asked,
    first_asked_at: iso(row.first_asked_at)!,
    last_asked_at: iso(row.last_asked_at)!,
    answer: row.answer,
    resolved_at: iso(row.resolved_at),
  };
}
