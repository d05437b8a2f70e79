/** Request and response schemas of the Sessions API. */
import { z } from 'zod';
import { Camera, FaceLight, BackdropId } from '../agents/schemas.js';

/** Shots a session can start on or be switched to (`stage.camera`): the agent's cameras, or `auto`. */
export const CAMERA_CHOICES = ['far', 'mid', 'close', 'auto'] as const;

export const Look = z
  .object({
    backdrop: BackdropId.optional(),
    // Camera names are checked by the service: an unknown one answers 422 invalid_look (interface.md Errors), not a schema error.
    cameras: z
      .array(z.string().max(16))
      .min(1)
      .max(3)
      .optional()
      .describe(`Each of ${Camera.options.join(', ')}`),
    camera: z
      .string()
      .max(16)
      .optional()
      .describe(`Shot to start on: ${CAMERA_CHOICES.join(', ')}`),
    face_light: FaceLight.optional(),
  })
  .strict()
  .meta({ id: 'SessionLook' });

export const SessionCreateRequest = z
  .object({
    agent_id: z.number().int().min(1),
    mode: z.enum(['conversation', 'render']).default('conversation'),
    avatar_id: z.string().min(1).max(64).optional(),
    voice_id: z.string().min(1).max(128).optional(),
    look: Look.optional(),
  })
  .strict()
  .meta({ id: 'SessionCreateRequest' });

export const SessionResponse = z
  .object({
    session_id: z.string().uuid(),
    status: z.enum(['active', 'ended']),
    mode: z.enum(['conversation', 'render']),
    agent_id: z.number().int(),
    player_url: z.string(),
    ws_url: z.string().optional().describe('Render mode only; contains a secret token'),
    max_session_seconds: z.number().int().nullable(),
    created_at: z.string(),
  })
  .meta({ id: 'SessionResponse' });

export const SessionRecord = SessionResponse.omit({ ws_url: true })
  .extend({
    avatar_id: z.string(),
    voice_id: z.string(),
    voice_provider: z.string(),
    ended_at: z.string().nullable(),
    end_reason: z.string().nullable(),
    duration_seconds: z.number().nullable(),
  })
  .meta({ id: 'SessionRecord' });

export const SessionListQuery = z.object({
  status: z.enum(['active', 'ended']).optional(),
  agent_id: z.coerce.number().int().min(1).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  offset: z.coerce.number().int().min(0).default(0),
});

export const SessionIdParams = z.object({ session_id: z.string().uuid() });
