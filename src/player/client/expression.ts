/**
 * Facial expressions from `expression` messages: each name maps to a set of ARKit morphs; it blends
 * in from its start time, holds, and blends out at the end of its duration (or when replaced).
 */
export const EXPRESSIONS: Record<string, Record<string, number>> = {
  neutral: {},
  smile: {
    mouthSmileLeft: 0.7,
    mouthSmileRight: 0.7,
    cheekSquintLeft: 0.45,
    cheekSquintRight: 0.45,
    eyeSquintLeft: 0.25,
    eyeSquintRight: 0.25,
    mouthDimpleLeft: 0.2,
    mouthDimpleRight: 0.2,
    browInnerUp: 0.08,
  },
  happy: {
    mouthSmileLeft: 0.85,
    mouthSmileRight: 0.85,
    cheekSquintLeft: 0.55,
    cheekSquintRight: 0.55,
    eyeSquintLeft: 0.35,
    eyeSquintRight: 0.35,
    browOuterUpLeft: 0.2,
    browOuterUpRight: 0.2,
  },
  sad: {
    browInnerUp: 0.75,
    browDownLeft: 0.15,
    browDownRight: 0.15,
    mouthFrownLeft: 0.6,
    mouthFrownRight: 0.6,
    mouthPressLeft: 0.2,
    mouthPressRight: 0.2,
    eyeSquintLeft: 0.1,
    eyeSquintRight: 0.1,
    mouthShrugLower: 0.25,
  },
  surprised: { browInnerUp: 0.8, browOuterUpLeft: 0.8, browOuterUpRight: 0.8, eyeWideLeft: 0.7, eyeWideRight: 0.7, jawOpen: 0.14, mouthFunnel: 0.1 },
  angry: {
    browDownLeft: 0.8,
    browDownRight: 0.8,
    noseSneerLeft: 0.4,
    noseSneerRight: 0.4,
    mouthPressLeft: 0.4,
    mouthPressRight: 0.4,
    eyeSquintLeft: 0.4,
    eyeSquintRight: 0.4,
    mouthFrownLeft: 0.2,
    mouthFrownRight: 0.2,
  },
  thinking: { browInnerUp: 0.3, browDownLeft: 0.35, mouthPressLeft: 0.35, mouthRollLower: 0.15, eyeSquintLeft: 0.2, mouthLeft: 0.15 },
  concerned: { browInnerUp: 0.55, browDownLeft: 0.2, browDownRight: 0.2, mouthPressLeft: 0.25, mouthPressRight: 0.25 },
  curious: { browOuterUpLeft: 0.45, browInnerUp: 0.25, eyeWideLeft: 0.15, eyeWideRight: 0.15, mouthSmileLeft: 0.15, mouthSmileRight: 0.15 },
};
const ALIASES: Record<string, string> = {
  joy: 'happy',
  surprise: 'surprised',
  anger: 'angry',
  think: 'thinking',
  sadness: 'sad',
  smiling: 'smile',
  laugh: 'happy',
};

interface Active {
  name: string;
  shape: Record<string, number>;
  start: number;
  end: number;
  intensity: number;
  fadeOut: number;
}

const FADE_IN = 0.35;
const FADE_OUT = 0.6;
const ease = (x: number) => (x <= 0 ? 0 : x >= 1 ? 1 : 0.5 - 0.5 * Math.cos(Math.PI * x));

export class Expressions {
  private list: Active[] = [];
  current = 'neutral';

  /** Starts `name` at session time t (replacing whatever expression is showing from then on). */
  start(t: number, name: string, intensity: number, duration?: number): void {
    const key = EXPRESSIONS[name] ? name : (ALIASES[name] ?? 'neutral');
    for (const a of this.list) if (a.end > t) (a.end = t), (a.fadeOut = FADE_OUT);
    const shape = EXPRESSIONS[key];
    const end = duration && duration > 0 ? t + duration : Infinity;
    if (key !== 'neutral') this.list.push({ name: key, shape, start: t, end, intensity: Math.max(0, Math.min(1, intensity ?? 1)), fadeOut: FADE_OUT });
  }

  /** Writes expression morphs for session time s. */
  sample(s: number, out: Map<string, number>): void {
    out.clear();
    this.list = this.list.filter((a) => s < a.end + a.fadeOut);
    let top = 'neutral';
    let topW = 0;
    for (const a of this.list) {
      const w = a.intensity * ease((s - a.start) / FADE_IN) * (1 - ease((s - a.end) / a.fadeOut));
      if (w <= 0) continue;
      if (w > topW) (topW = w), (top = a.name);
      for (const [k, v] of Object.entries(a.shape)) out.set(k, (out.get(k) ?? 0) + v * w);
    }
    this.current = topW > 0.2 ? top : 'neutral';
  }

  clear(): void {
    this.list = [];
  }
}
