/**
 * An answer's text being generated: the answering engine run on one visitor turn, its text fed into
 * a TextPipe that the speech layer reads while it streams.
 */
import type { AnswerEngine, AnswerEvent, ConversationTurn, MissingDetail } from '../brain/engine.js';
import { TextPipe } from './text-pipe.js';

type AnswerDone = Extract<AnswerEvent, { type: 'done' }>;

/** What a hook sees of a live conversation (e.g. handoff rules deciding which details are missing). */
export interface LiveConversationFacts {
  conversationId: string;
  accountId: number;
  agentId: number;
  /** Verified visitor values passed at the start. */
  visitor: Record<string, string>;
  /** The conversation so far, oldest first, the turn being answered last. */
  history: ConversationTurn[];
}

/** An answer's text being generated: the answering engine's events fed into a TextPipe for speech. */
export interface Generation {
  controller: AbortController;
  pipe: TextPipe;
  text: string;
  /** performance.now() of the first text. */
  firstTextAt?: number;
  done?: AnswerDone;
  failure?: Error;
  /** Resolves when the engine has finished (or failed, or was aborted). */
  finished: Promise<void>;
  finishedAt?: number;
}

export interface GenerationDeps {
  answers: AnswerEngine;
  missingDetails?: (conversation: LiveConversationFacts) => Promise<MissingDetail[]>;
  log: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

export interface GenerationRequest {
  conversationId: string;
  agent: { id: number; account_id: number };
  visitor: Record<string, string>;
  /** The conversation before this turn. */
  history: ConversationTurn[];
  text: string;
  language: string;
  /** An answer prepared ahead of the end of the turn (it may be thrown away). */
  speculative: boolean;
}

/**
 * Starts the answering engine on a turn; its text flows into the generation's pipe. A speculative
 * generation (an answer prepared ahead) holds back the engine's side effects (`done.commit`) and
 * leaves its failure to be logged when it is committed.
 */
export function generate(deps: GenerationDeps, request: GenerationRequest): Generation {
  const { conversationId, agent, visitor, history, text, language, speculative } = request;
  const controller = new AbortController();
  const generation: Generation = { controller, pipe: new TextPipe(), text: '', finished: Promise.resolve() };
  generation.finished = (async () => {
    try {
      const facts: LiveConversationFacts = {
        conversationId,
        accountId: agent.account_id,
        agentId: agent.id,
        visitor,
        history: [...history, { role: 'visitor', text }],
      };
      const missingDetails = await deps.missingDetails?.(facts).catch((error: Error) => {
        if (!speculative) deps.log.warn({ err: error.message, session_id: conversationId }, 'missing details could not be found; answering without them');
        return undefined;
      });
      if (controller.signal.aborted) return;
      const events = deps.answers.answer({
        accountId: agent.account_id,
        agentId: agent.id,
        conversationId,
        history,
        text,
        language,
        visitor,
        ...(missingDetails?.length && { missingDetails }),
        signal: controller.signal,
        ...(speculative && { speculative }),
      });
      for await (const event of events) {
        if (controller.signal.aborted) break;
        if (event.type === 'text') {
          generation.firstTextAt ??= performance.now();
          generation.text += event.text;
          generation.pipe.push(event.text);
        } else {
          generation.done = event;
        }
      }
    } catch (error) {
      if (!controller.signal.aborted) {
        generation.failure = error as Error;
        if (!speculative) logGenerationFailure(deps.log, conversationId, generation.failure);
      }
    } finally {
      generation.finishedAt = performance.now();
      generation.pipe.close();
    }
  })();
  return generation;
}

export function logGenerationFailure(log: GenerationDeps['log'], conversationId: string, error: Error): void {
  log.error({ err: error, session_id: conversationId }, 'the answering engine failed for a visitor turn');
}
