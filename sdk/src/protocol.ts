/**
 * The render socket's messages as types, generated from the server's /asyncapi.json (itself made
 * from the zod schemas the socket validates with), and the protocol's constants.
 */
import type { components } from './generated/render-protocol.js';
import { COMMAND_TYPES, EVENT_TYPES } from './generated/render-protocol.js';

export { COMMAND_TYPES, EVENT_TYPES };
type Messages = components['schemas'];

/** The type of every event the socket sends. */
export type RenderEventType = (typeof EVENT_TYPES)[number];
/** The event of a given type, e.g. `RenderEventOf<'agent.speak_ended'>`. */
export type RenderEventOf<T extends RenderEventType> = Messages[T];
/** Any event the socket sends (a union discriminated by `type`). */
export type RenderEvent = { [T in RenderEventType]: Messages[T] }[RenderEventType];
/** The type of every JSON command the socket accepts. */
export type RenderCommandType = (typeof COMMAND_TYPES)[number];
/** Any JSON command (a union discriminated by `type`). */
export type RenderCommand = { [T in RenderCommandType]: Messages[T] }[RenderCommandType];

/** An expression for `cue()`. */
export type Cue = NonNullable<Messages['agent.cue']['cue']>;
/** A shot for `camera()`. */
export type CameraChoice = Messages['stage.camera']['camera'];
/** The stage as stage.updated reports it. */
export type Stage = Messages['stage.updated']['stage'];
/** The avatar's state: idle, listening or talking. */
export type AvatarState = Messages['agent.state_updated']['new_state'];

/** Audio rates the socket accepts (Hz). */
export const SAMPLE_RATES = [16000, 22050, 24000, 44100, 48000] as const;
export type SampleRate = (typeof SAMPLE_RATES)[number];
export const DEFAULT_SAMPLE_RATE = 24000;
/** At most this many bytes of audio per frame. */
export const MAX_FRAME_BYTES = 1024 * 1024;

/** The socket's close codes (docs/render-protocol, "Close codes"). */
export const CloseCodes = {
  /** Bad sample_rate. */
  BAD_SAMPLE_RATE: 4000,
  /** The session ended (stopped or ended on its own). */
  SESSION_ENDED: 4001,
  /** Replaced by a newer connection to the same session. */
  REPLACED: 4002,
  /** Bad or expired token, or no such session. */
  BAD_TOKEN: 4003,
  /** Too many messages. */
  RATE_LIMITED: 4008,
  /** The server failed handling a message; the session stays: reconnect. */
  INTERNAL_ERROR: 1011,
  /** The server node is shutting down; the session stays: reconnect. */
  SERVER_RESTART: 1012,
} as const;

/**
 * Whether a close code means "the session is still there, connect again": the server's 1011 and
 * 1012, and a connection lost without a close frame (1006) or a going-away proxy (1001). The 4xxx
 * codes are final: reconnecting after 4002 would fight the newer connection.
 */
export function isReconnectable(code: number): boolean {
  return code === CloseCodes.INTERNAL_ERROR || code === CloseCodes.SERVER_RESTART || code === 1006 || code === 1001;
}
