/**
 * Recorded-speech stand-in for tests: a voiced, formant-filtered signal (glottal pulses through
 * three vowel resonators, with jitter and pitch declination) laid out as syllables, plus the
 * animation track the server would send for it (visemes and a mouth-openness envelope).
 */
const FORMANTS: Record<string, [number, number, number]> = {
  aa: [730, 1090, 2440],
  E: [530, 1840, 2480],
  I: [390, 1990, 2550],
  O: [570, 840, 2410],
  U: [440, 1020, 2240],
};
const CONSONANTS = ['PP', 'DD', 'kk', 'SS', 'nn', 'FF', 'TH', 'CH', 'RR'];

export interface Syllable {
  start: number;
  end: number;
  vowel: keyof typeof FORMANTS;
  consonant: string;
}

export interface Speech {
  rate: number;
  pcm: Int16Array;
  duration: number;
  syllables: Syllable[];
  /** Relative to the utterance start. */
  visemes: [number, string, number][];
  mouth: { step: number; values: number[] };
  /** Starts of voiced stretches after silence (relative seconds). */
  onsets: number[];
}

/** `words`: number of syllables per word; 0 = a pause. */
export function synthSpeech(rate: number, words: number[], lead = 0.4, seed = 7, consonants = CONSONANTS): Speech {
  let s = seed;
  const rnd = () => (s = (s * 16807) % 2147483647) / 2147483647;
  const syllables: Syllable[] = [];
  const onsets: number[] = [];
  let t = lead;
  let silent = true;
  const vowels = Object.keys(FORMANTS) as (keyof typeof FORMANTS)[];
  for (const w of words) {
    if (w === 0) {
      t += 0.45;
      silent = true;
      continue;
    }
    for (let k = 0; k < w; k++) {
      const dur = 0.16 + rnd() * 0.1;
      if (silent) onsets.push(t);
      silent = false;
      syllables.push({
        start: t,
        end: t + dur,
        vowel: vowels[Math.floor(rnd() * vowels.length)],
        consonant: consonants[Math.floor(rnd() * consonants.length)],
      });
      t += dur + 0.035;
    }
    t += 0.08;
  }
  const duration = t + 0.3;
  const n = Math.round(duration * rate);
  const out = new Float32Array(n);
  // Resonator state per formant.
  const state = [0, 0, 0, 0, 0, 0];
  let phase = 0;
  for (const syl of syllables) {
    const [f1, f2, f3] = FORMANTS[syl.vowel];
    const i0 = Math.round(syl.start * rate);
    const i1 = Math.round(syl.end * rate);
    for (let i = i0; i < i1 && i < n; i++) {
      const x = (i - i0) / rate;
      const len = (i1 - i0) / rate;
      const env = Math.min(1, x / 0.03) * Math.min(1, (len - x) / 0.045);
      const f0 = 135 - 25 * (i / n) + 6 * Math.sin(2 * Math.PI * 4 * x) + (rnd() - 0.5) * 2;
      phase += f0 / rate;
      let src = 0;
      if (phase >= 1) {
        phase -= 1;
        src = 1;
      }
      src += (rnd() - 0.5) * 0.05;
      let y = 0;
      [f1, f2, f3].forEach((f, k) => {
        const bw = 80 + 40 * k;
        const r = Math.exp((-Math.PI * bw) / rate);
        const c = 2 * r * Math.cos((2 * Math.PI * f) / rate);
        const v = src + c * state[2 * k] - r * r * state[2 * k + 1];
        state[2 * k + 1] = state[2 * k];
        state[2 * k] = v;
        y += v * (k === 0 ? 1 : k === 1 ? 0.6 : 0.3);
      });
      out[i] = y * env;
    }
  }
  let peak = 0;
  for (const v of out) peak = Math.max(peak, Math.abs(v));
  const pcm = new Int16Array(n);
  for (let i = 0; i < n; i++) pcm[i] = Math.round((out[i] / peak) * 0.7 * 32767);
  // Mouth openness: RMS in 10 ms steps, normalised to the loud end.
  const step = 0.01;
  const values: number[] = [];
  const per = Math.round(rate * step);
  for (let i = 0; i < n; i += per) {
    let e = 0;
    for (let j = i; j < Math.min(n, i + per); j++) e += (pcm[j] / 32768) ** 2;
    values.push(Math.sqrt(e / per));
  }
  const ref = [...values].sort((a, b) => a - b)[Math.floor(values.length * 0.95)] || 1;
  const mouth = { step, values: values.map((v) => Math.round(Math.min(1, v / ref) * 1000) / 1000) };
  const visemes: [number, string, number][] = [];
  for (const syl of syllables) {
    visemes.push([Math.max(0, syl.start - 0.05), syl.consonant, 0.8]);
    visemes.push([syl.start + 0.04, syl.vowel, 1]);
    visemes.push([syl.end + 0.02, 'sil', 1]);
  }
  return { rate, pcm, duration, syllables, visemes, mouth, onsets };
}
