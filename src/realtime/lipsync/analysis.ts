/**
 * Per-10-ms audio features of a piece of speech and the lip-sync track made from them:
 * mouth openness from loudness, and visemes from the text when it is known (spread over the voiced
 * frames) or from spectral features when only audio is known.
 */
import { VISEME_INDEX, visemeWeight, type Viseme } from './visemes.js';
import { textVisemes, wordVisemes, splitWords } from './text-visemes.js';

export const FRAME_SECONDS = 0.01;
const SIL = VISEME_INDEX.sil;

export interface PieceTrack {
  /** Mouth openness per 10 ms frame, 0..255. */
  mouth: Uint8Array;
  /** Viseme index per frame (VISEMES order). */
  viseme: Uint8Array;
  /** Viseme weight per frame, 0..255. */
  weight: Uint8Array;
}

export interface WordTiming {
  word: string;
  start: number;
  end: number;
}

let voicedScratch = new Uint8Array(256);

const FLOOR_DB = -52;
const RANGE_DB = 34;

/**
 * One pass over the samples: RMS, zero-crossing rate and a high-band share (first difference
 * energy versus signal energy) per frame. No allocation per sample; the hot path of the relay.
 */
export function analysePiece(pcm: Int16Array, sampleRate: number, text?: string, words?: WordTiming[]): PieceTrack {
  const frameLength = Math.max(1, Math.round(sampleRate * FRAME_SECONDS));
  const frames = Math.ceil(pcm.length / frameLength);
  // One ArrayBuffer for the three tracks (each costs the collector far more than its bytes), and
  // the voiced flags in scratch memory reused piece after piece.
  const tracks = new Uint8Array(frames * 3);
  const mouth = tracks.subarray(0, frames);
  const viseme = tracks.subarray(frames, 2 * frames);
  const weight = tracks.subarray(2 * frames);
  if (voicedScratch.length < frames) voicedScratch = new Uint8Array(frames);
  const voiced = voicedScratch.subarray(0, frames);
  voiced.fill(0);

  for (let f = 0; f < frames; f++) {
    const start = f * frameLength;
    const end = Math.min(pcm.length, start + frameLength);
    let energy = 0;
    let diffEnergy = 0;
    let crossings = 0;
    let previous = start > 0 ? pcm[start - 1] : 0;
    for (let i = start; i < end; i++) {
      const x = pcm[i];
      energy += x * x;
      const d = x - previous;
      diffEnergy += d * d;
      if (x >= 0 !== previous >= 0) crossings++;
      previous = x;
    }
    const n = end - start;
    const rms = Math.sqrt(energy / n) / 32768;
    const db = rms > 0 ? 20 * Math.log10(rms) : -120;
    const open = Math.min(1, Math.max(0, (db - FLOOR_DB) / RANGE_DB));
    const crossingsPerSecond = (crossings / n) * sampleRate;
    // Share of energy in the upper spectrum: first difference boosts high frequencies.
    const highShare = energy > 0 ? diffEnergy / (4 * energy) : 0;

    if (open < 0.08) {
      viseme[f] = SIL;
      weight[f] = 0;
      mouth[f] = 0;
      continue;
    }
    voiced[f] = 1;
    let v: Viseme;
    if (crossingsPerSecond > 3500 && highShare > 0.35) v = crossingsPerSecond > 6000 ? 'SS' : 'CH';
    else if (crossingsPerSecond > 2600 && highShare > 0.25) v = 'FF';
    else if (crossingsPerSecond < 450) v = open > 0.5 ? 'O' : 'U';
    else if (crossingsPerSecond < 1100) v = 'aa';
    else if (crossingsPerSecond < 1800) v = 'E';
    else v = 'I';
    viseme[f] = VISEME_INDEX[v];
    weight[f] = Math.round(Math.min(1, 0.35 + open * 0.65) * 255);
    // Fricatives are narrow: the mouth opens less for them than loudness says.
    mouth[f] = Math.round((v === 'SS' || v === 'FF' || v === 'CH' ? open * 0.5 : open) * 255);
  }

  if (words && words.length) spreadWords(words, voiced, viseme, weight, mouth);
  else if (text && text.trim()) spreadText(textVisemes(text), voiced, viseme, weight, mouth, 0, frames);
  return { mouth, viseme, weight };
}

/** Lays a viseme sequence over the voiced frames of [from, to), each viseme for its share of time. */
function spreadText(sequence: Viseme[], voiced: Uint8Array, viseme: Uint8Array, weight: Uint8Array, mouth: Uint8Array, from: number, to: number): void {
  const voicedFrames: number[] = [];
  for (let f = from; f < to; f++) if (voiced[f]) voicedFrames.push(f);
  const spoken = sequence.filter((v) => v !== 'sil');
  if (!voicedFrames.length || !spoken.length) return;
  const total = spoken.reduce((sum, v) => sum + visemeWeight(v), 0);
  let position = 0;
  for (const v of spoken) {
    const share = (visemeWeight(v) / total) * voicedFrames.length;
    const first = Math.floor(position);
    const last = Math.max(first + 1, Math.floor(position + share));
    for (let k = first; k < last && k < voicedFrames.length; k++) {
      const f = voicedFrames[k];
      viseme[f] = VISEME_INDEX[v];
      // Lips close for PP/FF whatever the loudness says.
      if (v === 'PP') mouth[f] = Math.min(mouth[f], 20);
      weight[f] = Math.max(weight[f], 200);
    }
    position += share;
  }
}

function spreadWords(words: WordTiming[], voiced: Uint8Array, viseme: Uint8Array, weight: Uint8Array, mouth: Uint8Array): void {
  for (const word of words) {
    const from = Math.max(0, Math.floor(word.start / FRAME_SECONDS));
    const to = Math.min(voiced.length, Math.ceil(word.end / FRAME_SECONDS));
    if (to > from) spreadText(splitWords(word.word).flatMap(wordVisemes), voiced, viseme, weight, mouth, from, to);
  }
}
