/** Request and response schemas of the Agents API; they validate requests and build the OpenAPI document. */
import { z } from 'zod';
import { ISO_639_1 } from './languages.js';
import { PROVIDERS } from '../speech/voices/catalog.js';

export const CAMERAS = ['far', 'mid', 'close'] as const;
export const Camera = z.enum(CAMERAS);
export const LanguageCode = z.enum(ISO_639_1).describe('ISO 639-1 code, e.g. "en"');
export const FaceLight = z.number().min(0.5).max(1.5);
export const BackdropId = z.string().min(1).max(64).nullable().describe('Backdrop id from GET /v1/backdrops, or null for a plain backdrop');

export const Languages = z
  .object({
    main: LanguageCode,
    also: z.array(LanguageCode).max(20).default([]),
  })
  .meta({ id: 'Languages' });

// Camera names are checked by the service, which answers an unknown one with 422 invalid_look (contract.md).
const cameraList = z.array(z.string().max(16)).min(1).max(3).describe('Each of far, mid, close');

export const Studio = z
  .object({
    backdrop: BackdropId,
    cameras: cameraList,
    face_light: FaceLight,
  })
  .meta({ id: 'Studio' });
export const StudioPatch = Studio.partial().meta({ id: 'StudioPatch' });
export const StudioView = Studio.extend({ cameras: z.array(Camera) }).meta({ id: 'StudioView' });

const httpUrl = z
  .string()
  .max(2048)
  .refine(
    (s) => {
      try {
        const u = new URL(s);
        return u.protocol === 'http:' || u.protocol === 'https:';
      } catch {
        return false;
      }
    },
    { message: 'must be an http(s) URL' },
  );

const createFields = {
  name: z.string().trim().min(1).max(100),
  avatar_id: z.string().min(1).max(64),
  voice_id: z.string().min(1).max(128),
  tts_primary: z.enum(PROVIDERS),
  languages: Languages,
  studio: StudioPatch,
  website_url: httpUrl.nullable(),
  system_prompt: z.string().max(50_000).nullable(),
  concurrency_limit: z.number().int().min(1).max(1000),
};

export const AGENT_STATUSES = ['active', 'inactive'] as const;

export const AgentCreateRequest = z
  .object({
    ...createFields,
    avatar_id: createFields.avatar_id.optional(),
    voice_id: createFields.voice_id.optional(),
    tts_primary: createFields.tts_primary.optional(),
    languages: createFields.languages.optional(),
    studio: createFields.studio.optional(),
    website_url: createFields.website_url.optional(),
    system_prompt: createFields.system_prompt.optional(),
    concurrency_limit: createFields.concurrency_limit.optional(),
  })
  .meta({ id: 'AgentCreateRequest' });

export const AgentUpdateRequest = z
  .object({
    ...(Object.fromEntries(Object.entries(createFields).map(([k, v]) => [k, v.optional()])) as {
      [K in keyof typeof createFields]: z.ZodOptional<(typeof createFields)[K]>;
    }),
    welcome_message: z.string().max(300).nullable().optional(),
    fillers_enabled: z.boolean().optional(),
    status: z.enum(AGENT_STATUSES).optional().describe('active: takes sessions; inactive: new sessions answer 409 agent_inactive'),
    liveavatar_avatar_id: z
      .uuid()
      .nullable()
      .optional()
      .describe('The avatar_id your LiveAvatar code sends to POST /v1/sessions/token (a UUID), so it starts this agent unchanged; unique in the account'),
  })
  .meta({ id: 'AgentUpdateRequest' });

export const AgentResponse = z
  .object({
    id: z.number().int(),
    name: z.string(),
    avatar_id: z.string(),
    voice_id: z.string(),
    tts_primary: z.string(),
    languages: Languages,
    studio: StudioView,
    website_url: z.string().nullable(),
    system_prompt: z.string().nullable(),
    concurrency_limit: z.number().int(),
    welcome_message: z.string().nullable(),
    fillers_enabled: z.boolean(),
    status: z.enum(AGENT_STATUSES),
    is_default: z.boolean(),
    liveavatar_avatar_id: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'AgentResponse' });

export const HasAgentsResponse = z
  .object({
    has_agents: z.boolean(),
    count: z.number().int(),
    default_agent_id: z.number().int().nullable(),
  })
  .meta({ id: 'HasAgentsResponse' });

// ---- embed ----
export const WIDGET_POSITIONS = ['bottom-right', 'bottom-left', 'inline'] as const;
const origin = z
  .string()
  .max(255)
  .refine(
    (s) => {
      try {
        const u = new URL(s);
        return (u.protocol === 'https:' || u.protocol === 'http:') && u.origin === s.replace(/\/$/, '');
      } catch {
        return false;
      }
    },
    { message: 'must be an origin such as https://www.example.com (scheme, host and optional port, no path)' },
  );

export const EmbedConfigUpdate = z
  .object({
    allowed_origins: z.array(origin).max(50).describe('Sites allowed to show this agent; empty allows any').optional(),
    position: z.enum(WIDGET_POSITIONS).optional(),
    button_text: z.string().trim().min(1).max(40).optional(),
    primary_color: z
      .string()
      .regex(/^#[0-9a-fA-F]{6}$/)
      .optional(),
    auto_open: z.boolean().optional(),
    width: z.number().int().min(200).max(1920).optional(),
    height: z.number().int().min(200).max(1920).optional(),
  })
  .meta({ id: 'EmbedConfigUpdate' });

export const EmbedConfigResponse = z
  .object({
    agent_id: z.number().int(),
    embed_key: z.string().describe('Public key that identifies this agent in the embed snippet; regenerate replaces it'),
    allowed_origins: z.array(z.string()),
    position: z.enum(WIDGET_POSITIONS),
    button_text: z.string(),
    primary_color: z.string(),
    auto_open: z.boolean(),
    width: z.number().int(),
    height: z.number().int(),
    script_snippet: z.string().describe('Paste into the site: a button that opens the avatar in a frame'),
    iframe_snippet: z.string().describe('For a session your server started: frame that loads its player_url'),
    updated_at: z.string(),
  })
  .meta({ id: 'EmbedConfigResponse' });

// ---- visitor values ----
export const VisitorField = z
  .object({
    name: z.string().regex(/^[a-z][a-z0-9_]{0,39}$/, 'lower-case letters, digits and _, starting with a letter, at most 40'),
    description: z.string().max(200).default(''),
    required: z.boolean().default(false),
    max_length: z.number().int().min(1).max(2000).default(256),
  })
  .meta({ id: 'VisitorField' });

export const VisitorValuesUpdate = z
  .object({
    fields: z
      .array(VisitorField)
      .max(50)
      .refine((a) => new Set(a.map((f) => f.name)).size === a.length, { message: 'field names must be unique' })
      .optional(),
    require_signature: z.boolean().optional(),
    max_age_seconds: z.number().int().min(30).max(86_400).optional(),
  })
  .meta({ id: 'VisitorValuesUpdate' });

export const VisitorValuesResponse = z
  .object({
    agent_id: z.number().int(),
    fields: z.array(VisitorField),
    require_signature: z.boolean(),
    max_age_seconds: z.number().int(),
    secret_hint: z.string().describe('First characters of the signing secret'),
    signing: z.object({
      algorithm: z.literal('HMAC-SHA256'),
      canonical_form: z.string(),
      example: z.string(),
    }),
    updated_at: z.string(),
  })
  .meta({ id: 'VisitorValuesResponse' });

export const SigningSecretResponse = z
  .object({
    agent_id: z.number().int(),
    secret: z.string(),
    rotated_at: z.string(),
  })
  .meta({ id: 'SigningSecretResponse' });

export const PreviewRequest = z
  .object({
    values: z.record(z.string(), z.string().max(10_000)),
    timestamp: z.number().int().min(0).optional().describe('Unix seconds the site signed at'),
    signature: z.string().max(200).optional().describe('hex HMAC-SHA256, optionally prefixed sha256='),
  })
  .meta({ id: 'PreviewRequest' });

export const PreviewResponse = z
  .object({
    valid: z.boolean(),
    signature_checked: z.boolean(),
    signature_valid: z.boolean().nullable(),
    canonical_text: z.string(),
    accepted: z.record(z.string(), z.string()),
    ignored: z.array(z.string()),
    problems: z.array(z.object({ name: z.string().nullable(), code: z.string(), message: z.string() })),
    variables: z.record(z.string(), z.string()).describe('What the agent and handoff templates receive as {{visitor.<name>}}'),
  })
  .meta({ id: 'PreviewResponse' });

export const AgentIdParams = z.object({ agent_id: z.coerce.number().int().min(1).max(2_147_483_647) });
export { DeleteQuery } from '../core/validation.js';
