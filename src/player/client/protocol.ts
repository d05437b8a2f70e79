/**
 * Message shapes of the internal player channel (docs/player-protocol.md), as the page reads them.
 * Client-side copy of the contract: the page and the server ship together.
 */
import { decodeFrame } from '../../realtime/frame-codec.js';

export type CameraShot = 'far' | 'mid' | 'close';
export type CameraName = CameraShot | 'auto';
export type AvatarState = 'idle' | 'talking' | 'listening' | 'thinking';

export interface BackdropRecord {
  backdrop_id: string;
  name?: string;
  kind: 'gradient' | 'room' | 'bokeh';
  colors: { top: string; bottom: string; accent: string };
  blur: number;
}

export interface FaceRecord {
  avatar_id: string;
  gender?: 'f' | 'm';
  model_url: string;
  look?: Record<string, unknown>;
}

export interface Studio {
  backdrop: BackdropRecord | null;
  cameras: CameraShot[];
  /** The current shot ('auto' accepted too). */
  camera?: CameraName;
  camera_mode?: 'auto' | 'manual' | string;
  /** Auto mode paused on the current shot. */
  hold?: boolean;
  face_light: number;
}

export interface HelloMessage {
  type: 'hello';
  session: { session_id: string; mode: string; status: string; max_session_seconds?: number };
  face: FaceRecord;
  studio: Studio;
  sample_rate: number;
  state: AvatarState;
  now: number;
}

/** [t, viseme name, weight] */
export type VisemeKey = [number, string, number];

export interface TrackMessage {
  type: 'track';
  utterance: string | number;
  t: number;
  duration: number;
  visemes: VisemeKey[];
  mouth: { t0: number; step: number; values: number[] };
  words?: [number, number, string][];
}

export interface ExpressionMessage { type: 'expression'; t: number; name: string; intensity: number; duration?: number }
export interface CameraMessage { type: 'camera'; t: number; camera: CameraName; hold?: boolean }
export interface BackdropMessage { type: 'backdrop'; t: number; backdrop: BackdropRecord | null }
export interface StateMessage { type: 'state'; t: number; state: AvatarState }
export interface UtteranceEndMessage { type: 'utterance_end'; t: number; utterance: string | number }
export interface InterruptMessage { type: 'interrupt'; t: number }
export interface EndedMessage { type: 'ended'; reason?: string }
/** What the agent is saying, shown as a caption from `t` (conversation mode). */
export interface CaptionMessage { type: 'caption'; t: number; utterance: string | number; text: string }
/** What the recogniser heard the visitor say so far (`final`: the turn is complete). */
export interface VisitorTranscriptMessage { type: 'visitor_transcript'; text: string; final: boolean }
/** The server refused something the page sent (see docs/player-protocol.md). */
export interface ErrorMessage { type: 'error'; code: string; message: string }

export type ServerMessage =
  | HelloMessage | TrackMessage | ExpressionMessage | CameraMessage | BackdropMessage
  | StateMessage | UtteranceEndMessage | InterruptMessage | EndedMessage
  | CaptionMessage | VisitorTranscriptMessage | ErrorMessage;

/** A binary audio frame: 12-byte header (uint32 seq, float64 t, little-endian) then s16le mono. */
export interface AudioFrame { seq: number; t: number; samples: Int16Array; track?: ServerMessage }

/**
 * A binary frame: uint32 word (bit 31: a track is packed in; bit 30: binary, else JSON), float64 t,
 * then either the samples, or a uint32 track length, the track, and the samples
 * (src/realtime/frame-codec.ts, shared with the server).
 */
export function parseAudioFrame(buf: ArrayBuffer): AudioFrame | null {
  const frame = decodeFrame(buf);
  if (!frame) return null;
  return { seq: frame.seq, t: frame.t, samples: frame.samples, track: frame.track as ServerMessage | undefined };
}
