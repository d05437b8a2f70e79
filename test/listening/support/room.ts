/**
 * An echo path as through a reverberant room: the direct sound at `gain`, then 180 ms of
 * exponentially decaying reflections (deterministic noise, time constant 40 ms), which together
 * carry more energy than the direct sound. Harder for an echo canceller than a delayed copy.
 */
export function room(gain: number): Float32Array {
  const taps = new Float32Array(16 * 180);
  let seed = 3;
  taps[0] = gain;
  for (let i = 16; i < taps.length; i++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    taps[i] = gain * 0.25 * ((seed / 0x7fffffff) * 2 - 1) * Math.exp(-i / (16 * 40));
  }
  return taps;
}

/** Adds `pcm` through `taps`, `delayMs` late, into `out`, on the samples from `from` to `to`. */
export function addEcho(out: Float32Array, pcm: Int16Array, taps: Float32Array, delayMs: number, from = 0, to = out.length): void {
  const delay = Math.round(delayMs * 16);
  const nonzero = Array.from(taps.keys()).filter((k) => taps[k] !== 0);
  for (let n = 0; n < pcm.length; n++) {
    if (!pcm[n]) continue;
    for (const k of nonzero) {
      const t = n + k + delay;
      if (t >= from && t < to) out[t] += pcm[n] * taps[k];
    }
  }
}

export function toPcm(samples: Float32Array): Int16Array {
  return Int16Array.from(samples, (s) => Math.max(-32768, Math.min(32767, Math.round(s))));
}
