/**
 * The built-in faces. Each record carries what the player needs to draw it (the GLB it loads and
 * the look parameters the head generator used), and its gender for the voice rule.
 * The GLB files are generated at install time by `src/faces/` from these parameters.
 */
export type Gender = 'f' | 'm';

export interface FaceLook {
  /** Linear-ish sRGB hex of the base skin tone. */
  skin: string;
  hair: string;
  hairStyle: 'long' | 'bob' | 'bun' | 'short' | 'buzz' | 'curly' | 'ponytail' | 'wavy' | 'bald';
  eyes: string;
  lips: string;
  /** -1..1 shape offsets applied to the base head: jaw width, face length, nose size, cheekbones, brow. */
  shape: { jaw: number; length: number; nose: number; cheeks: number; brow: number };
  beard?: 'stubble' | 'short' | 'full' | null;
  /** Identity coefficients of the ICT FaceKit's PCA modes (src/faces/ict), in standard deviations. */
  identity?: number[];
  /** 0 (twenties) .. 1 (sixties): skin detail, lines, greying. */
  age?: number;
}

export interface Face {
  avatar_id: string;
  name: string;
  gender: Gender;
  description: string;
  default_voice_id: string;
  /** Path (under PUBLIC_URL) of the face's GLB, with viseme_* and ARKit morph targets. */
  model_url: string;
  look: FaceLook;
  source: 'builtin' | 'custom';
}

const builtin = (f: Omit<Face, 'model_url' | 'source'>): Face => ({ ...f, model_url: `/assets/faces/${f.avatar_id}.glb`, source: 'builtin' });

/** The face a new agent gets (and the one `npm install` builds; the others follow at first start). */
export const DEFAULT_FACE_ID = 'face01';

export const BUILTIN_FACES: Face[] = [
  builtin({
    avatar_id: 'face01',
    name: 'Maya',
    gender: 'f',
    default_voice_id: 'af_bella',
    description: 'Woman in her thirties, light olive skin, long dark-brown hair',
    look: {
      identity: [
        1.28, -0.18, -0.04, 0.23, -0.86, -0.46, 0.46, -0.4, 1.02, -1.41, -0.04, 0.28, 0.1, 0.14, 0.16, -0.67, -0.68, 0.08, -0.1, -0.79, 1.44, 1.05, 0.46, 0.72,
        -0.05, -0.12, -0.22, -0.07, 0.17, -0.99,
      ],
      age: 0.25,
      skin: '#d9a98a',
      hair: '#3b2417',
      hairStyle: 'long',
      eyes: '#5a3b22',
      lips: '#b56a63',
      shape: { jaw: -0.3, length: 0.1, nose: -0.2, cheeks: 0.3, brow: -0.2 },
    },
  }),
  builtin({
    avatar_id: 'face02',
    name: 'Daniel',
    gender: 'm',
    default_voice_id: 'am_michael',
    description: 'Man in his forties, fair skin, short brown hair, light stubble',
    look: {
      identity: [
        -0.8, -0.9, 1.4, 0.41, 1.39, -0.9, -0.17, 0.53, 0.26, -0.3, 0.61, 1.12, -0.01, -0.11, -0.76, 0.37, -0.68, -0.22, 0.44, 0.13, -0.07, 0.76, -1.37, -0.32,
        0.82, 0.31, 0.59, 0.18, -0.88, 1.01,
      ],
      age: 0.45,
      skin: '#e5b99b',
      hair: '#5a3a22',
      hairStyle: 'short',
      eyes: '#4a6a8a',
      lips: '#b07366',
      shape: { jaw: 0.5, length: 0.2, nose: 0.2, cheeks: 0, brow: 0.4 },
      beard: 'stubble',
    },
  }),
  builtin({
    avatar_id: 'face03',
    name: 'Amara',
    gender: 'f',
    default_voice_id: 'af_heart',
    description: 'Woman in her twenties, deep brown skin, curly black hair',
    look: {
      identity: [
        0.68, 0.44, -1.63, 0.08, -0.84, -0.92, 0.92, -1.21, 0.55, 0.07, 1.28, 0.04, -0.54, -0.46, 0.42, 0.44, -0.37, 0.95, 0.06, -0.38, 0.23, 0.07, -0.01, 0.05,
        -1.18, -0.58, 0.3, -0.27, -0.53, 1.07,
      ],
      age: 0.05,
      skin: '#7a4a31',
      hair: '#161110',
      hairStyle: 'curly',
      eyes: '#2e1c10',
      lips: '#6e3a33',
      shape: { jaw: -0.2, length: 0, nose: 0.1, cheeks: 0.4, brow: -0.1 },
    },
  }),
  builtin({
    avatar_id: 'face04',
    name: 'Kenji',
    gender: 'm',
    default_voice_id: 'am_adam',
    description: 'East Asian man in his thirties, light warm skin, short black hair',
    look: {
      identity: [
        -1.15, 1.52, -0.43, -0.1, 0.41, 0.06, -0.33, 0.19, 0.48, 0.56, 0.11, 0.51, -0.49, 0.13, 0.08, -0.34, 0.13, -0.21, -0.16, -0.14, -0.47, -0.61, -0.16,
        0.49, -0.17, 0.16, 0.1, -0.73, 0.24, 0.45,
      ],
      age: 0.25,
      skin: '#e0b48f',
      hair: '#121212',
      hairStyle: 'short',
      eyes: '#2b1d14',
      lips: '#b27a6a',
      shape: { jaw: 0.2, length: -0.1, nose: -0.1, cheeks: 0.2, brow: 0 },
    },
  }),
  builtin({
    avatar_id: 'face05',
    name: 'Sofia',
    gender: 'f',
    default_voice_id: 'af_nicole',
    description: 'Woman in her forties, fair skin, blonde hair in a bob',
    look: {
      identity: [
        0.78, -0.64, 0.95, 0.07, -0.05, 1.09, 0.79, -0.94, 0.56, -0.44, 0.19, 0.04, 0.09, 0.02, 0.15, 0.64, -0.98, -0.52, 0.3, -1.46, -0.54, -0.03, -0.72,
        -0.99, 0.6, -0.45, -0.05, -0.15, -1.08, -0.05,
      ],
      age: 0.45,
      skin: '#f0c8b0',
      hair: '#c9a15f',
      hairStyle: 'bob',
      eyes: '#5b7d5a',
      lips: '#c07a78',
      shape: { jaw: -0.1, length: 0.2, nose: 0, cheeks: 0.1, brow: -0.3 },
    },
  }),
  builtin({
    avatar_id: 'face06',
    name: 'Marcus',
    gender: 'm',
    default_voice_id: 'am_eric',
    description: 'Man in his fifties, dark brown skin, close-cropped greying hair, short beard',
    look: {
      identity: [
        -1.42, 0.9, -1.03, 0.03, 0.48, 0.73, -0.79, 0.08, -0.22, -0.26, -0.72, 0.08, 0.24, -0.82, -0.23, 0.77, 0.73, 0.02, 0.65, 0.39, -0.65, -0.23, 0.42,
        -0.06, 0.83, 0.39, -0.33, -0.02, 0.41, -0.09,
      ],
      age: 0.7,
      skin: '#5c3a27',
      hair: '#3a3632',
      hairStyle: 'buzz',
      eyes: '#24160d',
      lips: '#5a3029',
      shape: { jaw: 0.6, length: 0.1, nose: 0.3, cheeks: 0, brow: 0.5 },
      beard: 'short',
    },
  }),
  builtin({
    avatar_id: 'face07',
    name: 'Priya',
    gender: 'f',
    default_voice_id: 'af_sarah',
    description: 'South Asian woman in her thirties, medium brown skin, black hair in a bun',
    look: {
      identity: [
        0.71, -0.6, -0.31, 0.05, -0.5, -0.63, 1.27, -0.54, 0.63, 0.76, -0.79, 0.25, 0.09, 0.82, 0.12, 0.02, 0.05, -1.08, -0.47, -1.12, -0.5, 0, 0.42, -0.06,
        -0.16, -0.97, 0.88, 1.09, 0.16, 0.05,
      ],
      age: 0.25,
      skin: '#a8714f',
      hair: '#1a120e',
      hairStyle: 'bun',
      eyes: '#2a1a0f',
      lips: '#8a4c45',
      shape: { jaw: -0.3, length: 0.1, nose: 0.1, cheeks: 0.2, brow: -0.2 },
    },
  }),
  builtin({
    avatar_id: 'face08',
    name: 'Lucas',
    gender: 'm',
    default_voice_id: 'am_liam',
    description: 'Man in his twenties, olive skin, wavy dark hair',
    look: {
      identity: [
        -1.05, 0.34, -0.17, 0.12, 0.58, -0.76, 0.5, -0.31, -0.13, 0.42, 0.98, -0.54, 0.7, 0.22, 0.53, -0.49, 0.41, 0.8, -0.2, -0.74, 0.36, 1.31, 0.19, 0.64,
        0.3, 0.41, -0.72, 0.49, -0.44, -0.21,
      ],
      age: 0.05,
      skin: '#c99572',
      hair: '#2b1c12',
      hairStyle: 'wavy',
      eyes: '#3d2a1a',
      lips: '#a0655a',
      shape: { jaw: 0.3, length: 0, nose: 0.1, cheeks: 0.1, brow: 0.2 },
    },
  }),
  builtin({
    avatar_id: 'face09',
    name: 'Elena',
    gender: 'f',
    default_voice_id: 'bf_emma',
    description: 'Woman in her sixties, fair skin, silver hair in a ponytail',
    look: {
      identity: [
        0.63, -0.47, 1, 0.22, -0.85, -0.13, 1.15, -0.82, 0.12, 0.39, -0.2, 0.42, 0.45, 0.34, 0.44, -0.62, -0.06, 0.6, -0.04, -0.29, 1.29, -0.46, -0.53, -0.39,
        -0.27, 0.3, -0.31, 0.16, 0.72, -0.23,
      ],
      age: 0.95,
      skin: '#eec3a8',
      hair: '#bdbab5',
      hairStyle: 'ponytail',
      eyes: '#6a7f96',
      lips: '#b57b76',
      shape: { jaw: 0, length: 0.2, nose: 0.1, cheeks: -0.1, brow: -0.1 },
    },
  }),
  builtin({
    avatar_id: 'face10',
    name: 'Omar',
    gender: 'm',
    default_voice_id: 'bm_george',
    description: 'Man in his thirties, tan skin, short black hair, short beard',
    look: {
      identity: [
        -0.51, -1.25, 0.66, 0.23, 0.87, 0.29, -1.07, 1.08, 0.14, 0.48, 0.68, 0.72, 0.07, 0.42, -0.23, 0.16, 0.5, 0.23, 0.66, 0.54, -0.45, -0.1, 0, -0.31, -0.66,
        0.05, -0.07, 0.28, 0.43, 0.25,
      ],
      age: 0.25,
      skin: '#b07a55',
      hair: '#15100c',
      hairStyle: 'short',
      eyes: '#2a1a10',
      lips: '#87534a',
      shape: { jaw: 0.4, length: 0.1, nose: 0.3, cheeks: 0.1, brow: 0.3 },
      beard: 'short',
    },
  }),
  builtin({
    avatar_id: 'face11',
    name: 'Mei',
    gender: 'f',
    default_voice_id: 'af_nova',
    description: 'East Asian woman in her fifties, light skin, black hair with grey in a bob',
    look: {
      identity: [
        1.24, 1.4, -0.56, -0.24, -1.11, -0.17, 0.78, 0.32, -1.23, -0.88, 1.2, 0.35, -0.5, -0.15, -0.79, 0.67, -0.44, -0.29, -0.17, -0.55, -0.14, -1.03, 0.31,
        0.66, -0.58, 0.3, 0.88, 0.06, 0.37, -0.77,
      ],
      age: 0.7,
      skin: '#e2b99a',
      hair: '#3a3633',
      hairStyle: 'bob',
      eyes: '#2b1d14',
      lips: '#b27570',
      shape: { jaw: 0, length: 0, nose: 0, cheeks: 0, brow: 0 },
    },
  }),
  builtin({
    avatar_id: 'face12',
    name: 'Samuel',
    gender: 'm',
    default_voice_id: 'am_onyx',
    description: 'Man in his sixties, deep brown skin, bald, short grey beard',
    look: {
      identity: [
        -0.59, 0.53, -1.11, 0.03, 0.31, 0.11, -0.35, 0.29, -0.5, 0.48, -0.16, 0.38, -0.46, -0.61, -0.61, -0.93, 0.45, 0.3, -0.48, -0.22, -0.63, 0.72, -0.38,
        0.29, -0.07, -0.33, 0.51, -0.5, 0.69, -0.44,
      ],
      age: 0.95,
      skin: '#6b432c',
      hair: '#8f8a84',
      hairStyle: 'bald',
      eyes: '#24160d',
      lips: '#5e3229',
      shape: { jaw: 0, length: 0, nose: 0, cheeks: 0, brow: 0 },
      beard: 'full',
    },
  }),
];
