/** Shapes of the LiveAvatar-compatible routes (contract.md), for validation and the OpenAPI document. */
import { z } from 'zod';

/** LiveAvatar's success envelope around `data`. */
export const Envelope = <T extends z.ZodType>(data: T) => z.object({ code: z.literal(1000), message: z.string(), data });

/** Unknown fields are ignored, not refused (they are named in `data.warnings`). */
export const TokenRequest = z
  .looseObject({
    mode: z.string().max(20).optional().describe('"LITE"; anything else answers 422 mode_not_supported'),
    avatar_id: z.string().min(1).max(100).describe("An agent of the key's account: its id, or its liveavatar_avatar_id"),
    is_sandbox: z.boolean().optional(),
    max_session_duration: z.number().int().min(1).max(86_400).optional().describe('Seconds; never longer than the plan allows'),
  })
  .meta({ id: 'LiveAvatarTokenRequest' });

export const TokenAnswer = z.object({
  session_id: z.string(),
  session_token: z.string().describe('A JWT for /v1/sessions/start, keep-alive and stop'),
  player_url: z.string().describe('The avatar: an iframe in place of the LiveKit video element'),
  warnings: z.array(z.string()).optional(),
});

export const StartAnswer = z.object({
  session_id: z.string(),
  ws_url: z.string(),
  max_session_duration: z.number().int().nullable(),
  player_url: z.string(),
});

const SessionId = z.uuid();
export const KeepAliveBody = z.object({ session_id: SessionId.optional() }).nullable().optional();
export const StopBody = z
  .object({ session_id: SessionId.optional(), reason: z.string().max(200).optional() })
  .nullable()
  .optional();
