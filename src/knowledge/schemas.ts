/** Request and response schemas of the knowledge routes (validation and the OpenAPI document). */
import { z } from 'zod';
import { AgentIdParams } from '../agents/schemas.js';

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Text the database can store: no NUL characters, no unpaired UTF-16 surrogates. */
export function storableText(max: number, min = 0) {
  return z
    .string()
    .min(min)
    .max(max)
    .refine((s) => !s.includes('\u0000'), { message: 'Text must not contain NUL characters' })
    .refine((s) => !LONE_SURROGATE.test(s), { message: 'Text must be valid Unicode (no unpaired surrogates)' });
}

export const WebUrl = storableText(2048, 1).refine(
  (s) => {
    try {
      const url = new URL(s);
      return (url.protocol === 'http:' || url.protocol === 'https:') && !!url.hostname;
    } catch {
      return false;
    }
  },
  { message: 'must be an http(s) URL' },
);

export const PageRequest = z
  .object({
    url: WebUrl,
    is_primary: z.boolean().default(true).describe('true for pages that describe the business (home, services, prices, contact); false for background reading'),
  })
  .meta({ id: 'PageRequest' });

export const GenerateBrainRequest = z
  .object({
    pages: z
      .array(PageRequest)
      .max(500)
      .optional()
      .describe("The pages to read; absent or empty: the pages found on the agent's website (see extract-links), at most CRAWL_MAX_PAGES"),
  })
  .meta({ id: 'GenerateBrainRequest' });

export const EditPageRequest = z
  .object({
    is_primary: z.boolean().optional(),
    content: storableText(200_000)
      .nullable()
      .optional()
      .describe('The owner\'s own text for this page (Markdown or plain text); it replaces what was read. null or "" goes back to the page\'s text.'),
  })
  .meta({ id: 'EditPageRequest' });

export const KBSectionCreate = z
  .object({
    title: storableText(200, 1).refine((s) => s.trim().length > 0, { message: 'title must not be blank' }),
    content: storableText(50_000, 1),
  })
  .meta({ id: 'KBSectionCreate' });

export const KBSectionUpdate = z
  .object({
    title: KBSectionCreate.shape.title.optional(),
    content: KBSectionCreate.shape.content.optional(),
  })
  .meta({ id: 'KBSectionUpdate' });

export const PageParams = AgentIdParams.extend({ page_id: z.coerce.number().int().min(1).max(2_147_483_647) });
export const TopicParams = AgentIdParams.extend({ topic: storableText(100, 1) });
export const ClearPagesQuery = z.object({
  confirm: z.literal('true'),
  is_primary: z.enum(['true', 'false']).optional().describe('Only primary (true) or only background (false) pages; absent: all'),
});

const Fact = z.object({
  topic: z.string(),
  text: z.string(),
  source: z.object({ kind: z.string(), title: z.string(), url: z.string().optional() }),
});

export const BrainStatusResponse = z
  .object({
    agent_id: z.number().int(),
    brain_status: z.enum(['none', 'pending', 'processing', 'complete', 'failed']).describe('none: never built'),
    progress: z.object({ pages_done: z.number().int(), pages_total: z.number().int() }),
    phase: z.string().nullable().describe('While building: discover, read or compile'),
    error: z.string().nullable().describe('Why the build failed'),
    engine: z.string().nullable().describe('Who wrote the instructions: llm or offline'),
    requested_at: z.string().nullable(),
    started_at: z.string().nullable(),
    finished_at: z.string().nullable(),
    instructions: z.string().optional().describe('When complete: who the agent is and what it knows'),
    facts: z.array(Fact).optional().describe('When complete: the facts a visitor asks about, each with its source'),
  })
  .meta({ id: 'BrainStatusResponse' });

export const AgentPageResponse = z
  .object({
    id: z.number().int(),
    agent_id: z.number().int(),
    url: z.string(),
    is_primary: z.boolean(),
    status: z.enum(['pending', 'read', 'failed']),
    title: z.string().nullable(),
    size: z.number().int().describe('Bytes of readable text the agent knows from this page'),
    error: z.string().nullable(),
    read_at: z.string().nullable(),
    final_url: z.string().nullable(),
    has_override: z.boolean(),
    created_at: z.string(),
    updated_at: z.string(),
    content: z.string().optional().describe('The readable text (single-page answers only)'),
  })
  .meta({ id: 'AgentPageResponse' });

export const ExtractLinksResponse = z
  .object({
    homepage_url: z.string(),
    links: z.array(z.object({ url: z.string(), path: z.string(), anchor: z.string(), score: z.number(), source: z.string(), default_category: z.string() })),
    total_found: z.number().int(),
  })
  .meta({ id: 'ExtractLinksResponse' });

export const KBSectionsResponse = z
  .object({
    agent_id: z.number().int(),
    sections: z.array(z.object({ topic: z.string(), title: z.string(), content: z.string(), created_at: z.string(), updated_at: z.string() })),
  })
  .meta({ id: 'KBSectionsResponse' });
