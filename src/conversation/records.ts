/**
 * Conversation records: one per session (contract: `conversation_id` = `session_id`), with its
 * transcript. The record begins when the session starts and ends when it ends; the end is then
 * announced, durably, to every `onEnded` hook (handoffs, notifications, billing): the conversation
 * is marked ended and a `conversation.ended` job is written in the same transaction, and that job
 * runs the hooks. A hook that throws makes the job run again, so hooks must be idempotent (key
 * their own work by conversation id).
 */
import { sql } from 'kysely';
import type { Db } from '../core/db/database.js';
import type { Jobs, JobsLogger } from '../core/jobs.js';
import type { ConversationEndedHook, EndedConversation, TranscriptTurn } from './types.js';

export const CONVERSATION_ENDED_QUEUE = 'conversation.ended';

/** What a conversation needs to know of its session. */
export interface SessionFacts {
  id: string;
  account_id: number;
  agent_id: number;
  mode: 'conversation' | 'render';
  created_at: Date;
}

export interface EndedSessionFacts extends SessionFacts {
  ended_at: Date | null;
  duration_seconds: number | null;
  end_reason: string | null;
}

export interface ConversationStart {
  session: SessionFacts;
  /** Defaults to the agent's current name. */
  agentName?: string;
  visitorId?: string | null;
  visitor?: Record<string, string>;
}

export interface TurnInput {
  role: 'visitor' | 'agent';
  text: string;
  at?: Date;
  language?: string | null;
  /** How the turn arrived and its latency waterfall (ms), kept for the reports. */
  details?: Record<string, unknown>;
}

export interface RecordsHooks {
  /** The agent's current name (a conversation records the name it had when it began). */
  agentName(agentId: number): Promise<string>;
  /** Of these session ids, the ones whose session has ended, with their end facts. */
  endedSessions(ids: string[]): Promise<EndedSessionFacts[]>;
}

export class ConversationRecords {
  /** Called once per ended conversation, through a durable job. */
  readonly onEnded: ConversationEndedHook[] = [];
  /** Begins still being written, so an end (or a turn) never overtakes its begin. */
  private readonly beginning = new Map<string, Promise<void>>();

  constructor(
    private readonly db: Db,
    private readonly jobs: Jobs,
    private readonly logger: JobsLogger,
    private readonly hooks: RecordsHooks,
  ) {}

  /** Starts working the ended-conversation queue. */
  async start(): Promise<void> {
    await this.jobs.work<{ conversationId: string }>(
      CONVERSATION_ENDED_QUEUE,
      { retryLimit: 10, retryDelay: 5, retryBackoff: true, expireInSeconds: 120 },
      async ({ conversationId }) => {
        const conversation = await this.ended(conversationId);
        if (!conversation) return;
        for (const hook of this.onEnded) await hook(conversation);
      },
    );
  }

  /** The session started: its conversation begins (idempotent). */
  begin(start: ConversationStart): Promise<void> {
    const { session } = start;
    const write = (async () => {
      const agentName = start.agentName ?? (await this.hooks.agentName(session.agent_id));
      await this.db
        .insertInto('conversations')
        .values({
          id: session.id,
          account_id: session.account_id,
          agent_id: session.agent_id,
          agent_name: agentName,
          mode: session.mode,
          visitor_id: start.visitorId ?? null,
          visitor: JSON.stringify(start.visitor ?? {}),
          started_at: new Date(session.created_at),
        })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
    })().finally(() => this.beginning.delete(session.id));
    this.beginning.set(session.id, write);
    return write;
  }

  /** Records one turn; its words join the conversation's searchable text. */
  async addTurn(conversationId: string, turn: TurnInput): Promise<void> {
    await this.beginning.get(conversationId)?.catch(() => {});
    const at = turn.at ?? new Date();
    // A knowledge gap the answer raised is kept on the conversation too (reports count them there).
    const gapId = turn.details?.gap_id;
    const gap = typeof gapId === 'number' && Number.isInteger(gapId) && gapId > 0 && gapId <= 2_147_483_647 ? gapId : undefined;
    // An answer (the engine's `answered` flag) and its voice-to-voice latency are counted on the
    // conversation too, for the reports' answer rate and percentiles (migration 0029).
    const quality = turn.role === 'agent' ? answerQuality(turn.details) : {};
    await this.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('conversation_turns')
        .values({
          conversation_id: conversationId,
          role: turn.role,
          text: turn.text,
          at,
          language: turn.language ?? null,
          details: JSON.stringify(turn.details ?? {}),
        })
        .execute();
      await trx
        .updateTable('conversations')
        .set({
          visitor_turns: turn.role === 'visitor' ? sql`visitor_turns + 1` : sql`visitor_turns`,
          agent_turns: turn.role === 'agent' ? sql`agent_turns + 1` : sql`agent_turns`,
          search: sql`search || to_tsvector('simple', ${turn.text})`,
          ...(gap !== undefined && { gap_ids: sql`CASE WHEN ${gap}::int = ANY(gap_ids) THEN gap_ids ELSE array_append(gap_ids, ${gap}::int) END` }),
          ...(quality.answered !== undefined && { answers: sql`answers + 1`, answered: quality.answered ? sql`answered + 1` : sql`answered` }),
          ...(quality.ms !== undefined && { answer_ms: sql`array_append(answer_ms, ${quality.ms}::int)` }),
        })
        .where('id', '=', conversationId)
        .execute();
    });
  }

  /**
   * The session ended: the conversation ends with it (idempotent), and its ended job is written in
   * the same transaction. A session that never got its begin written (a crash in between) begins
   * and ends here.
   */
  async end(session: EndedSessionFacts): Promise<void> {
    await this.beginning.get(session.id)?.catch(() => {});
    const agentName = await this.hooks.agentName(session.agent_id);
    await this.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('conversations')
        .values({
          id: session.id,
          account_id: session.account_id,
          agent_id: session.agent_id,
          agent_name: agentName,
          mode: session.mode,
          started_at: new Date(session.created_at),
        })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
      const ended = await trx
        .updateTable('conversations')
        .set({
          ended_at: session.ended_at ? new Date(session.ended_at) : new Date(),
          duration_seconds: session.duration_seconds ?? 0,
          end_reason: session.end_reason ?? 'ended',
        })
        .where('id', '=', session.id)
        .where('ended_at', 'is', null)
        .returning('id')
        .executeTakeFirst();
      if (ended) await this.jobs.send(CONVERSATION_ENDED_QUEUE, { conversationId: session.id }, { singletonKey: session.id }, trx);
    });
  }

  /** Adds a notification category to the conversation (reports filter on it). */
  async tag(conversationId: string, category: string): Promise<void> {
    await this.db
      .updateTable('conversations')
      .set({ categories: sql`array_append(categories, ${category})` })
      .where('id', '=', conversationId)
      .where(sql<boolean>`NOT (${category} = ANY(categories))`)
      .execute();
  }

  /** Who the visitor is: the visitor id and the verified values passed at the start. */
  async visitorOf(conversationId: string): Promise<{ visitorId: string | null; visitor: Record<string, string> } | undefined> {
    await this.beginning.get(conversationId)?.catch(() => {});
    const row = await this.db.selectFrom('conversations').select(['visitor_id', 'visitor']).where('id', '=', conversationId).executeTakeFirst();
    return row && { visitorId: row.visitor_id, visitor: (row.visitor ?? {}) as Record<string, string> };
  }

  /** The transcript, in order. */
  async transcript(conversationId: string): Promise<TranscriptTurn[]> {
    const rows = await this.db
      .selectFrom('conversation_turns')
      .select(['role', 'text', 'at', 'details'])
      .where('conversation_id', '=', conversationId)
      .orderBy('id')
      .execute();
    return rows.map((r) => ({
      role: r.role,
      text: r.text,
      at: new Date(r.at).toISOString(),
      ...((r.details as { interrupted?: boolean } | null)?.interrupted === true && { interrupted: true as const }),
    }));
  }

  /** An ended conversation as the ended hooks see it; undefined if unknown or still running. */
  async ended(conversationId: string): Promise<EndedConversation | undefined> {
    const row = await this.db.selectFrom('conversations').selectAll().where('id', '=', conversationId).executeTakeFirst();
    if (!row || !row.ended_at) return undefined;
    return {
      conversationId: row.id,
      sessionId: row.id,
      accountId: row.account_id,
      agentId: row.agent_id,
      agentName: row.agent_name,
      mode: row.mode,
      visitorId: row.visitor_id,
      visitor: (row.visitor ?? {}) as Record<string, string>,
      startedAt: new Date(row.started_at),
      endedAt: new Date(row.ended_at),
      durationSeconds: Number(row.duration_seconds ?? 0),
      endReason: row.end_reason ?? 'ended',
      visitorTurns: row.visitor_turns,
      transcript: await this.transcript(row.id),
    };
  }

  /**
   * At start: conversations still open whose session has ended (the process stopped between the
   * two) end now, so their hooks run.
   */
  async recover(): Promise<void> {
    const open = await this.db.selectFrom('conversations').select('id').where('ended_at', 'is', null).limit(10_000).execute();
    if (!open.length) return;
    const ended = await this.hooks.endedSessions(open.map((r) => r.id));
    for (const session of ended) await this.end(session);
    if (ended.length) this.logger.info({ conversations: ended.length }, 'ended conversations whose session ended while the server stopped');
  }
}

/** What an agent turn adds to the answer counts: whether it was an answer the agent knew, and its first_audio (ms). */
function answerQuality(details: Record<string, unknown> | undefined): { answered?: boolean; ms?: number } {
  const answered = details?.answered;
  const latency = details?.latency_ms;
  const firstAudio = latency && typeof latency === 'object' && !Array.isArray(latency) ? (latency as Record<string, unknown>).first_audio : undefined;
  return {
    ...(typeof answered === 'boolean' && { answered }),
    ...(typeof firstAudio === 'number' && Number.isFinite(firstAudio) && { ms: Math.max(-2_147_483_647, Math.min(2_147_483_647, Math.round(firstAudio))) }),
  };
}
