/**
 * The render-mode streaming protocol (interface.md, "Render-mode streaming protocol"): the commands
 * a caller may send, validated with zod, and the event shapes we send back.
 */
import { CAMERA_CHOICES } from '../sessions/schemas.js';
import { z } from 'zod';

export const SAMPLE_RATES = [16000, 22050, 24000, 44100, 48000] as const;
export const DEFAULT_SAMPLE_RATE = 24000;
export const MAX_FRAME_BYTES = 1024 * 1024;
export const MAX_QUEUED_SECONDS = 120;
export const MAX_SPEAK_TEXT = 5000;

/*
 * Per-session bounds (docs/render-protocol.md, "Limits"): whatever a caller can grow is capped, and
 * a command past a cap is refused with a `queue_full` error event; nothing else changes.
 */
/** Timed actions (agent.cue / stage.camera / stage.backdrop with at_seconds, expression tags) waiting. */
export const MAX_TIMED_ACTIONS = 1000;
/** Utterances waiting or playing (caller audio and agent.speak_text). */
export const MAX_QUEUED_UTTERANCES = 200;
/** Pieces (agent.speak messages and binary frames, text-only pieces included) waiting to play. */
export const MAX_QUEUED_PIECES = 12_000;
/** Characters of text waiting (agent.speak `text`, agent.speak_text not yet voiced). */
export const MAX_QUEUED_TEXT_CHARS = 20_000;

export const CUES = ['neutral', 'smile', 'happy', 'laugh', 'sad', 'surprised', 'angry', 'thinking', 'concerned', 'wink', 'nod', 'shake'] as const;
export type Cue = (typeof CUES)[number];
export { CAMERA_CHOICES };

const eventId = z.string().min(1).max(128).optional();
const atSeconds = z.number().min(0).max(3600).optional();

export const SpeakCommand = z.object({ type: z.literal('agent.speak'), event_id: eventId, audio: z.string(), text: z.string().max(MAX_SPEAK_TEXT).optional() });
export const SpeakEndCommand = z.object({ type: z.literal('agent.speak_end'), event_id: eventId, audio: z.string().optional() });
export const SpeakTextCommand = z.object({
  type: z.literal('agent.speak_text'),
  event_id: eventId,
  text: z.string().min(1).max(MAX_SPEAK_TEXT),
  cue: z.enum(CUES).optional(),
});
export const InterruptCommand = z.object({ type: z.literal('agent.interrupt'), event_id: eventId });
export const StartListeningCommand = z.object({ type: z.literal('agent.start_listening'), event_id: eventId });
export const StopListeningCommand = z.object({ type: z.literal('agent.stop_listening'), event_id: eventId });
export const CueCommand = z.object({
  type: z.literal('agent.cue'),
  event_id: eventId,
  cue: z.enum(CUES),
  intensity: z.number().min(0).max(1).optional(),
  at_seconds: atSeconds,
});
export const CameraCommand = z.object({
  type: z.literal('stage.camera'),
  event_id: eventId,
  camera: z.enum(CAMERA_CHOICES),
  hold: z.boolean().optional(),
  at_seconds: atSeconds,
});
export const BackdropCommand = z.object({
  type: z.literal('stage.backdrop'),
  event_id: eventId,
  backdrop: z.string().min(1).max(64).nullable(),
  at_seconds: atSeconds,
});
export const StageGetCommand = z.object({ type: z.literal('stage.get'), event_id: eventId });
export const ConfigureCommand = z.object({ type: z.literal('session.configure'), event_id: eventId, sample_rate: z.number().int() });
export const KeepAliveCommand = z.object({ type: z.literal('session.keep_alive'), event_id: eventId });

export const RenderCommand = z.discriminatedUnion('type', [
  SpeakCommand,
  SpeakEndCommand,
  SpeakTextCommand,
  InterruptCommand,
  StartListeningCommand,
  StopListeningCommand,
  CueCommand,
  CameraCommand,
  BackdropCommand,
  StageGetCommand,
  ConfigureCommand,
  KeepAliveCommand,
]);
export type RenderCommand = z.infer<typeof RenderCommand>;

/** Conversation mode only (contract.md, Conversations): a visitor turn, exactly as if typed in the player. */
export const MAX_VISITOR_MESSAGE = 2000;
export const VisitorMessageCommand = z.object({
  type: z.literal('visitor.message'),
  event_id: eventId,
  text: z.string().trim().min(1).max(MAX_VISITOR_MESSAGE),
});

/** Commands accepted by POST /v1/sessions/{id}/commands (contract.md): no audio, no socket settings. */
export const HttpCommand = z
  .discriminatedUnion('type', [
    SpeakTextCommand,
    InterruptCommand,
    CueCommand,
    StartListeningCommand,
    StopListeningCommand,
    CameraCommand,
    BackdropCommand,
    VisitorMessageCommand,
  ])
  .meta({ id: 'SessionCommand' });
export type HttpCommand = z.infer<typeof HttpCommand>;
/** The commands the real-time path itself carries out (visitor.message goes to the conversation). */
export type RealtimeHttpCommand = Exclude<HttpCommand, { type: 'visitor.message' }>;

export type AvatarState = 'idle' | 'listening' | 'talking';
export type ErrorType = 'invalid_request_error' | 'queue_full' | 'tts_error' | 'stage_error';

export const CLOSE_BAD_SAMPLE_RATE = 4000;
export const CLOSE_SESSION_ENDED = 4001;
export const CLOSE_REPLACED = 4002;
export const CLOSE_BAD_TOKEN = 4003;
/** The caller kept sending past the message rate limit after being told (an `error` event). */
export const CLOSE_RATE_LIMITED = 4008;
/** The server failed while handling this socket's message; the session itself stays. */
export const CLOSE_INTERNAL_ERROR = 1011;
/** The node is shutting down; the session is not ended by it: reconnect (WebSocket's "service restart"). */
export const CLOSE_SERVER_RESTART = 1012;

/** Events sent to the caller; every one has a server `event_id`. */
export type RenderEvent = { type: string; event_id?: string; [field: string]: unknown };
