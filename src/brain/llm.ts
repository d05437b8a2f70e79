/**
 * The language-model answering engine: any OpenAI-compatible chat-completions server (OpenAI,
 * Ollama, vLLM, llama.cpp's server…) through the official `openai` client, streamed so speech can
 * start on the first sentence. The prompt carries the agent's built instructions, its system_prompt,
 * the knowledge retrieved for this question and the rules of an honest spoken answer. The model marks
 * a question it cannot answer from that knowledge with NO_ANSWER, which is taken off the speech and
 * recorded as a knowledge gap. A model that does not start answering in time, or fails, gets a
 * clear spoken fallback.
 */
import type OpenAI from 'openai';
import type { AnswerEngine, AnswerEvent, AnswerRequest, AnswerSource } from './engine.js';
import type { BrainKnowledge } from './knowledge.js';
import type { GapRecorder } from './gaps.js';
import { analyseQuestion, terms } from './text.js';
import { rank } from './retrieve.js';
import { detailLabel, askedLastTurn } from './small-talk.js';
import { personaOf } from './offline.js';
import type { KnowledgeIndex } from './knowledge-index.js';
import { behaviorLines, renderDynamic } from '../knowledge/v2/store.js';

export const NO_ANSWER = '[NO_ANSWER]';
export const LLM_FALLBACK = "I'm sorry, I can't answer right now. Please ask me again in a moment.";
/** Phrases that, at the start of a reply without the marker, still mean "I don't know". */
const UNKNOWN_OPENING = /^(i'?m (sorry|afraid)[,.]? )?(i (don'?t|do not) (know|have (that|this|any) information)|i'?m not sure|i (can'?t|cannot) find)/i;

export interface LlmSettings {
  url: string;
  apiKey?: string;
  model?: string;
  /** Milliseconds the model may take to send its first words. */
  firstTokenTimeoutMs: number;
  /** Milliseconds the whole answer may take. */
  totalTimeoutMs?: number;
}

export interface EngineLogger {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
}

/** The client library is loaded only by a server with LLM_URL: the offline brain never needs it. */
export async function llmClient(settings: LlmSettings): Promise<OpenAI> {
  const { default: OpenAIClient } = await import('openai');
  return new OpenAIClient({ baseURL: settings.url, apiKey: settings.apiKey || 'not-needed', maxRetries: 0, timeout: settings.totalTimeoutMs ?? 60_000 });
}

const LANGUAGE_NAMES = new Intl.DisplayNames(['en'], { type: 'language' });

export function systemPrompt(
  index: KnowledgeIndex,
  agentName: string,
  request: AnswerRequest,
  passages: Array<{ text: string; source: AnswerSource }>,
): string {
  const persona = personaOf(index, agentName);
  const snapshot = index.snapshot;
  let language = request.language;
  try {
    language = LANGUAGE_NAMES.of(request.language) ?? request.language;
  } catch {
    /* keep the code */
  }
  const lines = [
    snapshot.instructions?.trim() ||
      `You are ${agentName}, the virtual assistant of ${persona.business ?? 'this business'}. You talk with visitors of its website.`,
    '',
    'How you answer:',
    `- You are speaking aloud, in ${language}: one or two short, natural sentences, the fact first. No lists, no Markdown, no links, no "according to".`,
    '- Use only the knowledge given here and in the conversation. Never invent prices, times, names, addresses or promises.',
    `- If the knowledge does not answer the question, begin your reply with ${NO_ANSWER}, then say honestly that you don't know and that you will pass the question on to the team.`,
    '- Greetings, thanks and small talk: answer briefly and warmly.',
  ];
  const detail = request.missingDetails?.[0];
  if (detail && !askedLastTurn(request.history)) {
    lines.push(`- After answering, politely ask the visitor for their ${detailLabel(detail)} (one question only, and only if it fits the moment).`);
  }
  const visitor = Object.entries(request.visitor ?? {});
  if (visitor.length) lines.push('', 'About the visitor (given by the website):', ...visitor.map(([k, v]) => `- ${k}: ${v}`));
  // Knowledge v2: the owner's dynamic instructions, filled with this visitor's values, and the behavior.
  const dynamic = snapshot.dynamicInstructions?.trim() ? renderDynamic(snapshot.dynamicInstructions, request.visitor ?? {}).trim() : '';
  if (dynamic) lines.push('', "The owner's instructions for this conversation:", dynamic);
  const how = snapshot.behavior ? behaviorLines(snapshot.behavior) : [];
  if (how.length) lines.push('', 'How you speak (set by the owner):', ...how.map((l) => `- ${l}`));
  if (passages.length) {
    lines.push('', 'Knowledge that may answer the question:');
    for (const passage of passages) lines.push(`- ${passage.text} [${passage.source.title}${passage.source.url ? `, ${passage.source.url}` : ''}]`);
  }
  return lines.join('\n');
}

export class LlmEngine implements AnswerEngine {
  readonly name = 'llm';

  constructor(
    private readonly client: OpenAI,
    private readonly settings: LlmSettings,
    private readonly knowledge: BrainKnowledge,
    private readonly gaps: GapRecorder,
    private readonly logger: EngineLogger,
  ) {}

  async *answer(request: AnswerRequest): AsyncIterable<AnswerEvent> {
    const { agent, index } = await this.knowledge.load(request.accountId, request.agentId);
    const previous = [...request.history].reverse().find((t) => t.role === 'visitor');
    const vector = index.vectors && this.knowledge.semantic ? await this.knowledge.questionVector(request.text, request.signal) : undefined;
    const semantic = vector && this.knowledge.semantic ? { vector, minSimilarity: this.knowledge.semantic.minSimilarity } : undefined;
    const candidates = rank(index, analyseQuestion(request.text), previous ? terms(previous.text) : [], 8, semantic);
    const passages = candidates
      .filter((c) => c.coverage > 0 || c.evidence || c.similarity > 0)
      .slice(0, 8)
      .map((c) => ({ text: c.unit.text, source: c.unit.source }));
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
      { role: 'system', content: systemPrompt(index, agent.name, request, passages) },
      ...request.history
        .slice(-12)
        .map((turn): OpenAI.Chat.ChatCompletionMessageParam => ({ role: turn.role === 'visitor' ? 'user' : 'assistant', content: turn.text })),
      { role: 'user', content: request.text },
    ];

    const controller = new AbortController();
    const onAbort = () => controller.abort();
    request.signal.addEventListener('abort', onAbort);
    let timedOut = false;
    const firstToken = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.settings.firstTokenTimeoutMs);
    const total = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.settings.totalTimeoutMs ?? 60_000);

    let emitted = false;
    let head = '';
    let decided = false;
    let unknown = false;
    let failed = false;
    // The owner's words for "I don't know" replace the model's, when set (behavior `unknown_answer`).
    const unknownAnswer = index.snapshot.behavior?.unknown_answer || undefined;
    let replaced = false;
    try {
      const stream = await this.client.chat.completions.create(
        { model: this.settings.model ?? 'default', messages, stream: true, temperature: 0.3, max_tokens: 400 },
        { signal: controller.signal },
      );
      for await (const chunk of stream) {
        const delta = chunk.choices[0]?.delta?.content ?? '';
        if (!delta) continue;
        clearTimeout(firstToken);
        if (!decided) {
          // Hold the first characters back until it is clear whether they are the NO_ANSWER mark.
          head += delta;
          const trimmed = head.trimStart();
          if (trimmed.length < NO_ANSWER.length && NO_ANSWER.startsWith(trimmed)) continue;
          decided = true;
          if (trimmed.startsWith(NO_ANSWER)) {
            unknown = true;
            head = trimmed.slice(NO_ANSWER.length).trimStart();
            if (unknownAnswer) {
              replaced = true;
              emitted = true;
              yield { type: 'text', text: unknownAnswer };
              continue;
            }
          } else head = trimmed;
          if (!head) continue;
          emitted = true;
          yield { type: 'text', text: head };
          continue;
        }
        if (replaced) continue;
        emitted = true;
        yield { type: 'text', text: delta.replaceAll(NO_ANSWER, '') };
      }
      if (!decided && head.trim()) {
        const trimmed = head.trim();
        unknown = trimmed.startsWith(NO_ANSWER);
        const rest = unknown ? (unknownAnswer ?? trimmed.slice(NO_ANSWER.length).trim()) : trimmed;
        if (rest) {
          emitted = true;
          yield { type: 'text', text: rest };
        }
      }
      if (!unknown && UNKNOWN_OPENING.test(head.trim())) unknown = true;
    } catch (error) {
      if (request.signal.aborted) return; // the visitor spoke again: nothing more to say
      failed = true;
      this.logger.warn(
        { err: error, agent_id: request.agentId, timed_out: timedOut },
        timedOut ? 'the language model did not answer in time; the spoken fallback was said' : 'the language model failed; the spoken fallback was said',
      );
    } finally {
      clearTimeout(firstToken);
      clearTimeout(total);
      request.signal.removeEventListener('abort', onAbort);
    }
    if (request.signal.aborted) return;
    if (failed || !emitted) {
      yield { type: 'text', text: emitted ? ` ${LLM_FALLBACK}` : LLM_FALLBACK };
      yield { type: 'done', answered: false, sources: [], engine: this.name };
      return;
    }
    let gapId: number | undefined;
    let commit: (() => Promise<number | undefined>) | undefined;
    if (unknown) {
      const record = () =>
        this.gaps.record({ accountId: request.accountId, agentId: request.agentId, question: request.text, conversationId: request.conversationId });
      // An answer prepared ahead records its gap only once it is given (it may be thrown away).
      if (request.speculative) commit = record;
      else gapId = await record();
    }
    const sources: AnswerSource[] = [];
    if (!unknown) for (const p of passages.slice(0, 3)) if (!sources.some((s) => s.title === p.source.title && s.url === p.source.url)) sources.push(p.source);
    yield { type: 'done', answered: !unknown, sources, engine: this.name, ...(gapId !== undefined ? { gapId } : {}), ...(commit && { commit }) };
  }
}
