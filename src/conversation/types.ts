/**
 * What other capabilities see of a conversation. A conversation is one session (contract:
 * `conversation_id` = `session_id`), render mode included. When it ends, the conversation
 * capability calls every `ConversationEndedHook` once (app.ts wires handoff, notifications and
 * billing to it); hooks must be quick and durable: enqueue a job, do not deliver inline.
 */

export interface TranscriptTurn {
  role: 'visitor' | 'agent';
  text: string;
  /** ISO 8601 UTC. */
  at: string;
  /**
   * Present (true) on an agent turn cut off while it was spoken (barge-in, a new visitor turn,
   * agent.interrupt): `text` is then what the visitor heard of it, possibly empty.
   */
  interrupted?: true;
}

export interface EndedConversation {
  conversationId: string;
  sessionId: string;
  accountId: number;
  agentId: number;
  agentName: string;
  mode: 'conversation' | 'render';
  visitorId: string | null;
  /** Verified visitor values passed at the start (`{{visitor.<name>}}`); empty when none. */
  visitor: Record<string, string>;
  startedAt: Date;
  endedAt: Date;
  durationSeconds: number;
  endReason: string;
  visitorTurns: number;
  transcript: TranscriptTurn[];
}

export type ConversationEndedHook = (conversation: EndedConversation) => Promise<void> | void;
