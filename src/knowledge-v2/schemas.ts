/** Request and response schemas of the knowledge-v2 routes (validation and the OpenAPI document). */
import { z } from 'zod';
import { storableText, WebUrl, PageRequest } from '../knowledge/schemas.js';

/** An id in a body: a string or an integer, compared as text. */
export const BodyId = z.union([z.number().int(), z.string().max(100)]).describe('An id (an integer, or the same as a string)');

export const ProbeRequest = z
  .object({
    url: WebUrl.optional().describe("The site to look at; absent: the agent's website_url"),
  })
  .meta({ id: 'ProbeRequest' });

export const ProbeResponse = z
  .object({
    url: z.string(),
    reachable: z.boolean().describe('The URL answered 2xx (after redirects)'),
    language: z.string().nullable().describe('Base ISO 639-1 code of the site, or null'),
    business_type: z.string().nullable().describe('A word or two naming the kind of business, or null'),
    page_count: z.number().int().describe("Pages found from the sitemap and the home page's links (own host, allowed by robots.txt)"),
    robots: z
      .object({ disallow: z.array(z.string()), sitemaps: z.array(z.string()) })
      .nullable()
      .describe('null without a robots.txt; else the rules that apply to the reader'),
  })
  .meta({ id: 'ProbeResponse' });

export const ExtractRequest = z
  .object({
    pages: z.array(PageRequest).max(500).optional().describe("Pages to read first (they become the agent's pages); absent: the agent's pages"),
  })
  .meta({ id: 'ExtractRequest' });

export const FactSourceSchema = z
  .object({
    kind: z.enum(['page', 'kb_section', 'owner', 'correction', 'gap']),
    ref: z
      .union([z.string(), z.number(), z.null()])
      .describe("page: the page's id; kb_section: its topic; owner: null; correction: the preview_id; gap: the gap's id"),
    url: z.string().optional().describe("page: the page's URL"),
    gone: z.boolean().optional().describe('The page or section is gone (orphans only)'),
  })
  .meta({ id: 'FactSource' });

export const FactSchema = z
  .object({
    id: z.number().int(),
    question_id: z.number().int().nullable(),
    text: z.string(),
    sources: z.array(FactSourceSchema),
    confidence: z.number().min(0).max(1),
    orphan: z.boolean().describe('Every source is gone; kept until resolved (orphans/resolve)'),
    owner: z.boolean().describe("The owner's word (a source owner, correction or gap): it wins over pages"),
  })
  .meta({ id: 'Fact' });

export const QuestionSchema = z
  .object({
    id: z.number().int(),
    question: z.string(),
    topic: z.string(),
    state: z.enum(['needed', 'not_applicable', 'skipped']),
    answered: z.boolean(),
    key: z.string().describe('Stable name of the question in its schema'),
  })
  .meta({ id: 'Question' });

export const ReviewItemSchema = z
  .object({ id: z.number().int(), question_id: z.number().int().nullable(), fact_ids: z.array(z.number().int()) })
  .meta({ id: 'ReviewItem' });

export const CompletionResponse = z
  .object({
    total: z.number().int().describe('Questions in state needed'),
    answered: z.number().int(),
    percent: z.number().int(),
    missing: z
      .array(
        z.object({
          question_id: z.number().int(),
          question: z.string(),
          topic: z.string(),
          times_asked: z.number().int().describe('Times visitors asked it (open gaps)'),
        }),
      )
      .describe('Needed questions not answered, most important first'),
  })
  .meta({ id: 'CompletionResponse' });

export const BrainView = z
  .object({
    agent_id: z.number().int(),
    business_type: z.string().nullable(),
    brain_status: z.string(),
    questions: z.array(QuestionSchema),
    facts: z.array(FactSchema),
    review: z.array(ReviewItemSchema),
    completion: CompletionResponse,
  })
  .meta({ id: 'BrainView' });

const Answer = storableText(5000).refine((s) => s.trim().length > 0, { message: 'answer must not be empty or blank' });

export const AnswerRequest = z.object({ question_id: BodyId, answer: Answer }).meta({ id: 'AnswerRequest' });
export const QuestionStateRequest = z
  .object({ question_id: BodyId, state: z.enum(['needed', 'not_applicable', 'skipped']) })
  .meta({ id: 'QuestionStateRequest' });

const FactText = storableText(5000).refine((s) => s.trim().length > 0, { message: 'text must not be empty or blank' });
export const KnowledgeOp = z
  .discriminatedUnion('op', [
    z.object({ op: z.literal('add'), text: FactText, question_id: BodyId.nullable().optional() }),
    z.object({ op: z.literal('change'), fact_id: BodyId, text: FactText }),
    z.object({ op: z.literal('remove'), fact_id: BodyId }),
  ])
  .meta({ id: 'KnowledgeOp' });
export const KnowledgeOpsRequest = z.object({ ops: z.array(KnowledgeOp).min(1).max(200) }).meta({ id: 'KnowledgeOpsRequest' });
export const KnowledgeOpsResponse = z
  .object({ results: z.array(z.object({ op: z.enum(['add', 'change', 'remove']), fact_id: z.number().int() })) })
  .meta({ id: 'KnowledgeOpsResponse' });

export const ReviewResolveRequest = z
  .union([z.object({ review_id: BodyId, fact_id: BodyId }).strict(), z.object({ review_id: BodyId, text: FactText }).strict()])
  .meta({ id: 'ReviewResolveRequest' });
export const ReviewResolveResponse = z
  .object({ resolved: z.number().int(), fact: FactSchema, dropped: z.array(z.number().int()), review: z.array(ReviewItemSchema) })
  .meta({ id: 'ReviewResolveResponse' });

export const ConsolidateResponse = z
  .object({
    merged: z.array(z.object({ fact_id: z.number().int(), merged_ids: z.array(z.number().int()) })),
    facts_before: z.number().int(),
    facts_after: z.number().int(),
  })
  .meta({ id: 'ConsolidateResponse' });

export const CorrectionRequest = z
  .object({ text: storableText(2000).refine((s) => s.trim().length > 0, { message: 'text must not be empty or blank' }) })
  .meta({ id: 'CorrectionRequest' });
const Change = z.object({ fact_id: z.number().int().nullable(), before: z.string().nullable(), after: z.string() });
export const CorrectionPreview = z
  .object({
    preview_id: z.string(),
    text: z.string(),
    engine: z.enum(['offline', 'llm']),
    expires_at: z.string(),
    changes: z.array(
      Change.extend({
        question_id: z.number().int().nullable(),
        matched: z.array(z.string()).optional().describe('Offline: the words the sentence and the fact share'),
      }),
    ),
  })
  .meta({ id: 'CorrectionPreview' });
export const CorrectionApplyRequest = z.object({ preview_id: BodyId }).meta({ id: 'CorrectionApplyRequest' });
export const CorrectionApplyResponse = z
  .object({ preview_id: z.string(), changes: z.array(Change.extend({ fact_id: z.number().int() })) })
  .meta({ id: 'CorrectionApplyResponse' });

export const RecompileResponse = z.object({ agent_id: z.number().int(), brain_status: z.string() }).loose().meta({ id: 'RecompileResponse' });

const BehaviorFields = {
  unknown_answer: storableText(500).nullable().describe("When set, the agent's reply to a question it cannot answer contains it"),
  tone: z.enum(['friendly', 'formal', 'casual']),
  answer_length: z.enum(['short', 'medium', 'long']),
  never_discuss: z.array(storableText(200, 1)).max(50).describe('Subjects the agent never discusses'),
  handover: storableText(500).nullable().describe('When the agent hands the visitor over to a person'),
};
export const BehaviorResponse = z.object(BehaviorFields).meta({ id: 'BehaviorResponse' });
export const BehaviorUpdateRequest = z
  .object({
    unknown_answer: BehaviorFields.unknown_answer.optional(),
    tone: BehaviorFields.tone.optional(),
    answer_length: BehaviorFields.answer_length.optional(),
    never_discuss: BehaviorFields.never_discuss.optional(),
    handover: BehaviorFields.handover.optional(),
  })
  .strict()
  .meta({ id: 'BehaviorUpdateRequest' });

export const DynamicInstructionsResponse = z.object({ instructions: z.string(), variables: z.array(z.string()) }).meta({ id: 'DynamicInstructionsResponse' });
export const DynamicInstructionsUpdate = z
  .object({ instructions: storableText(10_000).describe('Text with {{visitor.<name>}} placeholders') })
  .meta({ id: 'DynamicInstructionsUpdate' });
export const DynamicPreviewRequest = z
  .object({ values: z.record(z.string(), z.string().max(2000)), instructions: storableText(10_000).optional() })
  .meta({ id: 'DynamicPreviewRequest' });
export const DynamicPreviewResponse = z.object({ rendered: z.string(), variables: z.array(z.string()) }).meta({ id: 'DynamicPreviewResponse' });

export const OrphansResponse = z.object({ orphans: z.array(FactSchema) }).meta({ id: 'OrphansResponse' });
export const OrphanResolveRequest = z.object({ fact_ids: z.array(BodyId).max(2000), action: z.enum(['keep', 'drop']) }).meta({ id: 'OrphanResolveRequest' });
