/**
 * Procedural skin and eye textures. The skin map is painted in the canonical face's UV space
 * (which is close to a frontal projection), so features can be placed by landmark: lips inside
 * the lip contour, brows hair by hair between the brow landmarks (brows.ts), redness around
 * cheeks and nose, beard shadow over the lower face. Low-frequency mottling and fine pore noise
 * stop the skin reading as plastic.
 */
import { loadCanonicalMesh } from './canonical.js';
import * as L from './landmarks.js';
import { faceUvToTex } from './mesh.js';
import { encodeJpeg, encodePng, fbm, hexToRgb, makeNoise } from './image.js';
import { clamp, mix, rng, smoothstep } from './vec.js';
import { paintBrow, type BrowShape } from './brows.js';
import type { FaceLook } from '../../catalog/faces.js';

type P2 = [number, number];

function lmUv(i: number): P2 {
  const c = loadCanonicalMesh();
  return faceUvToTex(c.uvs[i * 2], c.uvs[i * 2 + 1]);
}

function inPolygon(p: P2, poly: P2[]): boolean {
  let inside = false;
  for (let i = 0, j = poly.length - 1; i < poly.length; j = i++) {
    const [xi, yi] = poly[i];
    const [xj, yj] = poly[j];
    if (yi > p[1] !== yj > p[1] && p[0] < ((xj - xi) * (p[1] - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

/** A polyline with precomputed segment lengths, for repeated distance queries. */
interface Polyline {
  pts: P2[];
  lens: number[];
  total: number;
}
function polyline(pts: P2[]): Polyline {
  const lens: number[] = [];
  for (let i = 0; i < pts.length - 1; i++) lens.push(Math.hypot(pts[i + 1][0] - pts[i][0], pts[i + 1][1] - pts[i][1]));
  return { pts, lens, total: lens.reduce((a, b) => a + b, 0) };
}

/** Distance from p to a polyline, and the arc-length fraction of the nearest point. */
function polylineDist(px: number, py: number, line: Polyline): { d: number; t: number } {
  let best = Infinity;
  let bestT = 0;
  let acc = 0;
  const pts = line.pts;
  for (let i = 0; i < pts.length - 1; i++) {
    const ax = pts[i][0];
    const ay = pts[i][1];
    const dx = pts[i + 1][0] - ax;
    const dy = pts[i + 1][1] - ay;
    const s = clamp(((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy || 1));
    const d = Math.hypot(px - ax - dx * s, py - ay - dy * s);
    if (d < best) {
      best = d;
      bestT = (acc + s * line.lens[i]) / line.total;
    }
    acc += line.lens[i];
  }
  return { d: best, t: bestT };
}

export interface SkinTexture {
  jpeg: Uint8Array;
  size: number;
  /** Tangent-space normal map (pores, fine mottling, lip lines), same UV layout. */
  normal: Uint8Array;
  /** glTF metallic-roughness map: G = roughness (T-zone and lips a little glossier), B = 0. */
  roughness: Uint8Array;
}

export function skinTexture(look: FaceLook, male: boolean, seed: number, size = 1024): SkinTexture {
  const skin = hexToRgb(look.skin);
  const lip = hexToRgb(look.lips);
  const hair = hexToRgb(look.hair);
  const dark = (skin[0] + skin[1] + skin[2]) / 3 < 0.45;
  // Brows are darker than a light or grey head of hair.
  const browCol: [number, number, number] = hair.map((c, i) => Math.min(c, skin[i] * 0.45) * 0.9 + c * 0.1) as [number, number, number];
  const noise = makeNoise(seed);
  const noise2 = makeNoise(seed + 7);
  const fine = makeNoise(seed + 13);

  const lipPoly: P2[] = [...L.LIP_OUTER_UPPER, ...[...L.LIP_OUTER_LOWER].reverse()].map(lmUv);
  const innerLine = polyline(L.LIP_INNER_UPPER.map(lmUv));
  const lipOutline = polyline([...lipPoly, lipPoly[0]]);
  // Brow edges from the head (inner end) to the tail: the landmark lists run tail to head.
  const browShapes: BrowShape[] = [
    { upper: [70, 63, 105, 66, 107], lower: [46, 53, 52, 65, 55] },
    { upper: [300, 293, 334, 296, 336], lower: [276, 283, 282, 295, 285] },
  ].map((b) => ({ upper: b.upper.map(lmUv).reverse(), lower: b.lower.map(lmUv).reverse() }));
  const browWidth = male ? 1.1 : 0.85;
  const brows = browShapes.map((b) => ({ mid: polyline(b.upper.map((u, i) => [(u[0] + b.lower[i][0]) / 2, (u[1] + b.lower[i][1]) / 2] as P2)), half: b.upper.map((u, i) => Math.hypot(u[0] - b.lower[i][0], u[1] - b.lower[i][1]) / 2) }));
  const cheeks = [lmUv(205), lmUv(425)];
  const noseTip = lmUv(L.NOSE_TIP);
  const eyes = [lmUv(159), lmUv(386)].map((u, i) => [u[0], u[1] + 0.006 * (i * 0 + 1)] as P2);
  const noseBaseV = lmUv(2)[1];
  const chinV = lmUv(L.CHIN)[1];
  const mouthCorners = [lmUv(61), lmUv(291)];

  const px = new Uint8Array(size * size * 4);
  const height = new Float32Array(size * size);
  const RS = size / 4; // roughness map resolution
  const rough = new Uint8Array(RS * RS * 4);
  const foreheadV = lmUv(10)[1];
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const p: P2 = [(x + 0.5) / size, (y + 0.5) / size];
      const m = fbm(noise, p[0] * 14, p[1] * 14, 4) - 0.5;
      // relief: pores are small pits (sharper than the noise's bumps), over a faint mottled swell
      const pit = fine(p[0] * 420, p[1] * 420);
      // (ears and neck sample a thin strip at u ≈ 0.06, where pits would smear into stripes: flat there)
      let h = (-0.5 * smoothstep(0.4, 0.12, pit) + 0.06 * (fine(p[0] * 170 + 3.1, p[1] * 170) - 0.5) + 0.1 * m) * smoothstep(0.09, 0.14, p[0]);
      const blotch = fbm(noise2, p[0] * 30, p[1] * 30, 3) - 0.5;
      const pore = fine(p[0] * 420, p[1] * 420) - 0.5;
      let r = skin[0];
      let g = skin[1];
      let b = skin[2];
      const bright = 1 + m * 0.1 + pore * 0.05;
      r *= bright;
      g *= bright * (1 - blotch * 0.05);
      b *= bright * (1 - blotch * 0.06);

      // Redness: cheeks, nose tip, around the mouth; weaker on dark skin where it reads as muddy.
      const cheekD = Math.min(Math.hypot(p[0] - cheeks[0][0], (p[1] - cheeks[0][1]) * 1.2), Math.hypot(p[0] - cheeks[1][0], (p[1] - cheeks[1][1]) * 1.2));
      const red = (0.22 * smoothstep(0.075, 0.0, cheekD) + 0.2 * smoothstep(0.035, 0.0, Math.hypot(p[0] - noseTip[0], p[1] - noseTip[1])) + 0.06 * (0.5 + blotch)) * (dark ? 0.35 : 1);
      g *= 1 - red * 0.35;
      b *= 1 - red * 0.3;
      r *= 1 + red * 0.04;

      // Slight darkening around the eyes (lids and under-eye), which gives depth.
      for (const e of eyes) {
        const d = Math.hypot((p[0] - e[0]) * 0.8, (p[1] - e[1]) * 1.1);
        const s = smoothstep(0.06, 0.025, d) * 0.1;
        r *= 1 - s;
        g *= 1 - s * 1.15;
        b *= 1 - s * 0.9;
      }

      // Beard shadow / stubble over the lower face.
      if (look.beard) {
        const inFace = p[0] > 0.25 && p[0] < 0.75 && p[1] > 0.25 && p[1] < 0.75;
        const below = smoothstep(noseBaseV + 0.005, noseBaseV + 0.05, p[1]) * (0.75 + 0.25 * fbm(noise2, p[0] * 40, p[1] * 40, 2));
        const side = Math.abs(p[0] - 0.5);
        const jaw = smoothstep(0.2, 0.17, side) * (inFace ? 1 : 0) * smoothstep(chinV + 0.02, chinV - 0.01, p[1]);
        const cheekUp = smoothstep(0.14, 0.2, side) * smoothstep(noseBaseV - 0.03, noseBaseV + 0.03, p[1]);
        const mask = Math.max(below, cheekUp) * jaw;
        const hairs = fine(p[0] * 700, p[1] * 700);
        const amount = look.beard === 'short' ? mask * (0.55 + 0.4 * hairs) : mask * 0.28 * (0.3 + 0.7 * hairs);
        r = mix(r, hair[0] * 0.9, amount);
        g = mix(g, hair[1] * 0.9, amount);
        b = mix(b, hair[2] * 0.9, amount);
      }

      // Lips: colour inside the outer contour with a soft edge, darker towards the inner line.
      if (p[0] > 0.3 && p[0] < 0.7 && p[1] > 0.55 && p[1] < 0.65) {
        const edge = polylineDist(p[0], p[1], lipOutline).d;
        const inside = inPolygon(p, lipPoly);
        const t = inside ? smoothstep(0, 0.006, edge) : 0;
        const cornerFade = Math.min(Math.hypot(p[0] - mouthCorners[0][0], p[1] - mouthCorners[0][1]), Math.hypot(p[0] - mouthCorners[1][0], p[1] - mouthCorners[1][1]));
        const lt = t * smoothstep(0.0, 0.02, cornerFade);
        const inner = smoothstep(0.012, 0.0, polylineDist(p[0], p[1], innerLine).d);
        const lines = 1 - 0.05 * Math.abs(Math.sin(p[0] * 900 + noise(p[0] * 60, p[1] * 20) * 4));
        h = mix(h, -0.35 * (1 - lines) / 0.05, lt); // vertical lip creases instead of pores
        r = mix(r, lip[0] * lines * (1 - inner * 0.25), lt);
        g = mix(g, lip[1] * lines * (1 - inner * 0.3), lt);
        b = mix(b, lip[2] * lines * (1 - inner * 0.3), lt);
      }

      // Brows: a faint shadow of the skin where the hairs grow (the hairs are painted after).
      for (const br of brows) {
        if (Math.abs(p[1] - br.mid.pts[2][1]) > 0.05) continue;
        const { d, t } = polylineDist(p[0], p[1], br.mid);
        const i = Math.min(br.half.length - 2, Math.floor(t * (br.half.length - 1)));
        const hw = mix(br.half[i], br.half[i + 1], t * (br.half.length - 1) - i) * browWidth * (1 - 0.6 * smoothstep(0.55, 1, t));
        const a = smoothstep(hw * 1.1, hw * 0.3, d) * 0.3;
        if (a <= 0) continue;
        r = mix(r, browCol[0], a);
        g = mix(g, browCol[1], a);
        b = mix(b, browCol[2], a);
      }

      const o = (y * size + x) * 4;
      px[o] = clamp(r) * 255;
      px[o + 1] = clamp(g) * 255;
      px[o + 2] = clamp(b) * 255;
      px[o + 3] = 255;
      height[y * size + x] = h;
      if (x % 4 === 0 && y % 4 === 0) {
        // Roughness: oilier T-zone (forehead centre, nose) and moist lips are glossier, cheeks and
        // the jaw a little rougher; stubble is matte.
        const tZone = Math.max(smoothstep(0.06, 0.0, Math.abs(p[0] - 0.5)) * smoothstep(noseBaseV + 0.01, foreheadV, p[1]) * smoothstep(foreheadV - 0.05, foreheadV + 0.02, p[1]), smoothstep(0.04, 0.0, Math.hypot(p[0] - noseTip[0], p[1] - noseTip[1])));
        const lipIn = p[0] > 0.3 && p[0] < 0.7 && p[1] > 0.55 && p[1] < 0.65 && inPolygon(p, lipPoly) ? 1 : 0;
        const cheek = smoothstep(0.09, 0.02, cheekD);
        const ro = clamp(0.6 - 0.12 * tZone - 0.2 * lipIn + 0.06 * cheek + 0.08 * m + (look.beard ? 0.1 * (p[1] > noseBaseV ? 1 : 0) : 0), 0.3, 0.85);
        const q = ((y / 4) * RS + x / 4) * 4;
        rough[q] = 255;
        rough[q + 1] = ro * 255;
        rough[q + 2] = 0;
        rough[q + 3] = 255;
      }
    }
  }
  browShapes.forEach((shape, i) => paintBrow(px, height, size, shape, { color: browCol, hairs: male ? 760 : 520, width: browWidth, seed: seed * 31 + i }));

  // Normals from the relief by central differences (the relief's units are arbitrary; the
  // material's normal scale sets the strength). +y in the map is up the texture (-v), as glTF wants.
  const nm = new Uint8Array(size * size * 4);
  const k = 0.32;
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const hx = height[y * size + Math.min(size - 1, x + 1)] - height[y * size + Math.max(0, x - 1)];
      const hy = height[Math.max(0, y - 1) * size + x] - height[Math.min(size - 1, y + 1) * size + x];
      const nx = -hx * k;
      const ny = -hy * k;
      const l = Math.hypot(nx, ny, 1);
      const o = (y * size + x) * 4;
      nm[o] = (nx / l * 0.5 + 0.5) * 255;
      nm[o + 1] = (ny / l * 0.5 + 0.5) * 255;
      nm[o + 2] = (1 / l * 0.5 + 0.5) * 255;
      nm[o + 3] = 255;
    }
  }
  return { jpeg: encodeJpeg(px, size, size, 82), size, normal: encodeJpeg(nm, size, size, 70), roughness: encodeJpeg(rough, RS, RS, 85) };
}

/**
 * Eye texture, mapped as sqrt(polar angle) around the eye's forward axis (see parts.ts), so the
 * iris gets most of the texels: sclera with faint veins, iris with radial fibres and a dark limbal
 * ring, and the pupil.
 */
export const IRIS_UV_RADIUS = 0.5 * Math.sqrt(0.5 / Math.PI); // iris half-angle ~0.5 rad
export function eyeTexture(irisHex: string, seed: number, size = 256): Uint8Array {
  const iris = hexToRgb(irisHex);
  const noise = makeNoise(seed);
  const px = new Uint8Array(size * size * 4);
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const u = (x + 0.5) / size - 0.5;
      const v = (y + 0.5) / size - 0.5;
      const rr = Math.hypot(u, v) / IRIS_UV_RADIUS; // 1 at the limbus
      const ang = Math.atan2(v, u);
      // Soft shading baked in around the visible opening: the upper lid shadows the top of the
      // eye, the corners are darker and pinker (the eye turns by at most ~20°, so it stays put).
      const hyp = Math.hypot(u, v) || 1;
      const upness = -v / hyp;
      const side = Math.abs(u) / hyp;
      const lidShadow = 0.42 * smoothstep(-0.1, 0.9, upness) * smoothstep(0.6, 1.6, rr);
      let c: [number, number, number];
      if (rr > 1) {
        const vein = smoothstep(0.8, 0.95, noise(ang * 8, rr * 3)) * smoothstep(1.4, 2.6, rr);
        const corner = smoothstep(1.6, 2.8, rr) * side;
        const s = (0.86 - 0.1 * smoothstep(1.2, 3, rr)) * (1 - lidShadow) * (1 - 0.25 * corner);
        c = [s * (1 + 0.04 * corner), s * (0.95 - vein * 0.2 - 0.06 * corner), s * (0.92 - vein * 0.25 - 0.06 * corner)];
        const limb = smoothstep(1.15, 1.0, rr);
        c = c.map((k, i) => mix(k, iris[i] * 0.4, limb * 0.6)) as [number, number, number];
      } else {
        const fib = noise(ang * 40 / Math.PI, rr * 2) * 0.5 + noise(ang * 90 / Math.PI, rr * 5) * 0.5;
        const ring = 0.55 + 0.45 * smoothstep(1.0, 0.75, rr); // darker limbal ring
        const collar = 1 + 0.35 * smoothstep(0.5, 0.38, rr) * smoothstep(0.28, 0.38, rr); // lighter collarette
        const k = ring * collar * (0.7 + 0.6 * fib) * (1 - lidShadow * 0.8);
        c = [iris[0] * k, iris[1] * k, iris[2] * k];
        const pupil = smoothstep(0.36, 0.32, rr);
        c = c.map((q) => mix(q, 0.015, pupil)) as [number, number, number];
      }
      const o = (y * size + x) * 4;
      px[o] = clamp(c[0]) * 255;
      px[o + 1] = clamp(c[1]) * 255;
      px[o + 2] = clamp(c[2]) * 255;
      px[o + 3] = 255;
    }
  }
  return encodeJpeg(px, size, size, 90);
}

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
      // Tips: each strand ends at its own length; the shell stays opaque above 0.8.
      const tip = 0.8 + 0.2 * noise(uu * 1.7, 0.5);
      const alpha = v < 0.75 ? 1 : smoothstep(tip, tip - 0.05, v) * (0.6 + 0.4 * strand);
      const o = (y * w + x) * 2;
      px[o] = clamp(lum) * 255;
      px[o + 1] = clamp(alpha) * 255;
    }
  }
  return encodePng(px, w, h, 2);
}

/**
 * Eyelash strands, grey+alpha, drawn with alpha blending: individual tapered, curved hairs rooted
 * at v = 0 (the lid margin) and ending at v → 1. The top half (v < 0.5 of the image) is the dense
 * upper fringe, the bottom half a sparse, short lower row. u tiles along the lid.
 */
export function lashTexture(seed: number, w = 256, h = 128): Uint8Array {
  const rand = rng(seed ^ 0x5a17);
  const px = new Uint8Array(w * h * 2);
  const half = h / 2;
  for (let i = 0; i < w * h; i++) px[i * 2] = 20; // very dark brown-grey, tinted by the material
  const draw = (count: number, y0: number, lenMin: number, lenMax: number, width: number, opacity: number) => {
    for (let s = 0; s < count; s++) {
      const u0 = rand() * w;
      const L = (lenMin + rand() * (lenMax - lenMin)) * half;
      const bend = (rand() - 0.5) * 10 + 4; // sideways sweep (px) towards the tip
      const a0 = opacity * (0.7 + 0.3 * rand());
      for (let k = 0; k <= L * 3; k++) {
        const t = k / (L * 3);
        const cx = u0 + bend * t * t;
        const cy = y0 + t * L;
        const r = width * (1 - 0.85 * t); // tapers to a point
        for (let dx = Math.floor(cx - r - 1); dx <= Math.ceil(cx + r + 1); dx++) {
          const cov = clamp(r + 0.5 - Math.abs(dx + 0.5 - cx)) * a0 * (1 - 0.4 * t);
          if (cov <= 0) continue;
          const xx = ((dx % w) + w) % w;
          const yy = Math.min(h - 1, Math.floor(cy));
          const o = (yy * w + xx) * 2 + 1;
          px[o] = Math.max(px[o], Math.round(cov * 255));
        }
      }
    }
  };
  draw(110, 0, 0.35, 0.9, 1.0, 1); // upper lashes: dense roots make the thin dark lash line
  draw(60, 0, 0.12, 0.3, 1.2, 1);
  draw(16, half, 0.35, 0.9, 0.7, 0.55); // lower lashes: few, fine, faint
  return encodePng(px, w, h, 2);
}
