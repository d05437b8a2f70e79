/**
 * Textures painted in the FaceKit's UV layout. Each part's triangles are rasterised into texture
 * space carrying the head's own 3D positions, so every texel knows where on this face it lies; the
 * painters then work in 3D: lips from the lip landmarks, brows hair by hair along the brow
 * landmarks, redness around nose and cheeks, stubble and beard below the cheekbones, the mouth
 * socket darkening with depth. Pores and blotches are noise in texture space.
 */
import { encodeJpeg, encodePng, hexToRgb, makeNoise, srgbToLinear } from '../image.js';
import { clamp, mix, smoothstep } from '../vec.js';

export interface Raster {
  width: number;
  height: number;
  /** Per texel: 3D position (cm), or NaN where no triangle covers it. */
  pos: Float32Array;
  /** Per texel: one interpolated scalar attribute (optional use). */
  attr: Float32Array;
  /** Per texel: the index of the triangle group (part) that covered it, -1 none. */
  group: Int8Array;
}

export interface RasterTri {
  uv: [number, number][];
  p: [number, number, number][];
  a?: [number, number, number];
  group: number;
}

/** Rasterises triangles given in texture coordinates (0..1, v up) into a position map, then grows it a few texels so seams do not bleed. */
export function rasterise(tris: RasterTri[], width: number, height: number, grow = 3): Raster {
  const pos = new Float32Array(width * height * 3).fill(NaN);
  const attr = new Float32Array(width * height);
  const group = new Int8Array(width * height).fill(-1);
  for (const t of tris) {
    const xs = t.uv.map((q) => q[0] * width - 0.5);
    const ys = t.uv.map((q) => (1 - q[1]) * height - 0.5);
    const x0 = Math.max(0, Math.floor(Math.min(...xs)));
    const x1 = Math.min(width - 1, Math.ceil(Math.max(...xs)));
    const y0 = Math.max(0, Math.floor(Math.min(...ys)));
    const y1 = Math.min(height - 1, Math.ceil(Math.max(...ys)));
    const det = (xs[1] - xs[0]) * (ys[2] - ys[0]) - (xs[2] - xs[0]) * (ys[1] - ys[0]);
    if (Math.abs(det) < 1e-12) continue;
    for (let y = y0; y <= y1; y++) {
      for (let x = x0; x <= x1; x++) {
        const b1 = ((x - xs[0]) * (ys[2] - ys[0]) - (xs[2] - xs[0]) * (y - ys[0])) / det;
        const b2 = ((xs[1] - xs[0]) * (y - ys[0]) - (x - xs[0]) * (ys[1] - ys[0])) / det;
        const b0 = 1 - b1 - b2;
        if (b0 < -0.02 || b1 < -0.02 || b2 < -0.02) continue;
        const o = y * width + x;
        for (let k = 0; k < 3; k++) pos[o * 3 + k] = t.p[0][k] * b0 + t.p[1][k] * b1 + t.p[2][k] * b2;
        if (t.a) attr[o] = t.a[0] * b0 + t.a[1] * b1 + t.a[2] * b2;
        group[o] = t.group;
      }
    }
  }
  for (let g = 0; g < grow; g++) {
    const src = Float32Array.from(pos);
    const srcG = Int8Array.from(group);
    const srcA = Float32Array.from(attr);
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const o = y * width + x;
        if (srcG[o] >= 0) continue;
        for (const [dx, dy] of [
          [1, 0],
          [-1, 0],
          [0, 1],
          [0, -1],
        ]) {
          const xx = x + dx;
          const yy = y + dy;
          if (xx < 0 || yy < 0 || xx >= width || yy >= height) continue;
          const n = yy * width + xx;
          if (srcG[n] < 0) continue;
          for (let k = 0; k < 3; k++) pos[o * 3 + k] = src[n * 3 + k];
          attr[o] = srcA[n];
          group[o] = srcG[n];
          break;
        }
      }
    }
  }
  return { width, height, pos, attr, group };
}

const hash2 = (x: number, y: number, s: number): number => {
  let h = (Math.imul(x | 0, 374761393) + Math.imul(y | 0, 668265263) + Math.imul(s, 1442695041)) | 0;
  h = Math.imul(h ^ (h >>> 13), 1274126177);
  return ((h ^ (h >>> 16)) >>> 0) / 4294967296;
};

type P2 = [number, number];
/** A polyline with its segment lengths and bounding box worked out once (the painters ask per texel). */
interface Polyline {
  pts: P2[];
  lens: number[];
  total: number;
  minX: number;
  maxX: number;
  minY: number;
  maxY: number;
}
function polyline(pts: P2[]): Polyline {
  const lens = pts.slice(1).map((p, i) => Math.hypot(p[0] - pts[i][0], p[1] - pts[i][1]));
  const xs = pts.map((p) => p[0]);
  const ys = pts.map((p) => p[1]);
  return { pts, lens, total: lens.reduce((a, b) => a + b, 0), minX: Math.min(...xs), maxX: Math.max(...xs), minY: Math.min(...ys), maxY: Math.max(...ys) };
}
/** Whether the point is certainly farther than `d` from the polyline (outside its box grown by d). */
const beyond = (px: number, py: number, line: Polyline, d: number) => px < line.minX - d || px > line.maxX + d || py < line.minY - d || py > line.maxY + d;
function distToPolyline(px: number, py: number, line: Polyline): { d: number; t: number } {
  const { pts, lens, total } = line;
  let best = Infinity;
  let bestT = 0;
  let acc = 0;
  for (let i = 0; i < pts.length - 1; i++) {
    const [ax, ay] = pts[i];
    const [bx, by] = pts[i + 1];
    const dx = bx - ax;
    const dy = by - ay;
    const l2 = dx * dx + dy * dy || 1;
    const u = clamp(((px - ax) * dx + (py - ay) * dy) / l2);
    const d = Math.hypot(px - ax - u * dx, py - ay - u * dy);
    if (d < best) {
      best = d;
      bestT = (acc + u * lens[i]) / total;
    }
    acc += lens[i];
  }
  return { d: best, t: bestT };
}

function insidePolygon(px: number, py: number, poly: P2[]): boolean {
  let inside = false;
  for (let i = 0, j = poly.length - 1; i < poly.length; j = i++) {
    const [xi, yi] = poly[i];
    const [xj, yj] = poly[j];
    if (yi > py !== yj > py && px < ((xj - xi) * (py - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

export interface SkinLook {
  skin: string;
  lips: string;
  hair: string;
  /** 0 (twenties) .. 1 (sixties and over). */
  age: number;
  male: boolean;
  beard: 'stubble' | 'short' | 'full' | null;
  /** 0..1: how dark and dense the brows are. */
  brows: number;
}

export interface SkinMaps {
  color: Uint8Array;
  normal: Uint8Array;
  roughness: Uint8Array;
}

/**
 * Paints the skin atlas (face tile left, head tile right). `groups`: 0 face/head skin, 1 mouth
 * socket, 2 eye sockets. `lm` are this face's 68 landmarks (cm); `mouthZ` the lips' front plane.
 */
export function paintSkin(r: Raster, look: SkinLook, lm: [number, number, number][], seed: number): SkinMaps {
  const { width: W, height: H } = r;
  const base = hexToRgb(look.skin).map(srgbToLinear);
  const lip = hexToRgb(look.lips).map(srgbToLinear);
  const hair = hexToRgb(look.hair).map(srgbToLinear);
  const noise = makeNoise(seed);
  const noise2 = makeNoise(seed + 7);
  const xy = (i: number): P2 => [lm[i][0], lm[i][1]];
  const outerLip = Array.from({ length: 12 }, (_, k) => xy(48 + k));
  const innerLip = Array.from({ length: 8 }, (_, k) => xy(60 + k));
  const browR = Array.from({ length: 5 }, (_, k) => xy(17 + k));
  const browL = Array.from({ length: 5 }, (_, k) => xy(22 + k));
  // Worked out once: these were rebuilt for every texel, most of a face's build time.
  const outerLipLoop = polyline([...outerLip, outerLip[0]]);
  const browLines = [
    [polyline(browR), -1],
    [polyline(browL), 1],
  ] as const;
  const lipZ = Math.min(lm[48][2], lm[54][2]) - 0.6;
  const noseTip = lm[30];
  const chin = lm[8];
  const eyeY = (lm[36][1] + lm[45][1]) / 2;
  const mouthY = (lm[51][1] + lm[57][1]) / 2;
  const noseY = lm[33][1];
  const cheekL: [number, number, number] = [lm[45][0] - 0.6, (eyeY + noseY) / 2 - 0.6, lm[45][2]];
  const cheekR: [number, number, number] = [lm[36][0] + 0.6, (eyeY + noseY) / 2 - 0.6, lm[36][2]];
  const color = new Uint8Array(W * H * 4);
  const height = new Float32Array(W * H);
  const rough = new Uint8Array(W * H * 4);
  const toS = (c: number) => Math.round(clamp(c <= 0.0031308 ? c * 12.92 : 1.055 * c ** (1 / 2.4) - 0.055) * 255);
  const dark = (base[0] + base[1] + base[2]) / 3 < 0.12;
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const o = y * W + x;
      const g = r.group[o];
      const px = r.pos[o * 3];
      const py = r.pos[o * 3 + 1];
      const pz = r.pos[o * 3 + 2];
      let c = [base[0], base[1], base[2]];
      let ro = 0.55;
      let h = 0;
      if (g >= 0 && !Number.isNaN(px)) {
        const u = x / W;
        const v = y / H;
        // Blotches and tone variation: low-frequency in 3D-ish texture space.
        const blotch = (noise(u * 40, v * 20) - 0.5) * 0.12 + (noise2(u * 120, v * 60) - 0.5) * 0.06 * (0.6 + look.age);
        c = c.map((k, i) => k * (1 + blotch * (i === 0 ? 0.6 : 1))) as number[];
        const front = smoothstep(lipZ - 4, lipZ + 1, pz);
        // Redness: nose, cheeks, ears' rims and lids (more in fair skin).
        const redAmt = dark ? 0.5 : 1;
        const nose = Math.exp(-(((px - noseTip[0]) ** 2 + ((py - noseTip[1]) * 0.8) ** 2 + ((pz - noseTip[2]) * 0.6) ** 2) / 2.2));
        const cheek =
          Math.max(Math.exp(-(((px - cheekL[0]) ** 2 + (py - cheekL[1]) ** 2) / 9)), Math.exp(-(((px - cheekR[0]) ** 2 + (py - cheekR[1]) ** 2) / 9))) * front;
        const red = (nose * 0.35 + cheek * 0.28) * redAmt;
        c = [c[0] * (1 + red * 0.25), c[1] * (1 - red * 0.22), c[2] * (1 - red * 0.15)];
        // Lips: inside the outer contour (soft edge), a touch darker towards the inner line.
        const inOuter = g !== 1 && pz > lipZ - 2.5 && !beyond(px, py, outerLipLoop, 0) && insidePolygon(px, py, outerLip);
        const lipMask = g === 1 ? 1 : inOuter ? smoothstep(0, 0.18, distToPolyline(px, py, outerLipLoop).d) : 0;
        if (lipMask > 0) {
          const lines = 0.9 + 0.1 * noise(u * 1800, v * 80);
          c = c.map((k, i) => mix(k, lip[i] * lines, lipMask)) as number[];
          ro = mix(ro, 0.38, lipMask);
          h += lipMask * (lines - 0.9) * 2;
        }
        // Mouth socket: wet, dark red, darker with depth behind the lips.
        if (g === 1) {
          const depth = clamp((lipZ + 0.6 - pz) / 3);
          const k = mix(0.55, 0.04, Math.sqrt(depth));
          c = [lip[0] * 0.8 * k + 0.02 * k, lip[1] * 0.45 * k, lip[2] * 0.5 * k];
          ro = 0.3;
        }
        // Eye sockets (caruncle, inner lids): pinkish, wet.
        if (g === 2) {
          c = [c[0] * 0.95 + 0.05, c[1] * 0.62, c[2] * 0.62];
          ro = 0.3;
        }
        if (g === 0) {
          // Brows, hair by hair: strands across a band along the brow landmarks.
          for (const [line, side] of browLines) {
            // Farther than (0.52 + 0.15) / 0.9 from the line is always skipped below.
            if (beyond(px, py, line, 0.75)) continue;
            const brow = line.pts;
            const { d, t } = distToPolyline(px, py, line);
            const halfW = 0.42 * (1 - 0.55 * t) + 0.1;
            const lift = py > brow[Math.round(t * 4)][1] ? 0.9 : 1.15; // grows more below the line
            if (d * lift > halfW + 0.15 || pz < lipZ - 3) continue;
            const band = smoothstep(halfW + 0.12, halfW - 0.1, d * lift);
            const ang = side * (0.25 + 0.9 * smoothstep(0.25, 0, t)) + side * 0.1 + (Math.PI / 2) * (1 - smoothstep(0, 0.2, t)) * 0; // hairs sweep outward, inner ones upward
            const dirx = Math.cos(ang) * side;
            const diry = Math.sin(Math.abs(ang)) * 0.55 + 0.2;
            const across = px * -diry + py * dirx;
            const along = px * dirx + py * diry;
            const cell = Math.floor(across / 0.028);
            const rnd = hash2(cell, side, seed);
            const seg = Math.floor(along / 0.55 + rnd * 7);
            const alive = hash2(cell, seg, seed + 3) < 0.55 + 0.4 * look.brows;
            const inCell = Math.abs(((((across / 0.028) % 1) + 1) % 1) - 0.5);
            const strand = alive ? smoothstep(0.45, 0.15, inCell) : 0;
            const m = band * (0.85 + 0.15 * strand) * (0.85 + 0.15 * look.brows);
            // grey and white hair leaves brows darker than the scalp (they grey later, and not all at once)
            const greyish = Math.min(...hair) > 0.15 ? 0.55 : 0;
            const browCol = hair.map((k) => mix(k * 0.6, 0.025, greyish));
            c = c.map((k, i) => mix(k, browCol[i], clamp(m))) as number[];
            h -= m * 0.15;
          }
          // Beard and stubble: below the cheekbones and around the mouth, not on the lips.
          if (look.beard) {
            // below a line from under the nose sloping down to the jaw angle, soft-edged; a moustache
            // band over the upper lip; down the jaw to just under the chin
            const ax = Math.abs(px);
            const edgeY = mouthY + 0.2 - Math.max(0, ax - 1.8) * 0.45 + smoothstep(4.5, 6.5, ax) * 1.2;
            const below = smoothstep(edgeY + 0.5, edgeY - 0.6, py) * smoothstep(chin[1] - 3.5, chin[1] - 1.2, py);
            const moust = smoothstep(noseY - 0.35, noseY - 0.8, py) * smoothstep(mouthY + 0.2, mouthY + 0.7, py) * smoothstep(3.0, 2.0, ax);
            const fade = (0.75 + 0.25 * noise(u * 300, v * 300)) * smoothstep(0.15, 0.5, Math.abs(py - lm[62][1]) + (insidePolygon(px, py, outerLip) ? 0 : 1));
            const region = clamp(Math.max(below, moust)) * fade * (lipMask > 0 ? 0 : 1) * smoothstep(lipZ - 6, lipZ - 3, pz);
            if (region > 0) {
              const follicle = hash2(Math.floor(u * W * 0.7), Math.floor(v * H * 0.7), seed + 11);
              const dens = look.beard === 'stubble' ? 0.55 : 0.9;
              const dot = follicle < dens ? 1 : 0;
              const amt = look.beard === 'stubble' ? 0.3 + 0.25 * dot : look.beard === 'short' ? 0.5 + 0.3 * dot : 0.6 + 0.3 * dot;
              // salt and pepper: grey beards keep some dark hairs, and skin shows between them
              const pepper = Math.min(...hair) > 0.15 && hash2(Math.floor(u * W * 0.7), Math.floor(v * H * 0.7), seed + 17) < 0.45;
              const hairHere = pepper ? [0.03, 0.025, 0.02] : hair;
              const beardCol = look.beard === 'stubble' ? c.map((k, i) => mix(k * 0.55, hairHere[i], 0.5)) : c.map((k, i) => mix(k * 0.5, hairHere[i], 0.75));
              c = c.map((k, i) => mix(k, beardCol[i], clamp(region * amt))) as number[];
              ro = mix(ro, 0.75, region);
              h += region * dot * 0.3;
            }
          }
          // Age: faint lines at the eye corners and the nasolabial fold.
          if (look.age > 0.3) {
            const crow = Math.min(Math.hypot(px - lm[45][0] - 1.1, py - lm[45][1]), Math.hypot(px - lm[36][0] + 1.1, py - lm[36][1]));
            const lines = Math.sin(py * 40 + noise(u * 200, v * 200) * 3) * 0.5 + 0.5;
            const k = smoothstep(1.3, 0.3, crow) * lines * (look.age - 0.3) * 0.6;
            c = c.map((q) => q * (1 - k * 0.35)) as number[];
            h -= k;
          }
          // Oilier T-zone, drier cheeks.
          const tzone = Math.exp(-((px * px) / 3)) * smoothstep(mouthY, noseY, py) * front;
          ro = ro - 0.12 * tzone + 0.05 * look.age;
        }
        // Pores: fine noise in height and a whisper in colour.
        const pore = noise(u * 2600, v * 1300);
        h += (pore - 0.5) * 0.5;
        c = c.map((k) => k * (0.985 + 0.03 * pore)) as number[];
      }
      color[o * 4] = toS(c[0]);
      color[o * 4 + 1] = toS(c[1]);
      color[o * 4 + 2] = toS(c[2]);
      color[o * 4 + 3] = 255;
      height[o] = h;
      rough[o * 4] = 0;
      rough[o * 4 + 1] = Math.round(clamp(ro) * 255);
      rough[o * 4 + 2] = 0;
      rough[o * 4 + 3] = 255;
    }
  }
  // Normal map at half resolution from the height field (pores, lip lines, brow hairs).
  const w2 = W >> 1;
  const h2 = H >> 1;
  const nrm = new Uint8Array(w2 * h2 * 4);
  const hAt = (x: number, y: number) => height[Math.min(H - 1, Math.max(0, y)) * W + Math.min(W - 1, Math.max(0, x))];
  for (let y = 0; y < h2; y++) {
    for (let x = 0; x < w2; x++) {
      const dx = (hAt(x * 2 + 2, y * 2) - hAt(x * 2 - 2, y * 2)) * 0.35;
      const dy = (hAt(x * 2, y * 2 - 2) - hAt(x * 2, y * 2 + 2)) * 0.35;
      const l = Math.hypot(dx, dy, 1);
      const o = (y * w2 + x) * 4;
      nrm[o] = Math.round(((-dx / l) * 0.5 + 0.5) * 255);
      nrm[o + 1] = Math.round(((-dy / l) * 0.5 + 0.5) * 255);
      nrm[o + 2] = Math.round(((1 / l) * 0.5 + 0.5) * 255);
      nrm[o + 3] = 255;
    }
  }
  const rough2 = new Uint8Array(w2 * h2 * 4);
  for (let y = 0; y < h2; y++) for (let x = 0; x < w2; x++) rough2.set(rough.subarray((y * 2 * W + x * 2) * 4, (y * 2 * W + x * 2) * 4 + 4), (y * w2 + x) * 4);
  return { color: encodeJpeg(color, W, H, 88), normal: encodeJpeg(nrm, w2, h2, 90), roughness: encodeJpeg(rough2, w2, h2, 85) };
}

/**
 * Eye texture (sclera and iris share it: both spheres' UVs fill the unit square). Painted by the
 * angle from the eye's forward axis: pupil, iris with fibres and a dark limbal ring, then white
 * sclera with faint veins and pink towards the back. `attr` is that angle in degrees.
 */
export function paintEye(r: Raster, irisHex: string, seed: number, pupilDeg: number, irisDeg: number): Uint8Array {
  const { width: W, height: H } = r;
  const iris = hexToRgb(irisHex).map(srgbToLinear);
  const noise = makeNoise(seed);
  const out = new Uint8Array(W * H * 4);
  const toS = (c: number) => Math.round(clamp(c <= 0.0031308 ? c * 12.92 : 1.055 * c ** (1 / 2.4) - 0.055) * 255);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const o = y * W + x;
      const a = r.attr[o];
      const px = r.pos[o * 3];
      const py = r.pos[o * 3 + 1];
      const ang = Math.atan2(py, px);
      let c: number[];
      if (r.group[o] === 1 && a < irisDeg) {
        const rr = a / irisDeg;
        const fib = noise((ang * 40) / Math.PI, rr * 2) * 0.5 + noise((ang * 90) / Math.PI, rr * 6) * 0.5;
        const ring = 0.45 + 0.55 * smoothstep(1.0, 0.8, rr);
        const collar = 1 + 0.4 * smoothstep(0.55, 0.42, rr) * smoothstep(pupilDeg / irisDeg, 0.42, rr);
        const k = ring * collar * (0.65 + 0.7 * fib);
        c = iris.map((q) => q * k);
        const pupil = smoothstep(pupilDeg / irisDeg + 0.03, pupilDeg / irisDeg - 0.02, rr);
        c = c.map((q) => mix(q, 0.004, pupil));
      } else {
        const vein = smoothstep(0.82, 0.95, noise(ang * 10, a / 12)) * smoothstep(40, 75, a);
        const back = smoothstep(50, 110, a);
        const s = 0.62 - 0.14 * back;
        c = [s * (1 + 0.05 * back), s * (0.94 - vein * 0.25 - 0.08 * back), s * (0.9 - vein * 0.3 - 0.1 * back)];
        const limb = smoothstep(irisDeg + 6, irisDeg, a);
        c = c.map((k, i) => mix(k, iris[i] * 0.25, limb * 0.7));
      }
      out[o * 4] = toS(c[0]);
      out[o * 4 + 1] = toS(c[1]);
      out[o * 4 + 2] = toS(c[2]);
      out[o * 4 + 3] = 255;
    }
  }
  return encodeJpeg(out, W, H, 90);
}

/**
 * Eyelash strands (grey+alpha) for the FaceKit's stacked lash strips: `attr` is 0 at the lid
 * margin and 1 at the tips; u runs along the lid, so strands are narrow runs along v.
 */
export function paintLashes(r: Raster, seed: number, lower: (x: number, y: number) => boolean): Uint8Array {
  const { width: W, height: H } = r;
  const out = new Uint8Array(W * H * 2);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const o = y * W + x;
      out[o * 2] = 18;
      if (r.group[o] < 0) continue;
      const t = r.attr[o];
      const col = Math.floor(x / 2);
      // the lower lid's lashes are fewer and shorter
      const low = lower(x, y);
      const len = (0.55 + 0.45 * hash2(col, y > H / 2 ? 1 : 0, seed)) * (low ? 0.45 : 1);
      const alive = hash2(col, 7, seed) < (low ? 0.12 : 0.45);
      const a = alive ? smoothstep(len, len - 0.15, t) * (1 - 0.5 * t) : 0;
      out[o * 2 + 1] = Math.round(clamp(a) * 255);
    }
  }
  return encodePng(out, W, H, 2);
}

/** The eye-occlusion shadow (grey+alpha): clear towards the middle of the eye, dark under the lids (`attr` 0..1). */
export function paintEyeShadow(r: Raster): Uint8Array {
  const { width: W, height: H } = r;
  const out = new Uint8Array(W * H * 2);
  for (let i = 0; i < W * H; i++) {
    out[i * 2] = 255;
    out[i * 2 + 1] = r.group[i] < 0 ? 0 : Math.round(clamp(0.8 * smoothstep(0.25, 1, r.attr[i]) ** 1.3) * 255);
  }
  return encodePng(out, W, H, 2);
}
