/**
 * Finds a rule's details in a conversation: with `LLM_URL`, the language model reads the transcript
 * and answers a JSON object (each value then checked and written as its kind requires); any detail
 * it did not find, or all of them when it fails, come from the offline extractors. Without a model,
 * the offline extractors alone.
 */
import type OpenAI from 'openai';
import type { CountryCode } from 'libphonenumber-js';
import type { Turn } from './offline.js';
import { kindOf, type DetailSpec } from './spec.js';
import { detailParsers } from './load.js';

export interface FinderLogger {
  warn(object: object, message: string): void;
}

export interface FoundDetails {
  values: Record<string, string>;
  engine: 'llm' | 'offline';
}

export interface FindRequest {
  transcript: Turn[];
  details: DetailSpec[];
  /** When the conversation took place ("tomorrow" is relative to it). */
  reference: Date;
  country?: CountryCode;
  signal?: AbortSignal;
}

/** Transcript text the model is given at most (the latest part is kept). */
const MAX_TRANSCRIPT_CHARS = 24_000;

export class DetailFinder {
  constructor(
    private readonly llm?: { client: OpenAI; model?: string; timeoutMs: number },
    private readonly logger?: FinderLogger,
  ) {}

  get engine(): 'llm' | 'offline' {
    return this.llm ? 'llm' : 'offline';
  }

  async find(request: FindRequest): Promise<FoundDetails> {
    const context = { reference: request.reference, country: request.country };
    const { extractOffline, normaliseValue } = await detailParsers.get();
    const offline = extractOffline(request.transcript, request.details, context);
    if (!this.llm || !request.details.length || !request.transcript.some((t) => t.role === 'visitor')) return { values: offline, engine: 'offline' };
    let fromModel: Record<string, unknown>;
    try {
      fromModel = await this.ask(request);
    } catch (error) {
      this.logger?.warn({ err: error }, 'the language model could not find the details; the offline extractors did');
      return { values: offline, engine: 'offline' };
    }
    const values: Record<string, string> = {};
    for (const detail of request.details) {
      const checked = normaliseValue(kindOf(detail), fromModel[detail.name], context);
      const value = checked || offline[detail.name];
      if (value) values[detail.name] = value;
    }
    return { values, engine: 'llm' };
  }

  private async ask(request: FindRequest): Promise<Record<string, unknown>> {
    const { client, model, timeoutMs } = this.llm!;
    let transcript = request.transcript.map((t) => `${t.role === 'visitor' ? 'Visitor' : 'Agent'}: ${t.text}`).join('\n');
    if (transcript.length > MAX_TRANSCRIPT_CHARS) transcript = transcript.slice(-MAX_TRANSCRIPT_CHARS);
    const wanted = request.details.map((d) => `- "${d.name}" (${kindOf(d)}): ${d.description || d.name}`).join('\n');
    const completion = await client.chat.completions.create(
      {
        model: model ?? 'default',
        temperature: 0,
        response_format: { type: 'json_object' },
        messages: [
          {
            role: 'system',
            content: [
              'You read the transcript of a conversation between a website visitor and an assistant, and pick out details the visitor gave.',
              'Answer with one JSON object and nothing else. Its keys are the detail names asked for; each value is a string.',
              'Use only what the visitor said (or confirmed). A detail the visitor did not give is an empty string: never guess or invent.',
              'Write e-mail addresses as addresses, phone numbers with their country code when said, dates as YYYY-MM-DD (with HH:MM when a time was said),',
              `numbers as digits, yes/no details as "yes" or "no". The conversation took place on ${request.reference.toISOString().slice(0, 10)}.`,
            ].join('\n'),
          },
          { role: 'user', content: `Details to find:\n${wanted}\n\nTranscript:\n${transcript}` },
        ],
      },
      { timeout: timeoutMs, signal: request.signal },
    );
    const content = completion.choices[0]?.message?.content ?? '';
    const json = content.slice(content.indexOf('{'), content.lastIndexOf('}') + 1);
    const parsed = JSON.parse(json) as unknown;
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('the model did not answer a JSON object');
    return parsed as Record<string, unknown>;
  }
}
