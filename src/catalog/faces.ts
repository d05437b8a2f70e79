/**
 * The built-in faces. Each record carries what the player needs to draw it (the GLB it loads and
 * the look parameters the head generator used), and its gender for the voice rule.
 * The GLB files are generated at install time by `src/player/faces/` from these parameters.
 */
export type Gender = 'f' | 'm';

export interface FaceLook {
  /** Linear-ish sRGB hex of the base skin tone. */
  skin: string;
  hair: string;
  hairStyle: 'long' | 'bob' | 'bun' | 'short' | 'buzz' | 'curly' | 'ponytail' | 'wavy';
  eyes: string;
  lips: string;
  /** -1..1 shape offsets applied to the base head: jaw width, face length, nose size, cheekbones, brow. */
  shape: { jaw: number; length: number; nose: number; cheeks: number; brow: number };
  beard?: 'stubble' | 'short' | null;
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

export const BUILTIN_FACES: Face[] = [
  builtin({
    avatar_id: 'face01', name: 'Maya', gender: 'f', default_voice_id: 'af_bella',
    description: 'Woman in her thirties, light olive skin, long dark-brown hair',
    look: { skin: '#d9a98a', hair: '#3b2417', hairStyle: 'long', eyes: '#5a3b22', lips: '#b56a63', shape: { jaw: -0.3, length: 0.1, nose: -0.2, cheeks: 0.3, brow: -0.2 } },
  }),
  builtin({
    avatar_id: 'face02', name: 'Daniel', gender: 'm', default_voice_id: 'am_michael',
    description: 'Man in his forties, fair skin, short brown hair, light stubble',
    look: { skin: '#e5b99b', hair: '#5a3a22', hairStyle: 'short', eyes: '#4a6a8a', lips: '#b07366', shape: { jaw: 0.5, length: 0.2, nose: 0.2, cheeks: 0, brow: 0.4 }, beard: 'stubble' },
  }),
  builtin({
    avatar_id: 'face03', name: 'Amara', gender: 'f', default_voice_id: 'af_heart',
    description: 'Woman in her twenties, deep brown skin, curly black hair',
    look: { skin: '#7a4a31', hair: '#161110', hairStyle: 'curly', eyes: '#2e1c10', lips: '#6e3a33', shape: { jaw: -0.2, length: 0, nose: 0.1, cheeks: 0.4, brow: -0.1 } },
  }),
  builtin({
    avatar_id: 'face04', name: 'Kenji', gender: 'm', default_voice_id: 'am_adam',
    description: 'Man in his thirties, light warm skin, short black hair',
    look: { skin: '#e0b48f', hair: '#121212', hairStyle: 'short', eyes: '#2b1d14', lips: '#b27a6a', shape: { jaw: 0.2, length: -0.1, nose: -0.1, cheeks: 0.2, brow: 0 } },
  }),
  builtin({
    avatar_id: 'face05', name: 'Sofia', gender: 'f', default_voice_id: 'af_nicole',
    description: 'Woman in her forties, fair skin, blonde hair in a bob',
    look: { skin: '#f0c8b0', hair: '#c9a15f', hairStyle: 'bob', eyes: '#5b7d5a', lips: '#c07a78', shape: { jaw: -0.1, length: 0.2, nose: 0, cheeks: 0.1, brow: -0.3 } },
  }),
  builtin({
    avatar_id: 'face06', name: 'Marcus', gender: 'm', default_voice_id: 'am_eric',
    description: 'Man in his fifties, dark brown skin, close-cropped greying hair, short beard',
    look: { skin: '#5c3a27', hair: '#3a3632', hairStyle: 'buzz', eyes: '#24160d', lips: '#5a3029', shape: { jaw: 0.6, length: 0.1, nose: 0.3, cheeks: 0, brow: 0.5 }, beard: 'short' },
  }),
  builtin({
    avatar_id: 'face07', name: 'Priya', gender: 'f', default_voice_id: 'af_sarah',
    description: 'Woman in her thirties, medium brown skin, black hair in a bun',
    look: { skin: '#a8714f', hair: '#1a120e', hairStyle: 'bun', eyes: '#2a1a0f', lips: '#8a4c45', shape: { jaw: -0.3, length: 0.1, nose: 0.1, cheeks: 0.2, brow: -0.2 } },
  }),
  builtin({
    avatar_id: 'face08', name: 'Lucas', gender: 'm', default_voice_id: 'am_liam',
    description: 'Man in his twenties, olive skin, wavy dark hair',
    look: { skin: '#c99572', hair: '#2b1c12', hairStyle: 'wavy', eyes: '#3d2a1a', lips: '#a0655a', shape: { jaw: 0.3, length: 0, nose: 0.1, cheeks: 0.1, brow: 0.2 } },
  }),
  builtin({
    avatar_id: 'face09', name: 'Elena', gender: 'f', default_voice_id: 'bf_emma',
    description: 'Woman in her sixties, fair skin, silver hair in a ponytail',
    look: { skin: '#eec3a8', hair: '#bdbab5', hairStyle: 'ponytail', eyes: '#6a7f96', lips: '#b57b76', shape: { jaw: 0, length: 0.2, nose: 0.1, cheeks: -0.1, brow: -0.1 } },
  }),
  builtin({
    avatar_id: 'face10', name: 'Omar', gender: 'm', default_voice_id: 'bm_george',
    description: 'Man in his thirties, tan skin, short black hair, short beard',
    look: { skin: '#b07a55', hair: '#15100c', hairStyle: 'short', eyes: '#2a1a10', lips: '#87534a', shape: { jaw: 0.4, length: 0.1, nose: 0.3, cheeks: 0.1, brow: 0.3 }, beard: 'short' },
  }),
];
