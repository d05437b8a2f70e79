/**
 * Lip sync: samples the server's animation track (visemes + mouth openness, session clock) at the
 * session time being heard, and turns it into speech-layer morph weights. Visemes are keyframes
 * that peak at their time and cross-fade into the next (coarticulation); long gaps fade to rest.
 * `interrupt` drops the future and closes the mouth at once; `pause` does too, keeping the future
 * for `resume`, which plays it later by the pause's length.
 */
import type { TrackMessage } from './protocol.js';

interface Key {
  t: number;
  name: string;
  w: number;
}
interface Track {
  utterance: string | number;
  t: number;
  end: number;
  keys: Key[];
  t0: number;
  step: number;
  values: number[];
}

/** Longest gap two visemes still cross-fade over; longer gaps rest the mouth between them. */
const CROSSFADE_MAX = 0.25;
const RAMP = 0.09;
/** jawOpen at full openness. */
const JAW = 0.62;
/** Viseme weights are scaled so shapes and jaw do not pile up. */
const VISEME_GAIN = 0.85;

/** ARKit approximations of visemes, for faces without viseme_* morphs. */
const ARKIT: Record<string, Record<string, number>> = {
  viseme_PP: { mouthClose: 0.6, mouthPressLeft: 0.5, mouthPressRight: 0.5 },
  viseme_FF: { mouthRollLower: 0.6, mouthUpperUpLeft: 0.25, mouthUpperUpRight: 0.25 },
  viseme_TH: { tongueOut: 0.3, mouthStretchLeft: 0.15, mouthStretchRight: 0.15 },
  viseme_DD: { mouthStretchLeft: 0.25, mouthStretchRight: 0.25 },
  viseme_kk: { mouthStretchLeft: 0.3, mouthStretchRight: 0.3 },
  viseme_CH: { mouthFunnel: 0.45, mouthShrugUpper: 0.2 },
  viseme_SS: { mouthStretchLeft: 0.4, mouthStretchRight: 0.4, mouthSmileLeft: 0.15, mouthSmileRight: 0.15 },
  viseme_nn: { mouthStretchLeft: 0.2, mouthStretchRight: 0.2 },
  viseme_RR: { mouthFunnel: 0.35, mouthPucker: 0.2 },
  viseme_aa: { mouthLowerDownLeft: 0.3, mouthLowerDownRight: 0.3 },
  viseme_E: { mouthStretchLeft: 0.45, mouthStretchRight: 0.45, mouthSmileLeft: 0.2, mouthSmileRight: 0.2 },
  viseme_I: { mouthStretchLeft: 0.5, mouthStretchRight: 0.5, mouthSmileLeft: 0.25, mouthSmileRight: 0.25 },
  viseme_O: { mouthFunnel: 0.6, mouthPucker: 0.25 },
  viseme_U: { mouthPucker: 0.8, mouthFunnel: 0.3 },
};

const norm = (name: string) => (name.startsWith('viseme_') ? name : `viseme_${name}`);
const smooth = (x: number) => (x <= 0 ? 0 : x >= 1 ? 1 : x * x * (3 - 2 * x));

export class LipSync {
  private tracks: Track[] = [];
  openness = 0;
  /** Whether the face has viseme morphs (else ARKit approximations). */
  useVisemes = true;

  add(msg: TrackMessage): void {
    const keys = (msg.visemes ?? []).map(([t, name, w]) => ({ t, name: norm(name), w: w ?? 1 })).sort((a, b) => a.t - b.t);
    const mouth = msg.mouth ?? { t0: msg.t, step: 0.01, values: [] };
    const track: Track = {
      utterance: msg.utterance,
      t: msg.t,
      end: msg.t + (msg.duration ?? 0),
      keys,
      t0: mouth.t0,
      step: mouth.step || 0.01,
      values: mouth.values ?? [],
    };
    this.tracks.push(track);
    this.tracks.sort((a, b) => a.t - b.t);
    // Keep only the recent past.
    if (this.tracks.length > 64) this.tracks.splice(0, this.tracks.length - 64);
  }

  /** Tracks (what is left of them) taken out at `pause`. */
  private held: Track[] = [];

  /** Closes the mouth from `at` on like `interrupt`, keeping what followed for `resume`. */
  pause(at: number): void {
    this.held = this.tracks.filter((tr) => tr.end > at).map((tr) => ({ ...tr, t: Math.max(tr.t, at) }));
    this.cut(at);
  }

  /** What `pause` kept plays `shift` seconds later. */
  resume(shift: number): void {
    for (const tr of this.held) {
      this.tracks.push({
        ...tr,
        t: tr.t + shift,
        end: tr.end + shift,
        t0: tr.t0 + shift,
        keys: tr.keys.map((k) => ({ ...k, t: k.t + shift })),
      });
    }
    this.held = [];
    this.tracks.sort((a, b) => a.t - b.t);
  }

  /** Drop every track from `at` on; truncate the one playing. */
  interrupt(at: number): void {
    this.held = [];
    this.cut(at);
  }

  private cut(at: number): void {
    this.tracks = this.tracks.filter((tr) => tr.t < at);
    for (const tr of this.tracks) if (tr.end > at) tr.end = at;
  }

  clear(): void {
    this.held = [];
    this.tracks = [];
  }

  /** Drops tracks that ended well before `now`. */
  prune(now: number): void {
    this.tracks = this.tracks.filter((tr) => tr.end > now - 2);
  }

  /** Whether a track covers session time s. */
  speaking(s: number): boolean {
    return this.tracks.some((tr) => s >= tr.t && s < tr.end);
  }

  /** Mouth openness 0..1 at session time s (the loudness envelope), 0 outside every track. */
  opennessAt(s: number): number {
    let v = 0;
    for (const tr of this.tracks) {
      if (s < tr.t - 0.05 || s >= tr.end || !tr.values.length) continue;
      // Each value covers one step from t0: sample at the windows' centres.
      const x = (s - tr.t0) / tr.step - 0.5;
      const i = Math.floor(x);
      if (i < -1 || i >= tr.values.length) continue;
      const a = i < 0 ? 0 : tr.values[i];
      const b = i + 1 < tr.values.length ? tr.values[i + 1] : 0;
      v = Math.max(v, a + (b - a) * (x - i));
    }
    return Math.min(1, Math.max(0, v));
  }

  /** Viseme weights at s (name → weight). */
  private visemesAt(s: number, out: Map<string, number>): void {
    for (const tr of this.tracks) {
      if (s < tr.t - RAMP || s >= tr.end || !tr.keys.length) continue;
      const k = tr.keys;
      // First key at or after s.
      let j = 0;
      while (j < k.length && k[j].t <= s) j++;
      const prev = j > 0 ? k[j - 1] : null;
      const next = j < k.length ? k[j] : null;
      const add = (key: Key, w: number) => {
        if (key.name === 'viseme_sil' || w <= 0) return;
        out.set(key.name, (out.get(key.name) ?? 0) + key.w * w);
      };
      if (prev && next && next.t - prev.t <= CROSSFADE_MAX) {
        const u = smooth((s - prev.t) / (next.t - prev.t));
        add(prev, 1 - u);
        add(next, u);
      } else {
        if (prev) add(prev, 1 - smooth((s - prev.t) / RAMP));
        if (next) add(next, smooth(1 - (next.t - s) / RAMP));
      }
      // Release at the end of the track.
      const tail = smooth((tr.end - s) / RAMP);
      if (tail < 1) for (const [n, w] of out) out.set(n, w * tail);
    }
  }

  /** Writes the speech layer for session time s; returns how much speech owns the mouth (0..1). */
  sample(s: number, layer: Map<string, number>): number {
    layer.clear();
    const open = this.opennessAt(s);
    this.openness = open;
    const vis = new Map<string, number>();
    this.visemesAt(s, vis);
    let total = 0;
    for (const [name, w] of vis) {
      const weight = Math.min(1, w * VISEME_GAIN);
      total += weight;
      if (this.useVisemes) layer.set(name, weight);
      else for (const [m, v] of Object.entries(ARKIT[name] ?? {})) layer.set(m, Math.min(1, (layer.get(m) ?? 0) + v * weight));
    }
    // The jaw follows the loudness envelope; closed lips (PP/FF) pull it shut.
    const closers = (vis.get('viseme_PP') ?? 0) + 0.6 * (vis.get('viseme_FF') ?? 0);
    layer.set('jawOpen', JAW * open * (1 - 0.7 * Math.min(1, closers)));
    if (!this.useVisemes) layer.set('mouthLowerDownLeft', 0.25 * open), layer.set('mouthLowerDownRight', 0.25 * open);
    const active = this.speaking(s) ? 1 : Math.min(1, total + open * 2);
    return active;
  }
}
