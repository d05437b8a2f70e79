/**
 * The player channel as the page reads it: the message vocabulary is the server's own
 * (realtime/player-protocol.ts); binary frames are decoded by the codec the server encodes with.
 */
import { decodeFrame } from '../../realtime/frame-codec.js';
import type { PlayerMessage } from '../../realtime/player-protocol.js';

export type {
  AvatarState,
  PlayerState,
  BackdropRecord,
  FaceRecord,
  Studio,
  CameraShot,
  CameraName,
  HelloMessage,
  TrackMessage,
  VisemeKey,
  PlayerMessage,
} from '../../realtime/player-protocol.js';

/** A binary audio frame: 12-byte header (uint32 seq, float64 t, little-endian) then s16le mono. */
export interface AudioFrame {
  seq: number;
  t: number;
  samples: Int16Array;
  track?: PlayerMessage;
}

/**
 * A binary frame: uint32 word (bit 31: a track is packed in; bit 30: binary, else JSON), float64 t,
 * then either the samples, or a uint32 track length, the track, and the samples
 * (src/realtime/frame-codec.ts, shared with the server).
 */
export function parseAudioFrame(buf: ArrayBuffer): AudioFrame | null {
  const frame = decodeFrame(buf);
  if (!frame) return null;
  return { seq: frame.seq, t: frame.t, samples: frame.samples, track: frame.track as PlayerMessage | undefined };
}
