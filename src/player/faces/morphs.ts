/**
 * Shape keys. Every ARKit blendshape and Oculus viseme is a "recipe": a jaw pose (rotation about
 * the jaw hinge, forward/sideways slide) plus weighted sums of a few local deformation fields
 * (lip corners, lips, lids, brows, cheeks, nose). Fields are evaluated on the un-subdivided head;
 * subdivision is linear, so the deltas are subdivided with the same operator as the rest pose.
 * Teeth and tongue get the rigid jaw part of the same recipe, so they always move together.
 */
import type { HeadMesh } from './mesh.js';
import { Part } from './mesh.js';
import * as L from './landmarks.js';
import { add, clamp, falloff, len, norm, rotX, scale, smoothstep, sub, type V3 } from './vec.js';

export const VISEMES = ['viseme_sil', 'viseme_PP', 'viseme_FF', 'viseme_TH', 'viseme_DD', 'viseme_kk', 'viseme_CH', 'viseme_SS', 'viseme_nn', 'viseme_RR', 'viseme_aa', 'viseme_E', 'viseme_I', 'viseme_O', 'viseme_U'] as const;

export const ARKIT = [
  'browDownLeft', 'browDownRight', 'browInnerUp', 'browOuterUpLeft', 'browOuterUpRight',
  'cheekPuff', 'cheekSquintLeft', 'cheekSquintRight',
  'eyeBlinkLeft', 'eyeBlinkRight', 'eyeLookDownLeft', 'eyeLookDownRight', 'eyeLookInLeft', 'eyeLookInRight',
  'eyeLookOutLeft', 'eyeLookOutRight', 'eyeLookUpLeft', 'eyeLookUpRight', 'eyeSquintLeft', 'eyeSquintRight',
  'eyeWideLeft', 'eyeWideRight',
  'jawForward', 'jawLeft', 'jawOpen', 'jawRight',
  'mouthClose', 'mouthDimpleLeft', 'mouthDimpleRight', 'mouthFrownLeft', 'mouthFrownRight', 'mouthFunnel',
  'mouthLeft', 'mouthLowerDownLeft', 'mouthLowerDownRight', 'mouthPressLeft', 'mouthPressRight', 'mouthPucker',
  'mouthRight', 'mouthRollLower', 'mouthRollUpper', 'mouthShrugLower', 'mouthShrugUpper',
  'mouthSmileLeft', 'mouthSmileRight', 'mouthStretchLeft', 'mouthStretchRight',
  'mouthUpperUpLeft', 'mouthUpperUpRight', 'noseSneerLeft', 'noseSneerRight', 'tongueOut',
] as const;

export const MORPH_NAMES: string[] = [...VISEMES, ...ARKIT];

/** Full jawOpen rotation, radians (~16°: about 2.5 cm between the incisors). */
export const JAW_OPEN = 0.28;

export interface Recipe {
  /** jawOpen amount 0..1 (times JAW_OPEN radians). */
  jaw?: number;
  jawFwd?: number;
  jawSide?: number;
  fields?: [Field, number][];
  /** Tongue: forward/up slide of the tip (cm). */
  tongue?: { fwd: number; up: number };
}

type Side = 1 | -1; // +1 = subject's left (+x)
type Field =
  | 'smileL' | 'smileR' | 'frownL' | 'frownR' | 'stretchL' | 'stretchR' | 'dimpleL' | 'dimpleR'
  | 'mouthShiftL' | 'mouthShiftR' | 'pucker' | 'funnel' | 'rollLower' | 'rollUpper' | 'shrugLower' | 'shrugUpper'
  | 'close' | 'pressL' | 'pressR' | 'lowerDownL' | 'lowerDownR' | 'upperUpL' | 'upperUpR' | 'puff'
  | 'cheekSqL' | 'cheekSqR' | 'sneerL' | 'sneerR' | 'browInner' | 'browDownL' | 'browDownR' | 'browOuterL' | 'browOuterR'
  | 'blinkL' | 'blinkR' | 'squintL' | 'squintR' | 'wideL' | 'wideR' | 'lidUpL' | 'lidUpR' | 'lidDownL' | 'lidDownR'
  | 'lidInL' | 'lidInR' | 'lidOutL' | 'lidOutR' | 'lipsPart';

export const RECIPES: Record<string, Recipe> = {
  viseme_sil: {},
  viseme_PP: { fields: [['close', 0.2], ['pressL', 0.7], ['pressR', 0.7], ['rollLower', 0.25], ['rollUpper', 0.25]] },
  viseme_FF: { jaw: 0.12, fields: [['rollLower', 0.9], ['upperUpL', 0.35], ['upperUpR', 0.35], ['shrugLower', 0.3]] },
  viseme_TH: { jaw: 0.22, fields: [['lipsPart', 0.6], ['stretchL', 0.15], ['stretchR', 0.15]], tongue: { fwd: 1.1, up: 0.35 } },
  viseme_DD: { jaw: 0.25, fields: [['lipsPart', 0.5], ['stretchL', 0.25], ['stretchR', 0.25]], tongue: { fwd: 0.2, up: 0.6 } },
  viseme_kk: { jaw: 0.32, fields: [['lipsPart', 0.5], ['stretchL', 0.3], ['stretchR', 0.3]], tongue: { fwd: -0.3, up: 0.5 } },
  viseme_CH: { jaw: 0.15, fields: [['funnel', 0.6], ['pucker', 0.2], ['lipsPart', 0.4], ['upperUpL', 0.3], ['upperUpR', 0.3]] },
  viseme_SS: { jaw: 0.08, fields: [['lipsPart', 0.6], ['stretchL', 0.45], ['stretchR', 0.45], ['smileL', 0.2], ['smileR', 0.2], ['upperUpL', 0.25], ['upperUpR', 0.25]] },
  viseme_nn: { jaw: 0.18, fields: [['lipsPart', 0.4], ['stretchL', 0.15], ['stretchR', 0.15]], tongue: { fwd: 0.2, up: 0.6 } },
  viseme_RR: { jaw: 0.2, fields: [['funnel', 0.45], ['pucker', 0.35], ['lipsPart', 0.3]] },
  viseme_aa: { jaw: 0.72, fields: [['lipsPart', 0.6], ['stretchL', 0.15], ['stretchR', 0.15], ['upperUpL', 0.2], ['upperUpR', 0.2]] },
  viseme_E: { jaw: 0.4, fields: [['lipsPart', 0.5], ['stretchL', 0.5], ['stretchR', 0.5], ['smileL', 0.2], ['smileR', 0.2], ['upperUpL', 0.2], ['upperUpR', 0.2]] },
  viseme_I: { jaw: 0.28, fields: [['lipsPart', 0.5], ['stretchL', 0.6], ['stretchR', 0.6], ['smileL', 0.35], ['smileR', 0.35], ['upperUpL', 0.25], ['upperUpR', 0.25]] },
  viseme_O: { jaw: 0.4, fields: [['funnel', 1.0], ['pucker', 0.6]] },
  viseme_U: { jaw: 0.2, fields: [['pucker', 1.0], ['funnel', 0.35]] },

  browDownLeft: { fields: [['browDownL', 1]] },
  browDownRight: { fields: [['browDownR', 1]] },
  browInnerUp: { fields: [['browInner', 1]] },
  browOuterUpLeft: { fields: [['browOuterL', 1]] },
  browOuterUpRight: { fields: [['browOuterR', 1]] },
  cheekPuff: { fields: [['puff', 1]] },
  cheekSquintLeft: { fields: [['cheekSqL', 1]] },
  cheekSquintRight: { fields: [['cheekSqR', 1]] },
  eyeBlinkLeft: { fields: [['blinkL', 1]] },
  eyeBlinkRight: { fields: [['blinkR', 1]] },
  eyeLookDownLeft: { fields: [['lidDownL', 1]] },
  eyeLookDownRight: { fields: [['lidDownR', 1]] },
  eyeLookInLeft: { fields: [['lidInL', 1]] },
  eyeLookInRight: { fields: [['lidInR', 1]] },
  eyeLookOutLeft: { fields: [['lidOutL', 1]] },
  eyeLookOutRight: { fields: [['lidOutR', 1]] },
  eyeLookUpLeft: { fields: [['lidUpL', 1]] },
  eyeLookUpRight: { fields: [['lidUpR', 1]] },
  eyeSquintLeft: { fields: [['squintL', 1]] },
  eyeSquintRight: { fields: [['squintR', 1]] },
  eyeWideLeft: { fields: [['wideL', 1]] },
  eyeWideRight: { fields: [['wideR', 1]] },
  jawForward: { jawFwd: 0.6 },
  jawLeft: { jawSide: 0.6 },
  jawOpen: { jaw: 1 },
  jawRight: { jawSide: -0.6 },
  mouthClose: { fields: [['close', 1]] },
  mouthDimpleLeft: { fields: [['dimpleL', 1]] },
  mouthDimpleRight: { fields: [['dimpleR', 1]] },
  mouthFrownLeft: { fields: [['frownL', 1]] },
  mouthFrownRight: { fields: [['frownR', 1]] },
  mouthFunnel: { fields: [['funnel', 1]] },
  mouthLeft: { fields: [['mouthShiftL', 1]] },
  mouthLowerDownLeft: { fields: [['lowerDownL', 1]] },
  mouthLowerDownRight: { fields: [['lowerDownR', 1]] },
  mouthPressLeft: { fields: [['pressL', 1]] },
  mouthPressRight: { fields: [['pressR', 1]] },
  mouthPucker: { fields: [['pucker', 1]] },
  mouthRight: { fields: [['mouthShiftR', 1]] },
  mouthRollLower: { fields: [['rollLower', 1]] },
  mouthRollUpper: { fields: [['rollUpper', 1]] },
  mouthShrugLower: { fields: [['shrugLower', 1]] },
  mouthShrugUpper: { fields: [['shrugUpper', 1]] },
  mouthSmileLeft: { fields: [['smileL', 1]] },
  mouthSmileRight: { fields: [['smileR', 1]] },
  mouthStretchLeft: { fields: [['stretchL', 1]] },
  mouthStretchRight: { fields: [['stretchR', 1]] },
  mouthUpperUpLeft: { fields: [['upperUpL', 1]] },
  mouthUpperUpRight: { fields: [['upperUpR', 1]] },
  noseSneerLeft: { fields: [['sneerL', 1]] },
  noseSneerRight: { fields: [['sneerR', 1]] },
  tongueOut: { jaw: 0.15, fields: [['lipsPart', 0.5]], tongue: { fwd: 2.6, up: -0.2 } },
};

/** Precomputed per-head geometry the fields need. */
interface Ctx {
  head: HeadMesh;
  mouthY: number;
  mouthZ: number;
  corner: Record<Side, V3>;
  /** Jaw weight per vertex (1 = rides the mandible). */
  jawW: number[];
  /** 1 on the lower lip / 0 on the upper lip, sharp at the lip line. */
  lowerW: number[];
  lipRegion: number[];
  eyes: Record<Side, { center: V3; upper: V3[]; lower: V3[] }>;
}

function lipLineY(ctx: { mouthY: number }, x: number): number {
  return ctx.mouthY + Math.max(0, Math.abs(x) - 2.3) * 0.55;
}

/** Interpolates a polyline already sorted by x (see makeCtx) at x; clamps outside. */
function yAt(pts: V3[], x: number): number {
  if (x <= pts[0][0]) return pts[0][1];
  for (let i = 0; i < pts.length - 1; i++) {
    if (x <= pts[i + 1][0]) {
      const t = (x - pts[i][0]) / (pts[i + 1][0] - pts[i][0] || 1);
      return pts[i][1] + (pts[i + 1][1] - pts[i][1]) * t;
    }
  }
  return pts[pts.length - 1][1];
}

function makeCtx(head: HeadMesh): Ctx {
  const p = head.pos;
  const mouthY = (p[13][1] + p[14][1]) / 2;
  const mouthZ = p[13][2];
  const ctx = { head, mouthY, mouthZ, corner: { 1: p[291], [-1]: p[61] } as Record<Side, V3>, jawW: [] as number[], lowerW: [] as number[], lipRegion: [] as number[], eyes: {} as Ctx['eyes'] };
  const corners = new Set([61, 291, 78, 308]);
  const lowerSet = new Set([...L.LIP_INNER_LOWER, ...L.LIP_OUTER_LOWER]);
  const upperSet = new Set([...L.LIP_INNER_UPPER, ...L.LIP_OUTER_UPPER]);
  for (let i = 0; i < p.length; i++) {
    const [x, y, z] = p[i];
    const sharp = 0.35 + 1.4 * smoothstep(2.0, 3.6, Math.abs(x));
    const line = lipLineY(ctx, x);
    let lw = smoothstep(line + 0.05, line - sharp, y);
    if (i < 468 && corners.has(i)) lw = 0.5;
    else if (i < 468 && lowerSet.has(i)) lw = 1;
    else if (i < 468 && upperSet.has(i)) lw = 0;
    ctx.lowerW.push(lw);
    // The mandible: only in front of the hinge and not the back of the skull.
    const front = smoothstep(-7.5, -3.5, z) * (y < 1 ? 1 : 0);
    ctx.jawW.push(head.part[i] === Part.Ear || head.part[i] === Part.Neck ? 0 : lw * front);
    ctx.lipRegion.push(falloff(Math.hypot(x / 3.4, (y - mouthY) / 1.9, Math.min(0, z - mouthZ + 1.5) / 2), 1));
  }
  // Bag and rim vertices inherit from the lip/lid vertex they hang off.
  for (let i = 0; i < p.length; i++) {
    if (head.part[i] === Part.MouthBag) {
      const a = head.anchor[i];
      const fade = 1 - 0.12 * head.depth[i];
      ctx.jawW[i] = ctx.lowerW[a] * fade + (1 - fade) * 0.5 * ctx.lowerW[a];
      ctx.lowerW[i] = ctx.lowerW[a];
      ctx.lipRegion[i] = ctx.lipRegion[a];
    }
  }
  for (const side of [1, -1] as Side[]) {
    const up = side === 1 ? L.EYE_LEFT_UPPER : L.EYE_RIGHT_UPPER;
    const lo = side === 1 ? L.EYE_LEFT_LOWER : L.EYE_RIGHT_LOWER;
    // sorted by x once here: lidField interpolates them for every vertex of every eye shape
    const byX = (ids: number[]) => ids.map((i) => p[i]).sort((a, b) => a[0] - b[0]);
    ctx.eyes[side] = { center: side === 1 ? head.eyeCenter.left : head.eyeCenter.right, upper: byX(up), lower: byX(lo) };
  }
  return ctx;
}

/** The sign of x on the subject's side s, e.g. outward for a lip corner. */
const sideW = (x: number, s: Side): number => smoothstep(-1.2, 1.5, x * s);

function lidField(ctx: Ctx, s: Side, p: V3, upperTo: number, lowerTo: number, fullToCorners = false): V3 {
  // upperTo / lowerTo: where the lid margins go, as a fraction of the eye opening
  // (0 = stays, 1 = all the way to the other lid, negative = away from it).
  const e = ctx.eyes[s];
  const x0 = e.upper[0][0];
  const x1 = e.upper[e.upper.length - 1][0];
  const xc = clamp(p[0], x0, x1);
  const xw = falloff(Math.abs(p[0] - xc), 0.9);
  if (xw <= 0 || Math.abs(p[1] - e.center[1]) > 3 || p[2] < e.center[2] - 1.5) return [0, 0, 0];
  const yU = yAt(e.upper, xc);
  const yL = yAt(e.lower, xc);
  const gap = yU - yL;
  // Endpoints stay put at the corners, so weight by distance along the eye.
  const along = Math.sin(Math.PI * clamp((xc - x0) / (x1 - x0)));
  // (a blink closes right into the corners, where the gap is small anyway; a sliver of sclera
  // left there reads as a white line on darker skin)
  const ends = fullToCorners ? 1 : 0.25 + 0.75 * along;
  let dy = 0;
  if (p[1] >= yU - 0.02) dy = -upperTo * gap * falloff(p[1] - yU, 1.1) * ends;
  else if (p[1] <= yL + 0.02) dy = lowerTo * gap * falloff(yL - p[1], 0.6) * ends;
  else dy = (-upperTo * (p[1] - yL) + lowerTo * (yU - p[1])) / (gap || 1) * gap * ends;
  dy *= xw;
  // Slide over the eyeball instead of cutting through it.
  const moved: V3 = [p[0], p[1] + dy, p[2]];
  const r0 = len(sub(p, e.center));
  const r1 = len(sub(moved, e.center));
  const minR = ctx.head.eyeRadius + 0.1;
  if (r0 < ctx.head.eyeRadius + 1.2 && r1 < Math.max(minR, r0)) {
    const target = add(e.center, scale(norm(sub(moved, e.center)), Math.max(minR, Math.min(r0, minR + 0.3))));
    return sub(target, p);
  }
  return [0, dy, 0];
}

function field(ctx: Ctx, f: Field, i: number): V3 {
  const p = ctx.head.pos[i];
  const [x, y, z] = p;
  const lw = ctx.lowerW[i];
  const lr = ctx.lipRegion[i];
  const corner = (s: Side, r: number) => falloff(len(sub(p, ctx.corner[s])), r);
  const m = (v: V3, w: number): V3 => [v[0] * w, v[1] * w, v[2] * w];
  const s = (f.endsWith('L') ? 1 : -1) as Side;
  switch (f) {
    case 'smileL':
    case 'smileR': {
      const c = corner(s, 2.8);
      const cheek = falloff(Math.hypot(x - 3.4 * s, (y + 2.2) * 0.9, z - 4.2), 2.4);
      return add(m([0.55 * s, 0.85, -0.35], c), m([0.2 * s, 0.45, 0.35], cheek));
    }
    case 'frownL':
    case 'frownR':
      return m([0.1 * s, -0.55, -0.05], corner(s, 2.5));
    case 'stretchL':
    case 'stretchR':
      return m([0.5 * s, -0.12, -0.25], corner(s, 2.8));
    case 'dimpleL':
    case 'dimpleR':
      return m([0.25 * s, 0.05, -0.4], corner(s, 2.2));
    case 'mouthShiftL':
    case 'mouthShiftR':
      return m([0.7 * s, 0, -0.05 * Math.abs(x)], falloff(Math.hypot(x / 3.8, (y - ctx.mouthY) / 2.4), 1));
    case 'pucker': {
      const t = lr * (0.6 + 0.4 * falloff(Math.abs(x), 2.5));
      return [-x * 0.38 * t, (ctx.mouthY - y) * 0.15 * t, 0.75 * t];
    }
    case 'funnel': {
      const t = lr;
      // a round opening: the lips part most in the middle, along a circle rather than a slot
      const open = Math.sqrt(clamp(1 - (x / 2.3) ** 2)) * falloff(Math.abs(y - ctx.mouthY), 1.3);
      // the corners (outside the lip region's core) gather in too, and push forward
      const cw = Math.max(corner(1, 2.2), corner(-1, 2.2));
      return [-x * 0.5 * t - Math.sign(x) * 0.45 * cw, (lw > 0.5 ? -0.5 : 0.5) * open, 0.6 * t + 0.25 * cw];
    }
    case 'lipsPart': {
      const open = falloff(Math.abs(x), 2.6) * falloff(Math.abs(y - ctx.mouthY), 1.0);
      return [0, (lw > 0.5 ? -0.18 : 0.15) * open, 0];
    }
    case 'rollLower':
      return m([0, 0.3, -0.45], lr * lw * falloff(Math.abs(y - ctx.mouthY), 1.2));
    case 'rollUpper':
      return m([0, -0.3, -0.45], lr * (1 - lw) * falloff(Math.abs(y - ctx.mouthY), 1.2));
    case 'shrugLower':
      return m([0, 0.4, 0.2], lw * falloff(Math.hypot(x / 2.8, (y - ctx.mouthY - -2) / 3), 1));
    case 'shrugUpper':
      return m([0, 0.3, 0.15], (1 - lw) * lr);
    case 'close': {
      // Undo the jaw's effect on the lips only, so jawOpen + mouthClose keeps the lips together.
      const open = jawPoint(ctx, i, JAW_OPEN, 0, 0);
      const w = lr * lr * falloff(Math.abs(y - ctx.mouthY), 1.6);
      return add(m(sub(p, open), lw * w), m([0, -0.15, 0], (1 - lw) * w));
    }
    case 'pressL':
    case 'pressR': {
      const w = lr * sideW(x, s) * falloff(Math.abs(y - ctx.mouthY), 1.2);
      return [0, (lw > 0.5 ? 0.14 : -0.12) * w, -0.12 * w];
    }
    case 'lowerDownL':
    case 'lowerDownR':
      return m([0, -0.5, 0.08], lw * lr * sideW(x, s));
    case 'upperUpL':
    case 'upperUpR':
      return m([0, 0.45, 0.08], (1 - lw) * lr * sideW(x, s) * smoothstep(ctx.mouthY + 2, ctx.mouthY, y));
    case 'puff': {
      const w = Math.max(falloff(Math.hypot(x - 3.8, (y + 3.2) * 0.9, z - 3), 2.8), falloff(Math.hypot(x + 3.8, (y + 3.2) * 0.9, z - 3), 2.8));
      return [Math.sign(x) * 0.75 * w, 0, 0.35 * w + 0.15 * lr];
    }
    case 'cheekSqL':
    case 'cheekSqR':
      return add(m([0, 0.35, 0.12], falloff(Math.hypot(x - 3.9 * s, y - 0.3, z - 4), 2.0)), lidField(ctx, s, p, 0, 0.12));
    case 'sneerL':
    case 'sneerR':
      return m([0.05 * s, 0.32, 0.05], falloff(Math.hypot(x - 1.5 * s, y + 1.0, (z - 5) * 0.7), 1.5));
    case 'browInner': {
      const w = Math.max(falloff(Math.hypot(x - 1.7, y - 4.8), 2.3), falloff(Math.hypot(x + 1.7, y - 4.8), 2.3)) * smoothstep(3.1, 4.2, y);
      return [0, 0.6 * w, 0.05 * w];
    }
    case 'browDownL':
    case 'browDownR': {
      const w = falloff(Math.hypot(x - 3 * s, y - 4.6), 2.6) * smoothstep(3.1, 4.1, y);
      return [-0.2 * s * w, -0.45 * w, 0.12 * w];
    }
    case 'browOuterL':
    case 'browOuterR': {
      const w = falloff(Math.hypot(x - 4.9 * s, y - 4.5), 2.4) * smoothstep(3.1, 4.1, y);
      return [0, 0.55 * w, 0];
    }
    case 'blinkL':
    case 'blinkR':
      // the margins overlap slightly when closed: subdivision rounds them apart, and a sliver of
      // sclera between closed lids reads as a white line
      return lidField(ctx, s, p, 0.95, 0.15, true);
    case 'squintL':
    case 'squintR':
      return add(lidField(ctx, s, p, 0.12, 0.3), m([0, 0.15, 0.05], falloff(Math.hypot(x - 3.6 * s, y - 0.8), 1.6)));
    case 'wideL':
    case 'wideR':
      return lidField(ctx, s, p, -0.35, -0.1);
    case 'lidUpL':
    case 'lidUpR':
      return add(lidField(ctx, s, p, -0.2, -0.05), m([0, 0.12, 0], falloff(Math.hypot(x - 3.2 * s, y - 4.4), 1.6)));
    case 'lidDownL':
    case 'lidDownR':
      return lidField(ctx, s, p, 0.35, -0.05);
    case 'lidInL':
    case 'lidInR':
    case 'lidOutL':
    case 'lidOutR': {
      const dir = f.startsWith('lidIn') ? -s : s;
      const e = ctx.eyes[s].center;
      return [0.08 * dir * falloff(len(sub(p, e)), 2.2), 0, 0];
    }
  }
}

/** Position of vertex i after a rigid jaw move, blended by its jaw weight. */
function jawPoint(ctx: Ctx, i: number, angle: number, fwd: number, side: number): V3 {
  const p = ctx.head.pos[i];
  const w = ctx.jawW[i];
  const moved = add(rotX(p, ctx.head.jawPivot, angle * w), [side * w, 0, fwd * w]);
  return moved;
}

export interface HeadMorphs {
  names: string[];
  /** One delta array (xyz per base vertex) per name. */
  deltas: Float32Array[];
}

export function buildHeadMorphs(head: HeadMesh): HeadMorphs {
  const ctx = makeCtx(head);
  const n = head.pos.length;
  const deltas = MORPH_NAMES.map((name) => {
    const r = RECIPES[name];
    const out = new Float32Array(n * 3);
    for (let i = 0; i < n; i++) {
      const part = head.part[i];
      if (part === Part.Ear || part === Part.Neck) continue;
      let d: V3 = [0, 0, 0];
      if (r.jaw || r.jawFwd || r.jawSide) d = sub(jawPoint(ctx, i, (r.jaw ?? 0) * JAW_OPEN, r.jawFwd ?? 0, r.jawSide ?? 0), head.pos[i]);
      if (r.fields) {
        const src = part === Part.LidRim || part === Part.MouthBag ? head.anchor[i] : i;
        const follow = part === Part.MouthBag ? Math.max(0, 1 - 0.3 * head.depth[i]) : part === Part.LidRim ? 1 : 1;
        for (const [f, w] of r.fields) {
          const fd = field(ctx, f, src);
          d = add(d, scale(fd, w * follow));
        }
      }
      out[i * 3] = d[0];
      out[i * 3 + 1] = d[1];
      out[i * 3 + 2] = d[2];
    }
    return out;
  });
  return { names: MORPH_NAMES, deltas };
}

/** Rigid lower-jaw delta for a point that fully rides the jaw (teeth, tongue), for a recipe. */
export function jawDelta(recipe: Recipe, p: V3, pivot: V3): V3 {
  const moved = add(rotX(p, pivot, (recipe.jaw ?? 0) * JAW_OPEN), [recipe.jawSide ?? 0, 0, recipe.jawFwd ?? 0]);
  return sub(moved, p);
}
