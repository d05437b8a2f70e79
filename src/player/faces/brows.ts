/**
 * Eyebrows painted hair by hair into the skin texture. A band of colour reads as drawn on; real
 * brows are a few hundred short hairs whose direction changes along the brow: upright at the head
 * (near the nose), fanning outwards and slightly up along the body, where upper and lower hairs
 * meet, and lying almost flat along the tail. Skin shows between them and the edges are ragged.
 */
import { clamp, mix, rng, smoothstep } from './vec.js';

type P2 = [number, number];

export interface BrowShape {
  /** Upper and lower edge of the brow in texture UV, from the head (inner end) to the tail. */
  upper: P2[];
  lower: P2[];
}

export interface BrowStyle {
  color: [number, number, number];
  /** Hairs per brow. */
  hairs: number;
  /** Multiplies the brow's width from the landmarks (fuller or finer brows). */
  width: number;
  seed: number;
}

const lerp2 = (a: P2, b: P2, t: number): P2 => [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t];

/** Point on a landmark polyline at fraction t (by index, the landmarks are roughly evenly spaced). */
function along(pts: P2[], t: number): P2 {
  const x = clamp(t) * (pts.length - 1);
  const i = Math.min(pts.length - 2, Math.floor(x));
  return lerp2(pts[i], pts[i + 1], x - i);
}

/**
 * Deposits one hair: a thin stroke from `root` along `dir`, opaque at the root and fading to the
 * tip, splatted with bilinear weights so it stays smooth at any angle.
 */
function stroke(px: Uint8Array, height: Float32Array, size: number, root: P2, dir: P2, length: number, opacity: number, col: [number, number, number]): void {
  const steps = Math.max(2, Math.ceil(length * size * 2));
  for (let k = 0; k <= steps; k++) {
    const f = k / steps;
    const a = opacity * (1 - 0.75 * f);
    const x = (root[0] + dir[0] * length * f) * size - 0.5;
    const y = (root[1] + dir[1] * length * f) * size - 0.5;
    const x0 = Math.floor(x);
    const y0 = Math.floor(y);
    for (const [dx, dy] of [[0, 0], [1, 0], [0, 1], [1, 1]] as const) {
      const xi = x0 + dx;
      const yi = y0 + dy;
      if (xi < 0 || yi < 0 || xi >= size || yi >= size) continue;
      // Half a pixel's worth per step: two steps a pixel make one full stroke width.
      const w = (dx ? x - x0 : 1 - (x - x0)) * (dy ? y - y0 : 1 - (y - y0)) * a * 0.55;
      const o = (yi * size + xi) * 4;
      for (let c = 0; c < 3; c++) px[o + c] = Math.round(px[o + c] + (col[c] * 255 - px[o + c]) * Math.min(1, w));
      height[yi * size + xi] += w * 0.6;
    }
  }
}

/** Paints one brow's hairs into the texture (`px` RGBA and the relief `height`, both size×size). */
export function paintBrow(px: Uint8Array, height: Float32Array, size: number, shape: BrowShape, style: BrowStyle): void {
  const rand = rng(style.seed);
  const gauss = () => (rand() + rand() + rand() - 1.5) / 1.5;
  for (let n = 0; n < style.hairs; n++) {
    // More hairs in the body than at the sparse head and the thinning tail.
    const t = clamp(0.04 + 0.96 * (rand() * 0.55 + rand() * 0.45));
    const up = along(shape.upper, t);
    const low = along(shape.lower, t);
    const centre = lerp2(low, up, 0.5);
    // The tail narrows to a point; the head is a little narrower than the body.
    const taper = (1 - 0.7 * smoothstep(0.55, 1, t)) * (0.8 + 0.2 * smoothstep(0, 0.2, t)) * style.width;
    const s = clamp(0.5 + gauss() * 0.75, 0, 1); // 0 lower edge, 1 upper edge
    const root = lerp2(centre, s < 0.5 ? low : up, Math.abs(s - 0.5) * 2 * taper);
    // Local frame: `tangent` towards the tail, `normal` up the face (towards the upper edge).
    const ahead = along(shape.lower, Math.min(1, t + 0.05));
    const behind = along(shape.lower, Math.max(0, t - 0.05));
    let tx = ahead[0] - behind[0];
    let ty = ahead[1] - behind[1];
    const tl = Math.hypot(tx, ty) || 1;
    tx /= tl;
    ty /= tl;
    let nx = -ty;
    let ny = tx;
    if (nx * (up[0] - low[0]) + ny * (up[1] - low[1]) < 0) (nx = -nx), (ny = -ny);
    // Angle above the tangent: upright at the head, fanning up along the lower body, lying down
    // from the upper edge (the two rows meet in the middle), nearly flat in the tail.
    const head = smoothstep(0.25, 0.05, t);
    const body = s < 0.5 ? 0.45 : -0.12;
    const angle = head * 1.25 + (1 - head) * mix(body, 0.08, smoothstep(0.6, 0.95, t)) + gauss() * 0.22;
    const dir: P2 = [tx * Math.cos(angle) + nx * Math.sin(angle), ty * Math.cos(angle) + ny * Math.sin(angle)];
    const width = Math.hypot(up[0] - low[0], up[1] - low[1]);
    const length = width * (0.65 + 0.4 * rand()) * (1 - 0.3 * head);
    const opacity = (0.55 + 0.4 * rand()) * (1 - 0.35 * head) * (1 - 0.3 * smoothstep(0.7, 1, t));
    stroke(px, height, size, root, dir, length, opacity, style.color);
  }
}
