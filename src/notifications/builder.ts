/**
 * The rule builder: a plain-language request ("tell me when someone asks about refunds") becomes a
 * proposed alert rule, answered for confirmation (nothing is saved; the caller POSTs the rule it
 * accepts). With LLM_URL the language model reads the request (any OpenAI-compatible server,
 * through the `openai` client as the brain uses it); without it, or when the model fails or answers
 * something that is not a valid rule, a small offline parser does. A `draft` (the previous proposal)
 * is refined by the next request ("only if it lasts over 2 minutes").
 */
import type OpenAI from 'openai';
import { z } from 'zod';
import type { AlertConditions } from './conditions.js';
import { formatDuration } from './conditions.js';
import { parseNumber } from '../core/numbers.js';

export interface ProposedRule {
  name: string;
  category: string;
  when: AlertConditions;
  destination_ids: number[];
  enabled: boolean;
}

export interface BuilderAnswer {
  rule: ProposedRule;
  /** A sentence saying what the rule does, or what was not understood. */
  reply: string;
  /** False when nothing in the request could be turned into a condition. */
  understood: boolean;
  engine: 'llm' | 'offline';
  /** Why the offline parser answered although a model is configured. */
  fallback_reason?: string;
}

export const CATEGORY = /^[a-z][a-z0-9_-]{0,39}$/;
export const SUGGESTED_CATEGORIES = ['lead', 'support', 'complaint', 'urgent', 'alert'] as const;

// ---------- offline ----------

const num = (raw: string) => parseNumber(raw) ?? Number(raw);
const NUM = '(\\d+(?:\\.\\d+)?|one|two|three|four|five|six|seven|eight|nine|ten|twenty|thirty|a|an)';

const UNIT_SECONDS: Array<[RegExp, number]> = [
  [/^(h|hr|hrs|hour|hours)$/i, 3600],
  [/^(m|min|mins|minute|minutes)$/i, 60],
  [/^(s|sec|secs|second|seconds)$/i, 1],
];

const DETAILS: Array<[RegExp, string]> = [
  [/^(e-?mail|email address|e-mail address|mail)$/i, 'email'],
  [/^(phone|phone number|number|mobile|mobile number|telephone|telephone number|cell)$/i, 'phone'],
  [/^(name|full name)$/i, 'name'],
  [/^(address|postal address)$/i, 'address'],
  [/^(company|company name|business)$/i, 'company'],
];

const CATEGORY_HINTS: Array<[RegExp, string]> = [
  [/\b(urgent|emergency|asap|immediately|right away)\b/i, 'urgent'],
  [/\b(complain\w*|angry|upset|unhappy|furious|rude|disappointed|frustrated)\b/i, 'complaint'],
  [/\b(lead|leads|buy\w*|purchas\w*|pric\w*|quote|demo|sales?|interested|book\w*|appointment|sign(?:s|ed)? up|order\w*)\b/i, 'lead'],
  [/\b(refund\w*|cancel\w*|problem\w*|issue\w*|broken|help|support|bug\w*|return\w*)\b/i, 'support'],
];

const STOP_TOPIC = /\b(?:and|or|if|when|but|who|that|with|after|before|longer|more|over|at least|for more|lasting|lasts|and leaves|as|in category|category)\b/i;
const LEADING_ARTICLES = /^(?:the|a|an|our|my|their|your|some|any|about|for|regarding)\s+/i;

function splitTopics(raw: string): string[] {
  return raw
    .split(/\s*(?:,|\bor\b|\band\b|\/)\s*/i)
    .map((t) => t.trim().replace(/^["'“”‘’]+|["'“”‘’.!?]+$/g, ''))
    .map((t) => {
      let s = t;
      while (LEADING_ARTICLES.test(s)) s = s.replace(LEADING_ARTICLES, '');
      return s.trim().toLowerCase();
    })
    .filter((t) => t.length >= 2 && t.length <= 60 && !/^(someone|anyone|a visitor|visitor|people|they|it|this|that|something)$/.test(t));
}

/** Reads the request with patterns; unknown parts are ignored. */
export function parseRequest(message: string, draft?: Partial<ProposedRule>): BuilderAnswer {
  const text = message.replace(/\s+/g, ' ').trim();
  const when: AlertConditions = { ...(draft?.when ?? {}) };
  const keywords = new Set<string>(draft?.when?.keywords ?? []);
  let understood = false;

  // Quoted words and phrases are keywords as written.
  for (const quoted of text.matchAll(/["“‘']([^"”’']{2,60})["”’']/g)) {
    keywords.add(quoted[1].trim().toLowerCase());
    understood = true;
  }
  // "asks about X", "mentions X or Y", "talks about X", "keywords: X, Y"
  const topic =
    /\b(?:ask(?:s|ed|ing)?|talk(?:s|ed|ing)?|speak(?:s|ing)?|mention(?:s|ed|ing)?|say(?:s|ing)?|said|inquir(?:es|ed|ing)?|enquir(?:es|ed|ing)?|want(?:s|ed|ing)?|complain(?:s|ed|ing)?|keywords?:?|words?:?|brings? up|requests?)\s+(?:about\s+|for\s+|of\s+|regarding\s+|a\s+|an\s+)?(.+?)(?=$|[.;!?]|,?\s+(?:and\s+)?(?:if|when|but|who|that|with|after|lasting|longer|more than|over|at least|in category|as (?:a|an)\b|category|and (?:gives|leaves|shares|provides|stays|talks|speaks|lasts)))/gi;
  for (const match of text.matchAll(topic)) {
    // A quoted topic ("mentions "cake" in a call…") was taken as written above: what follows the
    // quote is the rest of the sentence, not more of the keyword.
    if (/^["“‘']/.test(match[1])) continue;
    const raw = match[1].replace(/["“”‘’]/g, '');
    if (STOP_TOPIC.test(raw) && splitTopics(raw.split(STOP_TOPIC)[0]).length === 0) continue;
    for (const t of splitTopics(raw)) keywords.add(t);
  }
  if (keywords.size) {
    when.keywords = [...keywords].slice(0, 20);
    understood = true;
  }

  // Durations need a unit ("longer than 2 minutes", "over 90 s", "at least an hour").
  const duration = new RegExp(
    `\\b(?:longer than|more than|over|at least|above|exceeds?|lasts?|lasting)\\s+(?:more than\\s+|over\\s+|at least\\s+)?${NUM}\\s*(hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s)\\b`,
    'i',
  ).exec(text);
  if (duration) {
    const amount = /^an?$/i.test(duration[1]) ? 1 : num(duration[1]);
    const unit = UNIT_SECONDS.find(([re]) => re.test(duration[2]))![1];
    when.min_duration_seconds = Math.round(amount * unit);
    understood = true;
  }

  // Visitor turns ("more than 3 messages", "at least 5 turns").
  const turns = new RegExp(
    `\\b(more than|over|at least|)\\s*${NUM}\\+?\\s*(?:or more\\s+)?(?:visitor\\s+)?(?:turns?|messages?|times|questions|replies|exchanges)\\b`,
    'i',
  ).exec(text);
  if (turns && !/^an?$/i.test(turns[2])) {
    const n = num(turns[2]);
    when.min_visitor_turns = /more than|over/i.test(turns[1]) ? n + 1 : n;
    understood = true;
  }

  // A detail collected ("leaves their email", "gives a phone number").
  const detail =
    /\b(?:leaves?|left|gives?|gave|shares?|shared|provides?|provided|enters?|entered|collect(?:s|ed)?|with)\s+(?:their|his|her|an?|the|a|my)?\s*(e-?mail(?: address)?|mail|phone(?: number)?|mobile(?: number)?|telephone(?: number)?|number|full name|name|postal address|address|company(?: name)?)\b/i.exec(
      text,
    );
  if (detail) {
    when.detail_collected = DETAILS.find(([re]) => re.test(detail[1].trim()))?.[1] ?? detail[1].toLowerCase();
    understood = true;
  }

  const explicit = /\b(?:category|as (?:a|an))\s+["']?([a-z][a-z0-9_-]{0,39})\b/i.exec(text);
  const category =
    explicit && CATEGORY.test(explicit[1].toLowerCase())
      ? explicit[1].toLowerCase()
      : (draft?.category ?? CATEGORY_HINTS.find(([re]) => re.test(text))?.[1] ?? 'alert');

  const rule: ProposedRule = {
    name: draft?.name && !understood ? draft.name : ruleName(when),
    category,
    when,
    destination_ids: draft?.destination_ids ?? [],
    enabled: draft?.enabled ?? true,
  };
  return {
    rule,
    understood: understood || !!draft,
    reply: understood ? `I'll notify you when ${describe(when)} (category "${category}"). Save this rule to confirm it.` : NOT_UNDERSTOOD,
    engine: 'offline',
  };
}

const NOT_UNDERSTOOD =
  'I could not turn that into a rule. Try for example: "tell me when someone asks about refunds", "a visitor leaves their email", "conversations longer than 5 minutes" or "more than 3 messages".';

/** A short name for the rule, from its conditions. */
export function ruleName(when: AlertConditions): string {
  const parts: string[] = [];
  if (when.keywords?.length) parts.push(`Mentions ${when.keywords.slice(0, 3).join(' or ')}`);
  if (when.detail_collected) parts.push(`${parts.length ? 'leaves' : 'Leaves'} ${when.detail_collected}`);
  if (when.min_duration_seconds !== undefined) parts.push(`${parts.length ? 'longer' : 'Longer'} than ${formatDuration(when.min_duration_seconds)}`);
  if (when.min_visitor_turns !== undefined) parts.push(`${when.min_visitor_turns}+ visitor turns`);
  return (parts.join(', ') || 'Every conversation').slice(0, 100);
}

/** The conditions in words: "a visitor mentions refunds and leaves their email". */
export function describe(when: AlertConditions): string {
  const parts: string[] = [];
  if (when.keywords?.length) parts.push(`a visitor mentions ${when.keywords.map((k) => `"${k}"`).join(' or ')}`);
  if (when.detail_collected) parts.push(`${parts.length ? 'leaves' : 'a visitor leaves'} their ${when.detail_collected}`);
  if (when.min_duration_seconds !== undefined) parts.push(`the conversation lasts at least ${formatDuration(when.min_duration_seconds)}`);
  if (when.min_visitor_turns !== undefined) parts.push(`the visitor speaks at least ${when.min_visitor_turns} times`);
  return parts.length ? parts.join(' and ') : 'any conversation ends';
}

// ---------- language model ----------

export interface BuilderLlm {
  url: string;
  apiKey?: string;
  model?: string;
  timeoutMs: number;
}

/** What the model must answer: the rule's fields, checked like a saved rule's. */
const ModelAnswer = z.object({
  name: z.string().min(1).max(100),
  category: z.string().regex(CATEGORY),
  when: z
    .object({
      keywords: z.array(z.string().min(1).max(100)).max(20).optional(),
      min_duration_seconds: z.number().int().min(0).max(86_400).optional(),
      min_visitor_turns: z.number().int().min(0).max(1000).optional(),
      detail_collected: z.string().min(1).max(60).optional(),
    })
    .strip(),
  reply: z.string().max(500).optional(),
  understood: z.boolean().optional(),
});

const SYSTEM_PROMPT = `You turn a business owner's request into an alert rule for conversations their website's assistant has with visitors. A rule fires when a conversation ends and EVERY condition given holds.
Answer with one JSON object only, no prose, of this shape:
{"name": short title (max 60 chars), "category": one lowercase word (lead, support, complaint, urgent or alert unless the owner names another), "when": {"keywords": [words or short phrases the visitor says, lowercase; include obvious variants], "min_duration_seconds": integer, "min_visitor_turns": integer, "detail_collected": "email" | "phone" | "name" | another detail name}, "reply": one sentence telling the owner what the rule does, "understood": true or false}
Leave out conditions the request does not ask for. If a draft rule is given, change it as the request says and keep the rest.`;

export async function buildWithModel(settings: BuilderLlm, message: string, draft?: Partial<ProposedRule>): Promise<BuilderAnswer> {
  // Loaded here: only a server with LLM_URL whose owner uses the builder needs the client library.
  const { default: OpenAIClient } = await import('openai');
  const client = new OpenAIClient({ baseURL: settings.url, apiKey: settings.apiKey || 'not-needed', maxRetries: 0, timeout: settings.timeoutMs });
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'system', content: SYSTEM_PROMPT }];
  if (draft) messages.push({ role: 'user', content: `Draft rule: ${JSON.stringify({ name: draft.name, category: draft.category, when: draft.when })}` });
  messages.push({ role: 'user', content: message });
  try {
    const completion = await client.chat.completions.create({ model: settings.model ?? 'default', messages, temperature: 0, max_tokens: 400, stream: false });
    const content = completion.choices[0]?.message?.content ?? '';
    const json = /\{[\s\S]*\}/.exec(content)?.[0];
    if (!json) throw new Error('the model did not answer a JSON object');
    const parsed = ModelAnswer.safeParse(JSON.parse(json));
    if (!parsed.success) throw new Error(`the model's rule is not valid: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
    const answer = parsed.data;
    const when: AlertConditions = {};
    const keywords = [...new Set((answer.when.keywords ?? []).map((k) => k.trim().toLowerCase()).filter(Boolean))];
    if (keywords.length) when.keywords = keywords;
    if (answer.when.min_duration_seconds !== undefined) when.min_duration_seconds = answer.when.min_duration_seconds;
    if (answer.when.min_visitor_turns !== undefined) when.min_visitor_turns = answer.when.min_visitor_turns;
    if (answer.when.detail_collected) when.detail_collected = answer.when.detail_collected.trim().toLowerCase();
    const understood = answer.understood ?? Object.keys(when).length > 0;
    return {
      rule: { name: answer.name.trim(), category: answer.category, when, destination_ids: draft?.destination_ids ?? [], enabled: draft?.enabled ?? true },
      reply:
        answer.reply?.trim() ||
        (understood ? `I'll notify you when ${describe(when)} (category "${answer.category}"). Save this rule to confirm it.` : NOT_UNDERSTOOD),
      understood,
      engine: 'llm',
    };
  } catch (error) {
    const offline = parseRequest(message, draft);
    return { ...offline, fallback_reason: `The language model could not be used (${(error as Error).message}); the offline parser read the request.` };
  }
}
