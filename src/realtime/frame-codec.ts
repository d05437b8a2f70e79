/**
 * The player channel's binary audio frame (docs/player-protocol.md, "Binary frames"): a header,
 * the frame's lip-sync track, then the samples, so one message (one socket write) carries both.
 * The server encodes it (realtime/player-out.ts); the page and the tests decode it with the same
 * code, so the two ends cannot drift apart. Browser-safe: no Node APIs.
 *
 * The track is binary (flag bit 30): encoding it costs a few hundred nanoseconds where
 * JSON.stringify cost microseconds, on the path every frame of every live session takes.
 * Frames whose track is JSON (bit 30 clear) are still decoded.
 */
import { VISEMES } from './lipsync/visemes.js';

/** Bit 31 of a frame's first word: a track is packed in front of the samples. */
export const TRACK_FLAG = 0x80000000;
/** Bit 30: the packed track is binary (else JSON). */
export const BINARY_TRACK_FLAG = 0x40000000;
/** Bytes before the track: uint32 word, float64 t, uint32 track length. */
export const FRAME_HEADER_BYTES = 16;
/** Lip-sync values per second in a track (one per 10 ms). */
export const TRACK_STEP_SECONDS = 0.01;

/** A frame's track, as the page uses it. */
export interface FrameTrack {
  type: 'track';
  utterance: string;
  t: number;
  duration: number;
  /** Viseme changes: [time, viseme name, weight 0..1]. */
  visemes: Array<[number, string, number]>;
  /** Mouth openness 0..1 every `step` seconds from `t0`. */
  mouth: { t0: number; step: number; values: number[] };
}

export interface DecodedFrame {
  seq: number;
  t: number;
  track?: FrameTrack;
  samples: Int16Array;
}

/**
 * What a frame's track says, before encoding: the 10 ms grid from `t0`, the mouth openness per
 * step (0..255) and the viseme changes as [step index, viseme index, weight 0..255].
 */
export interface TrackContent {
  utterance: string;
  t0: number;
  duration: number;
  mouth: ArrayLike<number>;
  mouthCount: number;
  /** Flat triples: step, viseme, weight. */
  visemes: ArrayLike<number>;
  visemeCount: number;
}

// Binary track layout (little-endian), from the track's first byte:
// 0 u8 version (1) · 1 u8 mouth count · 2 u8 viseme count · 3 u8 unused · 4 f32 duration ·
// 8 f64 t0 · 16 u16 utterance bytes · 18 mouth (u8 each) · visemes (3 × u8 each) · utterance
// (UTF-8) · one pad byte if the length is odd (samples start 2-byte aligned).
const TRACK_FIXED_BYTES = 18;
const MAX_UTTERANCE_BYTES = 1024;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The utterance id's UTF-8 bytes (cached by the caller for the frames of one utterance). */
export function utteranceBytes(utterance: string): Uint8Array {
  const bytes = encoder.encode(utterance);
  return bytes.length > MAX_UTTERANCE_BYTES ? bytes.subarray(0, MAX_UTTERANCE_BYTES) : bytes;
}

/** Bytes of a binary track (even). */
export function trackLength(content: TrackContent, utterance: Uint8Array): number {
  const n = TRACK_FIXED_BYTES + content.mouthCount + 3 * content.visemeCount + utterance.length;
  return n + (n & 1);
}

/**
 * Writes a frame (header, binary track, samples) at `offset` of `bytes` / `view` (the same
 * memory). Answers the bytes written: FRAME_HEADER_BYTES + trackLength + 2 × samples.
 */
export function encodeFrame(
  view: DataView,
  bytes: Uint8Array,
  offset: number,
  seq: number,
  t: number,
  content: TrackContent,
  utterance: Uint8Array,
  samples: Int16Array,
  from: number,
  count: number,
): number {
  const trackBytes = trackLength(content, utterance);
  view.setUint32(offset, ((seq & 0x3fffffff) | TRACK_FLAG | BINARY_TRACK_FLAG) >>> 0, true);
  view.setFloat64(offset + 4, t, true);
  view.setUint32(offset + 12, trackBytes, true);
  let p = offset + FRAME_HEADER_BYTES;
  bytes[p] = 1;
  bytes[p + 1] = content.mouthCount;
  bytes[p + 2] = content.visemeCount;
  bytes[p + 3] = 0;
  view.setFloat32(p + 4, content.duration, true);
  view.setFloat64(p + 8, content.t0, true);
  view.setUint16(p + 16, utterance.length, true);
  p += TRACK_FIXED_BYTES;
  for (let i = 0; i < content.mouthCount; i++) bytes[p++] = content.mouth[i];
  for (let i = 0; i < content.visemeCount * 3; i++) bytes[p++] = content.visemes[i];
  bytes.set(utterance, p);
  p += utterance.length;
  if ((p - offset) & 1) bytes[p++] = 0x20;
  // The samples, little-endian (every platform Node and browsers run on is little-endian, and
  // the copy goes through bytes so `samples` may sit at any offset).
  bytes.set(new Uint8Array(samples.buffer, samples.byteOffset + from * 2, count * 2), p);
  return p + count * 2 - offset;
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;
const round2 = (x: number) => Math.round(x * 100) / 100;

function decodeBinaryTrack(view: DataView, bytes: Uint8Array, start: number, length: number, t: number): FrameTrack | undefined {
  if (length < TRACK_FIXED_BYTES || bytes[start] !== 1) return undefined;
  const mouthCount = bytes[start + 1];
  const visemeCount = bytes[start + 2];
  const duration = view.getFloat32(start + 4, true);
  const t0 = view.getFloat64(start + 8, true);
  const utteranceLength = view.getUint16(start + 16, true);
  let p = start + TRACK_FIXED_BYTES;
  if (p + mouthCount + 3 * visemeCount + utteranceLength > start + length) return undefined;
  const values: number[] = [];
  for (let i = 0; i < mouthCount; i++) values.push(round2(bytes[p++] / 255));
  const visemes: Array<[number, string, number]> = [];
  for (let i = 0; i < visemeCount; i++) {
    const step = bytes[p];
    const viseme = VISEMES[bytes[p + 1]] ?? 'sil';
    visemes.push([round3(t0 + step * TRACK_STEP_SECONDS), viseme, round2(bytes[p + 2] / 255)]);
    p += 3;
  }
  const utterance = decoder.decode(bytes.subarray(p, p + utteranceLength));
  return { type: 'track', utterance, t: round3(t), duration: round3(duration), visemes, mouth: { t0: round3(t0), step: TRACK_STEP_SECONDS, values } };
}

/** Decodes a binary player-channel frame (either kind of track); null if it is malformed. */
export function decodeFrame(data: ArrayBuffer | Uint8Array): DecodedFrame | null {
  const bytes = data instanceof Uint8Array ? data : new Uint8Array(data);
  if (bytes.byteLength < 12) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const word = view.getUint32(0, true);
  const t = view.getFloat64(4, true);
  let start = 12;
  let track: FrameTrack | undefined;
  if (word & TRACK_FLAG) {
    if (bytes.byteLength < FRAME_HEADER_BYTES) return null;
    const length = view.getUint32(12, true);
    start = FRAME_HEADER_BYTES + length;
    if (start > bytes.byteLength) return null;
    if (word & BINARY_TRACK_FLAG) track = decodeBinaryTrack(view, bytes, FRAME_HEADER_BYTES, length, t);
    else {
      try {
        track = JSON.parse(decoder.decode(bytes.subarray(FRAME_HEADER_BYTES, start)));
      } catch {
        track = undefined;
      }
    }
  }
  const count = (bytes.byteLength - start) >> 1;
  // Copied so the samples are 2-byte aligned whatever the source buffer.
  const samples = new Int16Array(count);
  new Uint8Array(samples.buffer).set(bytes.subarray(start, start + count * 2));
  return { seq: word & (word & BINARY_TRACK_FLAG ? 0x3fffffff : 0x7fffffff), t, track, samples };
}
