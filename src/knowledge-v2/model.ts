/**
 * With LLM_URL, knowledge v2 asks the language model to do each step better than the offline rules
 * (the schema for this business, the facts out of the retrieved passages, the changes an owner's
 * correction means). One JSON answer per step, checked with zod; an unusable answer or a failing
 * model leaves the step to the offline rules (the caller falls back), never failing it.
 */
import type OpenAI from 'openai';
import type { z } from 'zod';

export class KnowledgeModel {
  constructor(
    private readonly client: OpenAI,
    private readonly model: string | undefined,
  ) {}

  async json<T>(prompt: string, schema: z.ZodType<T>, signal?: AbortSignal): Promise<T> {
    const completion = await this.client.chat.completions.create(
      { model: this.model ?? 'default', messages: [{ role: 'user', content: prompt }], temperature: 0.1, max_tokens: 2000 },
      { signal },
    );
    const content = completion.choices[0]?.message?.content ?? '';
    const json = /\{[\s\S]*\}/.exec(content)?.[0];
    if (!json) throw new Error('the language model did not answer JSON');
    return schema.parse(JSON.parse(json));
  }
}
