/**
 * With LLM_URL, a language model writes the agent's instructions at the end of a build: it gets the
 * pages' readable text and the facts the offline builder found (each with its source), and answers
 * JSON with the instructions and the facts it kept. Facts whose source is not one of the pages are
 * dropped; an unusable answer makes the build fall back to the offline builder (builds.ts).
 */
import type OpenAI from 'openai';
import { z } from 'zod';
import { compileFacts, writeInstructions, FACT_TOPICS, type BrainInput, type BrainOutput, type Fact, type InstructionsWriter } from '../knowledge/compile.js';

const MAX_PAGE_CHARS = 6000;
const MAX_TOTAL_CHARS = 60_000;

const Answer = z.object({
  instructions: z.string().min(20).max(20_000),
  facts: z
    .array(z.object({ topic: z.string(), text: z.string().min(1).max(400), source: z.string() }))
    .max(200)
    .default([]),
});

export class LlmInstructionsWriter implements InstructionsWriter {
  readonly name = 'llm';

  constructor(
    private readonly client: OpenAI,
    private readonly model: string | undefined,
  ) {}

  async write(input: BrainInput, signal?: AbortSignal): Promise<BrainOutput> {
    const offlineFacts = compileFacts(input.documents, input.site);
    let budget = MAX_TOTAL_CHARS;
    const material: string[] = [];
    for (const doc of input.documents) {
      if (budget <= 0) break;
      const text = doc.markdown.slice(0, Math.min(MAX_PAGE_CHARS, budget));
      budget -= text.length;
      material.push(`### ${doc.title} (${doc.url ?? doc.kind})\n${text}`);
    }
    const prompt = [
      `Write the instructions for ${input.agentName}, a voice assistant that answers visitors of the website of ${input.site.name ?? 'a business'}${input.site.homepage ? ` (${input.site.homepage})` : ''}.`,
      'The instructions say who the assistant is, how it speaks (short, friendly, spoken sentences; honest when it does not know), and what it knows about the business: the facts visitors ask about (services, prices, hours, contacts, areas served, policies).',
      `Answer with JSON only: {"instructions": "…", "facts": [{"topic": one of ${FACT_TOPICS.join('|')}, "text": "…", "source": "the URL or title of the page it comes from"}]}.`,
      'Use only what the pages say. Every fact must name its source page.',
      input.systemPrompt ? `\nThe owner's own instructions (keep them):\n${input.systemPrompt}` : '',
      `\nFacts found so far:\n${offlineFacts.map((f) => `- [${f.topic}] ${f.text} (${f.source.url ?? f.source.title})`).join('\n')}`,
      `\nThe pages:\n${material.join('\n\n')}`,
    ].join('\n');
    const completion = await this.client.chat.completions.create(
      { model: this.model ?? 'default', messages: [{ role: 'user', content: prompt }], temperature: 0.2, max_tokens: 3000 },
      { signal },
    );
    const content = completion.choices[0]?.message?.content ?? '';
    const json = /\{[\s\S]*\}/.exec(content)?.[0];
    if (!json) throw new Error('the language model did not answer JSON');
    const parsed = Answer.parse(JSON.parse(json));
    const sources = new Map(input.documents.map((d) => [d.url ?? d.title, d]));
    for (const d of input.documents) sources.set(d.title, d);
    const facts: Fact[] = [];
    for (const fact of parsed.facts) {
      const doc = sources.get(fact.source);
      if (!doc || !(FACT_TOPICS as string[]).includes(fact.topic)) continue;
      facts.push({ topic: fact.topic as Fact['topic'], text: fact.text, source: { kind: doc.kind, title: doc.title, ...(doc.url ? { url: doc.url } : {}) } });
    }
    return { instructions: parsed.instructions, facts: facts.length ? facts : offlineFacts };
  }
}

export { writeInstructions };
