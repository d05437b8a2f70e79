/**
 * The public start: what lets a website without a server of its own offer the avatar.
 *
 *   GET  /embed.js                the widget script of the embed config's snippet (widget.ts)
 *   GET  /v1/embed/config         the widget's public settings for an embed key
 *   POST /v1/embed/sessions       starts a conversation-mode session with the public embed key
 *
 * No API key: the embed key is public. What protects the account instead: the embed config's
 * allowed origins (checked on the browser's Origin header; empty allows any), rate limits per
 * visitor and per network address, every rule of an ordinary session start (plan, balance,
 * concurrency, capacity), and visitor values that count only when they pass the agent's checks
 * (signed with its secret when it requires that).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { EmbedSettings } from '../agents/embed.js';
import type { VisitorCheck } from '../agents/visitor-values.js';
import { randomToken } from '../core/secrets.js';
import { KeyedLimiter } from './limits.js';
import { WIDGET_SCRIPT } from './widget.js';
import { routeErrors, type CatalogueEntry } from '../core/errors.js';
import { embedErrors } from './errors.js';

/** Starts one visitor may make: 5 at once, then one every 30 s. */
export const VISITOR_BURST = 5;
export const VISITOR_PER_SECOND = 1 / 30;
/** Starts from one network address (an office or a school shares one): 30 at once, then one every 2 s. */
export const ADDRESS_BURST = 30;
export const ADDRESS_PER_SECOND = 1 / 2;

/** What the public start needs of the agents and sessions capabilities (wired by app.ts). */
export interface EmbedHooks {
  /** The agent an embed key belongs to. */
  agentByEmbedKey(embedKey: string): Promise<{ id: number; account_id: number; embed: EmbedSettings } | undefined>;
  /** The agent's visitor-value check (declared fields, signature, age). */
  checkVisitor(agentId: number, input: { values: Record<string, string>; timestamp?: number; signature?: string }): Promise<VisitorCheck>;
  /** The agent's declared visitor fields that are required. */
  requiredFields(agentId: number): Promise<string[]>;
  /** What `start` can answer (the session start's checks), listed in /openapi.json. */
  readonly startErrors: readonly CatalogueEntry[];
  /** An ordinary conversation-mode session start for the agent, with its visitor. */
  start(
    accountId: number,
    agentId: number,
    visitor: { id: string; values: Record<string, string> },
  ): Promise<{
    session_id: string;
    player_url: string;
    max_session_seconds: number | null;
    created_at: string;
  }>;
}

const EmbedKey = z.string().regex(/^pk_[A-Za-z0-9_-]{8,64}$/, 'an embed key (pk_…)');
const VisitorId = z.string().regex(/^[A-Za-z0-9._:@-]{1,128}$/, '1–128 letters, digits and . _ : @ -');

export const EmbedStartRequest = z
  .object({
    embed_key: EmbedKey,
    visitor_id: VisitorId.optional().describe('The visitor: the widget keeps a random one per browser and site; a site may pass its own'),
    visitor: z
      .object({
        values: z.record(z.string().max(64), z.string().max(2000)).refine((v) => Object.keys(v).length <= 50, 'at most 50 values'),
        timestamp: z.number().int().min(0).optional(),
        signature: z.string().max(200).optional(),
      })
      .strict()
      .optional()
      .describe('Visitor values, signed as docs/decisions.md describes when the agent requires it'),
  })
  .strict()
  .meta({ id: 'EmbedStartRequest' });

export const EmbedStartResponse = z
  .object({
    session_id: z.string(),
    mode: z.literal('conversation'),
    player_url: z.string(),
    visitor_id: z.string(),
    max_session_seconds: z.number().int().nullable(),
    created_at: z.string(),
  })
  .meta({ id: 'EmbedStartResponse' });

export const EmbedPublicConfig = z
  .object({
    position: z.string(),
    button_text: z.string(),
    primary_color: z.string(),
    auto_open: z.boolean(),
    width: z.number(),
    height: z.number(),
  })
  .meta({ id: 'EmbedPublicConfig' });

/** The Origin header, normalised as allowed_origins are stored (no trailing slash), or null. */
function originOf(request: FastifyRequest): string | null {
  const origin = request.headers.origin;
  return typeof origin === 'string' && origin !== 'null' ? origin.replace(/\/$/, '') : null;
}

function checkOrigin(embed: EmbedSettings, origin: string | null): void {
  if (!embed.allowed_origins.length) return;
  if (!origin) throw embedErrors.origin_not_allowed('This agent is embedded on its allowed sites only; the request has no Origin');
  if (!embed.allowed_origins.includes(origin)) throw embedErrors.origin_not_allowed(`${origin} is not one of this agent's allowed origins`);
}

/** CORS for the public routes: any site may ask (the answer says whether it is allowed); no cookies. */
function allowCors(request: FastifyRequest, reply: FastifyReply): void {
  const origin = request.headers.origin;
  reply.header('Vary', 'Origin');
  if (typeof origin === 'string') reply.header('Access-Control-Allow-Origin', origin);
}

export function embedRoutes(server: FastifyInstance, hooks: EmbedHooks): { limits: { visitor: KeyedLimiter; address: KeyedLimiter } } {
  const app = server.withTypeProvider<ZodTypeProvider>();
  const tags = ['Embed'];
  const limits = { visitor: new KeyedLimiter(VISITOR_PER_SECOND, VISITOR_BURST), address: new KeyedLimiter(ADDRESS_PER_SECOND, ADDRESS_BURST) };
  const cors = { onRequest: async (request: FastifyRequest, reply: FastifyReply) => allowCors(request, reply) };

  app.get('/embed.js', { schema: { hide: true } }, async (_request, reply) => {
    return reply
      .type('application/javascript; charset=utf-8')
      .header('Cache-Control', 'public, max-age=300')
      .header('Cross-Origin-Resource-Policy', 'cross-origin')
      .send(WIDGET_SCRIPT);
  });

  // Preflight of the JSON POST (and of any header a site adds).
  for (const url of ['/v1/embed/sessions', '/v1/embed/config']) {
    app.options(url, { config: { public: true }, schema: { hide: true } }, async (request, reply) => {
      allowCors(request, reply);
      return reply
        .header('Access-Control-Allow-Methods', 'GET, POST, OPTIONS')
        .header('Access-Control-Allow-Headers', 'content-type')
        .header('Access-Control-Max-Age', '600')
        .code(204)
        .send();
    });
  }

  app.get(
    '/v1/embed/config',
    {
      ...cors,
      config: { public: true, ...routeErrors(embedErrors.embed_key_not_found, embedErrors.origin_not_allowed) },
      schema: {
        tags,
        summary: "The widget's public settings for an embed key (no API key; allowed origins only)",
        querystring: z.object({ embed_key: EmbedKey }),
        response: { 200: EmbedPublicConfig },
      },
    },
    async (request, reply) => {
      const agent = await hooks.agentByEmbedKey(request.query.embed_key);
      if (!agent) throw embedErrors.embed_key_not_found();
      checkOrigin(agent.embed, originOf(request));
      const e = agent.embed;
      reply.header('Cache-Control', 'no-cache');
      return { position: e.position, button_text: e.button_text, primary_color: e.primary_color, auto_open: e.auto_open, width: e.width, height: e.height };
    },
  );

  app.post(
    '/v1/embed/sessions',
    {
      ...cors,
      config: {
        public: true,
        ...routeErrors(
          embedErrors.embed_key_not_found,
          embedErrors.origin_not_allowed,
          embedErrors.rate_limited,
          embedErrors.invalid_visitor_values,
          ...hooks.startErrors,
        ),
      },
      schema: {
        tags,
        summary: 'Start a conversation-mode session from a website with the public embed key (201; no API key)',
        body: EmbedStartRequest,
        response: { 201: EmbedStartResponse },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const agent = await hooks.agentByEmbedKey(body.embed_key);
      if (!agent) throw embedErrors.embed_key_not_found();
      checkOrigin(agent.embed, originOf(request));

      const visitorId = body.visitor_id ?? randomToken('v_', 16);
      // Both limits are taken, so neither a new visitor id per request nor one busy address gets through.
      const waits = [limits.visitor.take(`${agent.id}:${visitorId}`), limits.address.take(`${agent.id}:${request.ip}`)];
      const wait = Math.max(...waits);
      if (wait > 0) throw embedErrors.rate_limited({ 'Retry-After': String(Math.ceil(wait)) });

      let values: Record<string, string> = {};
      if (body.visitor) {
        const check = await hooks.checkVisitor(agent.id, body.visitor);
        if (!check.valid) {
          const problems = check.problems.map((p) => (p.name ? `${p.name}: ${p.message}` : p.message)).join('; ');
          throw embedErrors.invalid_visitor_values(`Visitor values refused: ${problems}`);
        }
        values = check.accepted;
      } else {
        const required = await hooks.requiredFields(agent.id);
        if (required.length) throw embedErrors.invalid_visitor_values(`This agent needs the visitor values ${required.join(', ')}`);
      }

      const started = await hooks.start(agent.account_id, agent.id, { id: visitorId, values });
      return reply.code(201).send({ ...started, mode: 'conversation' as const, visitor_id: visitorId });
    },
  );

  return { limits };
}
