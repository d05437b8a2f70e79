/**
 * Identity coefficients for the FaceKit's PCA modes, from a few human-readable dials. Measured on
 * the data (landmark distances per +1σ of each mode): mode 0 is overall size (− larger), mode 1
 * a wider face with a flatter nose and brow, mode 2 a more projecting nose and chin with thinner
 * lips, mode 3 a deeper skull, mode 4 brow ridge and chin, mode 6 narrower jaw and cheeks. The
 * rest are drawn from the seed at 0.55σ (the FaceKit's own sampler draws N(0,1); ~0.6 avoids odd
 * features) so every seed is a different person.
 */
import { rng } from '../vec.js';

export type Ancestry = 'european' | 'african' | 'east-asian' | 'south-asian' | 'middle-eastern' | 'latin';
export const ANCESTRIES: Ancestry[] = ['european', 'african', 'east-asian', 'south-asian', 'middle-eastern', 'latin'];

/** Offsets on modes 0..4 (σ). */
const ANCESTRY_MODES: Record<Ancestry, number[]> = {
  european: [0, -0.6, 0.8, 0, 0.3],
  african: [0, 0.7, -1.3, 0.3, -0.2],
  'east-asian': [0.2, 1.3, -0.2, -0.4, -0.5],
  'south-asian': [0.1, -0.2, -0.3, 0.2, 0],
  'middle-eastern': [0, -0.9, 0.5, 0.2, 0.4],
  latin: [0, 0.3, -0.1, 0, 0.1],
};

export interface IdentityDials {
  gender: 'f' | 'm';
  ancestry: Ancestry;
  /** −1 (slender, narrow face) .. 1 (broad, heavy face). */
  build: number;
  seed: number;
}

const MODES = 30;

function gauss(r: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
}

export function identityFor(d: IdentityDials): number[] {
  const r = rng(d.seed * 7919 + 13);
  const w = Array.from({ length: MODES }, (_, i) => (i < 5 ? 0.3 : 0.55) * gauss(r));
  ANCESTRY_MODES[d.ancestry].forEach((v, i) => (w[i] += v));
  // Men: larger, heavier brow and chin, wider jaw; women the reverse.
  const m = d.gender === 'm' ? 1 : -1;
  w[0] += -0.9 * m;
  w[4] += 0.7 * m;
  w[6] += -0.4 * m;
  // Build: broad faces are wider and a little larger.
  const b = Math.max(-1, Math.min(1, d.build));
  w[6] += -0.9 * b;
  w[0] += -0.3 * b;
  w[3] += 0.3 * b;
  return w.map((x) => Math.round(Math.max(-2.2, Math.min(2.2, x)) * 100) / 100);
}
