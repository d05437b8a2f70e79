/**
 * Faces beyond the catalogue: a new person from a seed and a few dials (gender, age, build of the
 * face, skin tone), built into a GLB the custom-faces path stores like an uploaded one
 * (`presence faces generate`). The same seed and dials give the same face.
 */
import type { Face, FaceLook } from './builtin.js';
import { buildFace } from './build.js';
import { ANCESTRIES, identityFor, type Ancestry } from './ict/identity.js';
import { rng } from './vec.js';

export interface FaceDials {
  seed: number;
  gender: 'f' | 'm';
  /** Years, 20..75. */
  age: number;
  /** −1 slender .. 1 broad. */
  build: number;
  /** 0 very fair .. 1 very deep. */
  skinTone: number;
  ancestry?: Ancestry;
}

export const DIAL_LIMITS = { age: [20, 75], build: [-1, 1], skinTone: [0, 1] } as const;

const TONES = ['#f2cdb4', '#e3b294', '#c99472', '#a26a4a', '#7a4a31', '#553222'];
const mixHex = (a: string, b: string, t: number) => {
  const pa = [1, 3, 5].map((i) => parseInt(a.slice(i, i + 2), 16));
  const pb = [1, 3, 5].map((i) => parseInt(b.slice(i, i + 2), 16));
  return `#${pa
    .map((x, i) =>
      Math.round(x + (pb[i] - x) * t)
        .toString(16)
        .padStart(2, '0'),
    )
    .join('')}`;
};
const toneAt = (t: number) => {
  const f = Math.max(0, Math.min(1, t)) * (TONES.length - 1);
  const i = Math.min(TONES.length - 2, Math.floor(f));
  return mixHex(TONES[i], TONES[i + 1], f - i);
};

/** The look (identity coefficients, colours, hair) for a set of dials. */
export function lookFor(d: FaceDials): FaceLook {
  const r = rng(d.seed * 31 + 7);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length) % xs.length];
  const ancestry = d.ancestry ?? pick(ANCESTRIES);
  const skin = toneAt(d.skinTone);
  const age01 = Math.max(0, Math.min(1, (d.age - 22) / 45));
  const dark = d.skinTone > 0.45;
  const baseHair = dark ? pick(['#15100c', '#1c130e', '#241810']) : pick(['#15100c', '#3b2417', '#5a3a22', '#8a6239', '#c9a15f', '#6b3a1f']);
  // greying from the forties on
  const grey = Math.max(0, (d.age - 40) / 30);
  const hair = mixHex(baseHair, '#b9b6b1', Math.min(0.9, grey));
  const hairStyle =
    d.gender === 'f' ? pick(['long', 'bob', 'bun', 'ponytail', 'curly', 'wavy'] as const) : pick(['short', 'short', 'buzz', 'wavy', 'curly', 'bald'] as const);
  const beard = d.gender === 'm' ? pick([null, null, 'stubble', 'short', 'full'] as const) : null;
  const eyes = d.skinTone < 0.3 ? pick(['#4a6a8a', '#5b7d5a', '#5a3b22', '#6a7f96']) : pick(['#2b1d14', '#3d2a1a', '#24160d', '#5a3b22']);
  const lips = mixHex(skin, '#8a3a3a', 0.35);
  return {
    identity: identityFor({ gender: d.gender, ancestry, build: d.build, seed: d.seed }),
    age: age01,
    skin,
    hair,
    hairStyle,
    eyes,
    lips,
    shape: { jaw: 0, length: 0, nose: 0, cheeks: 0, brow: 0 },
    beard,
  };
}

const decade = (age: number) => ['twenties', 'thirties', 'forties', 'fifties', 'sixties', 'seventies'][Math.max(0, Math.min(5, Math.floor(age / 10) - 2))];

/** Builds the GLB of a generated face; `describe` is a catalogue-style description of it. */
export async function generateFace(d: FaceDials, id = `gen${d.seed}`): Promise<{ glb: Uint8Array; look: FaceLook; describe: string }> {
  const look = lookFor(d);
  const face: Face = { avatar_id: id, name: id, gender: d.gender, description: '', default_voice_id: '', model_url: '', look, source: 'custom' };
  const { glb } = await buildFace(face);
  const hair = look.hairStyle === 'bald' ? 'bald' : `${look.hairStyle} hair`;
  const beard = look.beard ? `, ${look.beard === 'full' ? 'full beard' : look.beard === 'short' ? 'short beard' : 'stubble'}` : '';
  return {
    glb,
    look,
    describe: `Generated ${d.gender === 'f' ? 'woman' : 'man'} in ${d.gender === 'f' ? 'her' : 'his'} ${decade(d.age)}, ${hair}${beard} (seed ${d.seed})`,
  };
}
