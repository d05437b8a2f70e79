/** Tiny vector helpers on plain tuples: the generator works on flat arrays, not three.js objects. */
export type V3 = [number, number, number];

export const add = (a: V3, b: V3): V3 => [a[0] + b[0], a[1] + b[1], a[2] + b[2]];
export const sub = (a: V3, b: V3): V3 => [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
export const scale = (a: V3, s: number): V3 => [a[0] * s, a[1] * s, a[2] * s];
export const dot = (a: V3, b: V3): number => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
export const len = (a: V3): number => Math.hypot(a[0], a[1], a[2]);
export const norm = (a: V3): V3 => scale(a, 1 / (len(a) || 1));
export const lerp = (a: V3, b: V3, t: number): V3 => [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t, a[2] + (b[2] - a[2]) * t];
export const cross = (a: V3, b: V3): V3 => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];

export const clamp = (x: number, lo = 0, hi = 1): number => Math.min(hi, Math.max(lo, x));
/** Linear blend of two numbers. */
export const mix = (a: number, b: number, t: number): number => a + (b - a) * t;
/** Hermite smoothstep; edges may be given in either order. */
export function smoothstep(e0: number, e1: number, x: number): number {
  const t = clamp((x - e0) / (e1 - e0));
  return t * t * (3 - 2 * t);
}
/** Smooth bump: 1 at distance 0, 0 at distance >= r. */
export const falloff = (d: number, r: number): number => {
  const t = clamp(1 - d / r);
  return t * t * (3 - 2 * t);
};

/** Rotates p around the x axis through `pivot` by `angle` radians (positive opens a jaw: chin goes down). */
export function rotX(p: V3, pivot: V3, angle: number): V3 {
  const y = p[1] - pivot[1];
  const z = p[2] - pivot[2];
  const c = Math.cos(angle);
  const s = Math.sin(angle);
  return [p[0], pivot[1] + y * c - z * s, pivot[2] + y * s + z * c];
}

/** Deterministic PRNG (mulberry32) so every build of a face is byte-identical. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function hashString(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}
