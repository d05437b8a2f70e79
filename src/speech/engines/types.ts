/** What every speech engine implements: one sentence in, audio pieces out as soon as they exist. */

export interface WordTiming {
  word: string;
  /** Seconds. */
  start: number;
  end: number;
}

export interface EngineAudio {
  pcm: Int16Array;
  /** The engine's own rate; the service resamples to the requested one. */
  sampleRate: number;
  /** Word times in seconds from the start of this sentence's audio. */
  words?: WordTiming[];
}

export interface EngineRequest {
  text: string;
  /** The engine's own voice id (already mapped, e.g. a flite voice for a Kokoro id). */
  voiceId: string;
  /** Base ISO 639-1 code. */
  language: string;
  signal: AbortSignal;
}

export interface SpeechEngine {
  /** Engine name as reported by SpeechService.engineFor (e.g. "kokoro", "flite", "elevenlabs"). */
  readonly name: string;
  synthesize(request: EngineRequest): AsyncIterable<EngineAudio>;
  close?(): Promise<void>;
}

/** Spreads words over [start, end] of a piece of audio in proportion to their length: an estimate for engines that give no times. */
export function estimateWordTimings(words: string[], start: number, end: number, weights?: number[]): WordTiming[] {
  if (!words.length || end <= start) return [];
  const w = weights ?? words.map((x) => Math.max(1, x.length));
  const total = w.reduce((a, b) => a + b, 0);
  const out: WordTiming[] = [];
  let t = start;
  for (let i = 0; i < words.length; i++) {
    const d = ((end - start) * w[i]) / total;
    out.push({ word: words[i], start: round(t), end: round(t + d) });
    t += d;
  }
  return out;
}

/** Where speech starts and ends in a piece (first/last sample above a small threshold), in seconds. */
export function voicedSpan(pcm: Int16Array, sampleRate: number, threshold = 0.02): [number, number] {
  const limit = threshold * 32768;
  let first = 0;
  while (first < pcm.length && Math.abs(pcm[first]) < limit) first++;
  let last = pcm.length - 1;
  while (last > first && Math.abs(pcm[last]) < limit) last--;
  if (first >= pcm.length) return [0, pcm.length / sampleRate];
  return [first / sampleRate, (last + 1) / sampleRate];
}

export const round = (x: number) => Math.round(x * 1000) / 1000;
