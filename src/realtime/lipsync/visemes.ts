/** The 15 Oculus visemes, in the order used for compact indexes on the wire. */
export const VISEMES = ['sil', 'PP', 'FF', 'TH', 'DD', 'kk', 'CH', 'SS', 'nn', 'RR', 'aa', 'E', 'I', 'O', 'U'] as const;
export type Viseme = (typeof VISEMES)[number];
export const VISEME_INDEX: Record<Viseme, number> = Object.fromEntries(VISEMES.map((v, i) => [v, i])) as Record<Viseme, number>;

/** ARPAbet phoneme (CMU dictionary, stress digits removed) to viseme. */
export const PHONEME_VISEME: Record<string, Viseme> = {
  AA: 'aa',
  AE: 'aa',
  AH: 'aa',
  AO: 'O',
  AW: 'aa',
  AY: 'aa',
  EH: 'E',
  ER: 'RR',
  EY: 'E',
  IH: 'I',
  IY: 'I',
  OW: 'O',
  OY: 'O',
  UH: 'U',
  UW: 'U',
  B: 'PP',
  P: 'PP',
  M: 'PP',
  F: 'FF',
  V: 'FF',
  TH: 'TH',
  DH: 'TH',
  D: 'DD',
  T: 'DD',
  N: 'nn',
  L: 'nn',
  NG: 'nn',
  K: 'kk',
  G: 'kk',
  HH: 'kk',
  CH: 'CH',
  JH: 'CH',
  SH: 'CH',
  ZH: 'CH',
  S: 'SS',
  Z: 'SS',
  R: 'RR',
  W: 'U',
  Y: 'I',
};

const VOWELS = new Set(['aa', 'E', 'I', 'O', 'U']);

/** Relative duration weight of a viseme (vowels longer than consonants, plosives shortest). */
export function visemeWeight(v: Viseme): number {
  if (VOWELS.has(v)) return 1.0;
  if (v === 'PP' || v === 'DD' || v === 'kk') return 0.5;
  return 0.7;
}
