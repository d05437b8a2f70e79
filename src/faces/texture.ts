/**
 * The strand texture the hair shells and cards share (grey+alpha, tinted by the material).
 */
import { encodePng, makeNoise } from './image.js';
import { clamp, smoothstep } from './vec.js';

/**
 * Grey+alpha strand texture for hair cards and shells, tinted by the material colour: streaks
 * along v (the growth direction), darker roots, and ragged alpha-tested tips at v → 1.
 */
export function hairTexture(seed: number, curly: boolean, w = 256, h = 256): Uint8Array {
  const noise = makeNoise(seed, 0);
  const px = new Uint8Array(w * h * 2);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const u = x / w;
      const v = y / h;
      const wave = curly ? Math.sin(v * 40 + noise(u * 8, 0) * 6) * 0.01 : Math.sin(v * 6) * 0.004;
      const uu = (u + wave) * w;
      const strand = noise(uu * 0.9, v * 3) * 0.6 + noise(uu * 2.3, v * 6) * 0.4;
      const lum = 0.55 + 0.5 * strand - 0.15 * smoothstep(0.15, 0, v);
      // Each strand ends at its own length between 0.76 and 1, thinning over its last stretch,
      // so the hair's density fades at the hairline and the ends instead of stopping in a line.
      const tip = 0.78 + 0.22 * noise(uu * 1.7, 0.5);
      const alpha = v < 0.75 ? 1 : smoothstep(tip, tip - 0.1, v) * (0.6 + 0.4 * strand);
      const o = (y * w + x) * 2;
      px[o] = clamp(lum) * 255;
      px[o + 1] = clamp(alpha) * 255;
    }
  }
  return encodePng(px, w, h, 2);
}
