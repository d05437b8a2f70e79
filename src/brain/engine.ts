/**
 * The answering engine: the one interface conversation mode calls for each visitor turn.
 * It streams the answer's text (so speech can start on the first sentence) and says, when done,
 * whether the agent actually knew the answer and which sources it used.
 *
 * Implementations (one file each): the LLM engine (an OpenAI-compatible chat endpoint, `LLM_URL`)
 * and the offline engine (retrieval over the agent's knowledge and an extractive answer). Both load
 * the agent's instructions and knowledge themselves, per answer, so a change to pages, sections or
 * `system_prompt` is in the next answer without a rebuild.
 */

export interface ConversationTurn {
  role: 'visitor' | 'agent';
  text: string;
}

/** A detail a data-handoff rule still needs from the visitor (the engine may ask for it politely). */
export interface MissingDetail {
  name: string;
  description: string;
}

export interface AnswerRequest {
  accountId: number;
  agentId: number;
  /** The conversation (= session id), so a knowledge gap can name where it was asked. */
  conversationId?: string;
  /** The conversation so far, oldest first, without the turn being answered. */
  history: ConversationTurn[];
  /** The visitor's turn to answer. */
  text: string;
  /** ISO 639-1 code of the language to answer in. */
  language: string;
  /** Visitor values the website passed at the start (`{{visitor.<name>}}`), already verified. */
  visitor: Record<string, string>;
  /** Required details of data-handoff rules not yet collected in this conversation. */
  missingDetails?: MissingDetail[];
  signal: AbortSignal;
  /**
   * The answer is prepared ahead of the end of the visitor's turn (preemptive generation) and may
   * be thrown away: the engine records nothing (no knowledge gap). Its `done` event carries
   * `commit` instead, which the caller runs once the answer is really given.
   */
  speculative?: boolean;
}

export interface AnswerSource {
  kind: 'page' | 'section' | 'system_prompt' | 'instructions' | 'gap_answer' | 'owner';
  title?: string;
  url?: string;
}

export type AnswerEvent =
  /** A piece of the answer's text, in order; any size (speech splits it into sentences). */
  | { type: 'text'; text: string }
  /** The answer is complete. `answered` is false when the agent said it does not know. */
  | {
      type: 'done';
      answered: boolean;
      sources: AnswerSource[];
      engine: string;
      gapId?: number;
      /** A speculative answer's held-back side effects (the knowledge gap); resolves with the gap's id. */
      commit?: () => Promise<number | undefined>;
    };

export interface AnswerEngine {
  /** `llm` or `offline`, for logs and the latency waterfall. */
  readonly name: string;
  answer(request: AnswerRequest): AsyncIterable<AnswerEvent>;
}
