/**
 * The offline answering engine (the default, no language model): small talk answered as a person
 * would; a question answered with the one or two sentences of the agent's knowledge that answer it,
 * said naturally; and, when nothing answers it well, an honest "I don't know, I'll pass it on",
 * with the question recorded as a knowledge gap. It never says a fact the knowledge does not hold.
 * All of it is in-process work on a cached index: the first text is ready in milliseconds.
 */
import type { AnswerEngine, AnswerEvent, AnswerRequest, AnswerSource } from './engine.js';
import type { BrainKnowledge } from './knowledge.js';
import type { GapRecorder } from './gaps.js';
import type { KnowledgeIndex, Unit } from './knowledge-index.js';
import { analyseQuestion, MEASURE_IN_TEXT, terms } from './text.js';
import { answers, evidenceFor, rank, type Candidate, type SemanticQuery } from './retrieve.js';
import { phrase, speakable } from './phrasing.js';
import { askedLastTurn, askForDetail, shapeOf, smallTalkReply, type Persona } from './small-talk.js';
import type { Fact } from '../knowledge/compile.js';

const DONT_KNOW = [
  "I'm sorry, I don't know that. I'll pass your question on to the team.",
  "I don't know that one, I'm afraid. I'll pass the question on so the team can help.",
  "I'm not sure about that, sorry. I'll pass your question on to the team.",
];

const TOPIC_WORDS: Array<[Fact['topic'], string]> = [
  ['hours', 'our opening hours'],
  ['services', 'what we offer'],
  ['prices', 'prices'],
  ['contact', 'how to reach us'],
  ['areas', 'the areas we serve'],
  ['policies', 'our policies'],
];

export interface Reply {
  text: string;
  kind: 'answered' | 'unknown' | 'small_talk';
  smallTalk?: string;
  sources: AnswerSource[];
  question?: string;
}

export class OfflineEngine implements AnswerEngine {
  readonly name = 'offline';

  constructor(
    private readonly knowledge: BrainKnowledge,
    private readonly gaps: GapRecorder,
  ) {}

  async *answer(request: AnswerRequest): AsyncIterable<AnswerEvent> {
    const { agent, index } = await this.knowledge.load(request.accountId, request.agentId);
    const semantic = await this.semanticQuery(index, request);
    if (request.signal.aborted) return;
    const reply = composeReply(index, agent.name, request, semantic);
    let text = reply.text;
    const detail = request.missingDetails?.[0];
    const moment =
      reply.kind !== 'small_talk'
        ? reply.kind === 'unknown'
          ? 'unknown'
          : 'answer'
        : reply.smallTalk === 'thanks'
          ? 'answer'
          : reply.smallTalk === 'goodbye'
            ? 'goodbye'
            : undefined;
    if (detail && moment && !askedLastTurn(request.history)) {
      text = moment === 'goodbye' ? `${askForDetail(detail, 'goodbye')}` : `${text} ${askForDetail(detail, moment)}`;
    }
    for (const piece of text.split(/(?<=[.!?])\s+/)) {
      if (request.signal.aborted) return;
      yield { type: 'text', text: piece + ' ' };
    }
    let gapId: number | undefined;
    let commit: (() => Promise<number | undefined>) | undefined;
    if (reply.kind === 'unknown' && reply.question) {
      const question = reply.question;
      const record = () => this.gaps.record({ accountId: request.accountId, agentId: request.agentId, question, conversationId: request.conversationId });
      // An answer prepared ahead records its gap only once it is given (it may be thrown away).
      if (request.speculative) commit = record;
      else gapId = await record();
    }
    yield {
      type: 'done',
      answered: reply.kind !== 'unknown',
      sources: reply.sources,
      engine: this.name,
      ...(gapId !== undefined ? { gapId } : {}),
      ...(commit && { commit }),
    };
  }

  /** The question's meaning, when embeddings are configured (small talk needs none). */
  private async semanticQuery(index: KnowledgeIndex, request: AnswerRequest): Promise<SemanticQuery | undefined> {
    const semantic = this.knowledge.semantic;
    if (!semantic || !index.vectors || shapeOf(request.text).smallTalk) return undefined;
    const vector = await this.knowledge.questionVector(request.text, request.signal);
    return vector && { vector, minSimilarity: semantic.minSimilarity };
  }
}

export function personaOf(index: KnowledgeIndex, agentName: string): Persona {
  const { site, facts } = index.snapshot;
  const topics = TOPIC_WORDS.filter(([topic]) => facts.some((f) => f.topic === topic)).map(([, words]) => words);
  const about = facts.find((f) => f.topic === 'about')?.text ?? site.description;
  return {
    name: agentName,
    business: site.name || index.identity?.business,
    description: about,
    topics: topics.length ? (topics.length === 1 ? topics[0] : `${topics.slice(0, -1).join(', ')} and ${topics[topics.length - 1]}`) : undefined,
  };
}

/** The previous visitor turn's content words, for a follow-up ("and on Sundays?", "how much is it?"). */
function followUpTerms(request: AnswerRequest, question: string): string[] {
  if (!/\b(it|that|this|they|them|those|these|one)\b|^\s*(and|what about|how about)\b/i.test(question) && terms(question).length > 1) return [];
  const previous = [...request.history].reverse().find((t) => t.role === 'visitor');
  return previous ? terms(previous.text) : [];
}

export function composeReply(
  index: KnowledgeIndex,
  agentName: string,
  request: Pick<AnswerRequest, 'text' | 'history' | 'language'>,
  semantic?: SemanticQuery,
): Reply {
  const shape = shapeOf(request.text);
  const persona = personaOf(index, agentName);
  if (shape.smallTalk) return { text: smallTalkReply(shape.smallTalk, persona), kind: 'small_talk', smallTalk: shape.smallTalk, sources: [] };
  const question = shape.rest || request.text;
  const analysed = analyseQuestion(question);
  if (!analysed.terms.length && !analysed.intents.size) {
    return { text: "Sorry, I didn't quite catch that. Could you ask me in another way?", kind: 'small_talk', smallTalk: 'unclear', sources: [] };
  }
  const candidates = rank(index, analysed, followUpTerms(request as AnswerRequest, question), 40, semantic);
  // "How long…?": the best unit that states a duration (one that does not cannot answer it).
  const best = analysed.measure ? candidates.find((c) => MEASURE_IN_TEXT[analysed.measure!].test(c.unit.text)) : candidates[0];
  const prefix = shape.greeted ? 'Hi! ' : '';
  if (!answers(best, analysed)) {
    // The owner's own words for "I don't know" (knowledge v2 behavior `unknown_answer`), when set.
    const variant = index.snapshot.behavior?.unknown_answer || DONT_KNOW[Math.abs(hash(question)) % DONT_KNOW.length]!;
    return { text: prefix + variant, kind: 'unknown', sources: [], question: question.trim() };
  }
  const chosen: Candidate[] = [best!];
  // A question with two intents ("when are you open and where are you?") gets both facts.
  for (const intent of analysed.intents) {
    if (chosen.some((c) => c.intentsMet.includes(intent))) continue;
    const other = candidates.find((c) => c.intentsMet.includes(intent) && c.coverage >= 0.6 && !chosen.includes(c));
    if (other && chosen.length < 2) chosen.push(other);
  }
  const said: string[] = [];
  // "What are your hours?" answered from a table of hours: the whole table, not its first row.
  const week = analysed.intents.has('hours') && !analysed.terms.length && best!.unit.kind === 'row' ? hoursTable(index, best!.unit) : undefined;
  if (week) said.push(week);
  for (const candidate of week ? [] : chosen) {
    const line = phrase(candidate.unit, request.language || 'en');
    if (!said.some((s) => s.includes(line) || line.includes(s))) said.push(line);
  }
  const sources: AnswerSource[] = [];
  for (const candidate of chosen)
    if (!sources.some((s) => s.kind === candidate.unit.source.kind && s.title === candidate.unit.source.title && s.url === candidate.unit.source.url))
      sources.push(candidate.unit.source);
  return { text: prefix + said.join(' '), kind: 'answered', sources };
}

/** Every row of the table a row of hours is in, said as one sentence ("Monday closed; Tuesday…"). */
function hoursTable(index: KnowledgeIndex, row: Unit): string | undefined {
  const rows = index.units.filter(
    (u) => u.kind === 'row' && u.context === row.context && u.source.url === row.source.url && u.source.title === row.source.title && evidenceFor('hours', u),
  );
  if (rows.length < 2 || rows.length > 10) return undefined;
  const days = rows.map((u) => speakable((u.cells ?? [u.text]).filter(Boolean).join(' '), 'en').replace(/\.$/, ''));
  return `Our opening hours are: ${days.join('; ')}.`;
}

function hash(text: string): number {
  let h = 0;
  for (let i = 0; i < text.length; i++) h = (h * 31 + text.charCodeAt(i)) | 0;
  return h;
}
