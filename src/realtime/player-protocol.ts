/**
 * The player channel's vocabulary (docs/player-protocol.md): every JSON message the server sends
 * the page, shared by the server (realtime/player-out.ts sends only these) and the page
 * (player/client reads them), so the two cannot drift. Audio frames are binary
 * (realtime/frame-codec.ts), each with its lip-sync track packed in.
 */
import type { AvatarState } from './protocol.js';
import type { FaceLook } from '../faces/builtin.js';

export type { AvatarState };

export type CameraShot = 'far' | 'mid' | 'close';
export type CameraName = CameraShot | 'auto';
/** What the page shows: the render states, and `thinking` (conversation mode, page only). */
export type PlayerState = AvatarState | 'thinking';

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
  /** Built-in faces' look (skin, hair…); uploaded faces carry an empty one. */
  look?: FaceLook | Record<string, never>;
}

export interface Studio {
  backdrop: BackdropRecord | null;
  cameras: CameraShot[];
  /** The current shot ('auto' accepted too). */
  camera?: CameraName;
  camera_mode?: string;
  /** Auto mode paused on the current shot. */
  hold?: boolean;
  face_light: number;
}

export interface HelloMessage {
  type: 'hello';
  session: { session_id: string; mode: string; status: string; max_session_seconds: number | null };
  /** null: the session's face is not in the catalog any more (deleted since). */
  face: FaceRecord | null;
  studio: Studio;
  sample_rate: number;
  state: PlayerState;
  now: number;
  /** Re-sent to a page that fell behind (docs/player-protocol.md "Slow connections"). */
  resync?: true;
  skipped_frames?: number;
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

export interface ExpressionMessage {
  type: 'expression';
  t: number;
  name: string;
  intensity: number;
  duration?: number;
}
export interface CameraMessage {
  type: 'camera';
  t: number;
  camera: CameraName;
  hold?: boolean;
}
export interface BackdropMessage {
  type: 'backdrop';
  t: number;
  backdrop: BackdropRecord | null;
}
export interface StateMessage {
  type: 'state';
  t: number;
  state: PlayerState;
}
export interface UtteranceEndMessage {
  type: 'utterance_end';
  t: number;
  utterance: string | number;
}
export interface InterruptMessage {
  type: 'interrupt';
  t: number;
}
/**
 * The agent's voice holds (conversation mode: the visitor may be speaking over it): the page stops
 * its audio and closes the mouth from `t` (or what it hears now, if sooner), keeping what it had
 * not played yet for `resume`.
 */
export interface PauseMessage {
  type: 'pause';
  t: number;
}
/**
 * The voice goes on where it held: what the page kept at `pause` plays `shift` seconds later than
 * it was timed, then the audio that follows (timed after the pause already).
 */
export interface ResumeMessage {
  type: 'resume';
  t: number;
  shift: number;
}
export interface EndedMessage {
  type: 'ended';
  reason?: string;
}
/** What the agent is saying, shown as a caption from `t` (conversation mode). */
export interface CaptionMessage {
  type: 'caption';
  t: number;
  utterance: string | number;
  text: string;
}
/** What the recogniser heard the visitor say so far (`final`: the turn is complete). */
export interface VisitorTranscriptMessage {
  type: 'visitor_transcript';
  text: string;
  final: boolean;
}
/** The server refused something the page sent (see docs/player-protocol.md). */
export interface ErrorMessage {
  type: 'error';
  code: string;
  message: string;
}

/** Every JSON message the server sends the page. */
export type PlayerMessage =
  | HelloMessage
  | TrackMessage
  | ExpressionMessage
  | CameraMessage
  | BackdropMessage
  | StateMessage
  | UtteranceEndMessage
  | InterruptMessage
  | PauseMessage
  | ResumeMessage
  | EndedMessage
  | CaptionMessage
  | VisitorTranscriptMessage
  | ErrorMessage;
