/**
 * The pitch at the end of what the visitor said: falling (a statement or question said to its end),
 * or level/rising (a speaker who means to go on: "and so my fellow Americans…").
 *
 * Pitch per 32 ms frame of the listener's 16 kHz audio by YIN (de Cheveigné & Kawahara 2002): the
 * cumulative-mean-normalised difference function over lags of 70–400 Hz, the first dip below 0.2.
 * About 140 k multiply-adds per voiced frame (the silent frames of a pause cost nothing); the listener
 * calls it only on voiced frames of a turn. `PitchTrack` keeps the last voiced frames' pitch (in
 * semitones) and, when the visitor pauses, judges the last voiced stretch against the turn's own
 * range: a falling end ends low in the speaker's range (2 semitones under the turn's median) and
 * fell by 2 semitones over its last ~250 ms; a rising end rose as much and ends above the median;
 * the rest is level (a plateau: the voice held, as a speaker does who means to go on).
 */

const SAMPLE_RATE = 16000;
const MIN_HZ = 70;
const MAX_HZ = 400;
const MIN_LAG = Math.floor(SAMPLE_RATE / MAX_HZ); // 40
const MAX_LAG = Math.ceil(SAMPLE_RATE / MIN_HZ); // 229
/** YIN's absolute threshold: a frame whose best dip is above it is unvoiced (noise, breath). */
const YIN_THRESHOLD = 0.2;
/** Frames quieter than this (RMS of 16-bit samples) are not judged. */
const MIN_RMS = 200;

/** Fundamental frequency (Hz) of a frame of 16 kHz audio, or 0 when it is not voiced. */
export function pitchHz(frame: Int16Array | Float32Array, scale = frame instanceof Int16Array ? 1 : 32768): number {
  const n = frame.length - MAX_LAG;
  if (n < 64) return 0;
  let energy = 0;
  for (let i = 0; i < frame.length; i++) energy += (frame[i] * scale) ** 2;
  if (Math.sqrt(energy / frame.length) < MIN_RMS) return 0;
  let running = 0;
  let best = -1;
  let previous = Number.POSITIVE_INFINITY;
  for (let lag = 1; lag <= MAX_LAG; lag++) {
    let d = 0;
    for (let i = 0; i < n; i++) {
      const x = frame[i] - frame[i + lag];
      d += x * x;
    }
    running += d;
    const normalised = running > 0 ? (d * lag) / running : 1;
    if (lag < MIN_LAG) {
      previous = normalised;
      continue;
    }
    if (best < 0 && normalised < YIN_THRESHOLD) best = lag;
    // Follow the dip down to its bottom, then stop.
    if (best >= 0) {
      if (normalised > previous) {
        best = lag - 1;
        break;
      }
      best = lag;
    }
    previous = normalised;
  }
  if (best < MIN_LAG || best >= MAX_LAG) return 0;
  return SAMPLE_RATE / best;
}

export type PitchEnd = 'falling' | 'level' | 'rising' | 'unknown';

export interface PitchEndOptions {
  /** Voiced frames needed in the final stretch to judge it. */
  minFrames: number;
  /** Final stretch: the last voiced frames (32 ms each) before the pause. */
  finalFrames: number;
  /** Semitones under the turn's median pitch at which the end counts as low (one cue of a final fall). */
  lowSemitones: number;
  /** Semitones the final stretch must fall (the other cue), or rise, over its length. */
  slopeSemitones: number;
}

export const PITCH_END_DEFAULTS: PitchEndOptions = { minFrames: 4, finalFrames: 8, lowSemitones: 2, slopeSemitones: 2 };

/** Semitones from the recent pitch past which a frame's pitch is an octave slip, not the voice moving. */
const OCTAVE_SLIP = 7;
const KEPT = 256; // ~8 s of voiced frames: the turn's range

const semitones = (hz: number) => 12 * Math.log2(hz / 100);

/** One turn's pitch, frame by frame; `end()` judges the last voiced stretch. */
export class PitchTrack {
  private readonly values = new Float32Array(KEPT);
  private count = 0;

  constructor(private readonly options: PitchEndOptions = PITCH_END_DEFAULTS) {}

  /** A voiced frame of the turn (by the VAD); unpitched frames (0 Hz) are skipped. */
  push(frame: Int16Array): number {
    const hz = pitchHz(frame);
    if (hz > 0) {
      let st = semitones(hz);
      // An octave slip (YIN's classic error, on a weak fundamental): folded back next to the recent
      // pitch, or dropped when it is no voice's next step.
      if (this.count >= 3) {
        const recent = median([1, 2, 3].map((k) => this.values[(this.count - k) % KEPT]));
        if (Math.abs(st - recent) > OCTAVE_SLIP) st += st > recent ? -12 : 12;
        if (Math.abs(st - recent) > OCTAVE_SLIP) return hz;
      }
      this.values[this.count % KEPT] = st;
      this.count++;
    }
    return hz;
  }

  reset(): void {
    this.count = 0;
  }

  /** How the last voiced stretch ends, judged against the turn so far. */
  end(): PitchEnd {
    const { minFrames, finalFrames, lowSemitones, slopeSemitones } = this.options;
    const kept = Math.min(this.count, KEPT);
    if (kept < minFrames) return 'unknown';
    const all: number[] = [];
    for (let i = this.count - kept; i < this.count; i++) all.push(this.values[i % KEPT]);
    const last = all.slice(-finalFrames);
    // Median of three against octave slips: the final value, and the stretch's start.
    const final = median(last.slice(-3));
    const start = median(last.slice(0, 3));
    const turnMedian = median(all);
    const slope = final - start;
    if (slope >= slopeSemitones && final > turnMedian) return 'rising';
    // Both cues of a final fall: the voice ends low in the speaker's range and came down to it.
    if (final <= turnMedian - lowSemitones && slope <= -slopeSemitones) return 'falling';
    return 'level';
  }

  /** Pitched frames seen. */
  get frames(): number {
    return this.count;
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}
