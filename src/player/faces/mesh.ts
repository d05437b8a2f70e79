/**
 * Builds the skin surface of one head (before subdivision), in centimetres, from MediaPipe's
 * canonical face mesh:
 *  1. cut the eye and mouth openings (the canonical mesh has them filled in) and close the lips;
 *  2. apply the catalogue's shape offsets (jaw, face length, nose, cheeks, brow) and gender;
 *  3. wrap the rest of the head (a "cap") around the face's outer boundary by marching rays from a
 *     point inside the skull to an implicit skull/jaw surface, so the face and skull share vertices;
 *  4. extrude the eye openings into lid rims that tuck against the eyeballs and the lip opening into
 *     a mouth bag, so open mouths show a cavity rather than the back of the head;
 *  5. add ears and a neck as separate pieces that sit into the skull.
 * Every vertex carries tags that `morphs.ts` uses to build the shape keys.
 */
import { loadCanonicalMesh } from './canonical.js';
import * as L from './landmarks.js';
import { add, clamp, falloff, len, lerp, norm, scale, smoothstep, sub, type V3 } from './vec.js';
import type { FaceLook } from '../../catalog/faces.js';

export enum Part { Face = 0, Cap = 1, LidRim = 2, MouthBag = 3, Ear = 4, Neck = 5 }

export interface HeadMesh {
  pos: V3[];
  uv: [number, number][];
  /** Vertex colour multiplied with the skin texture (mouth cavity darkening, lid rims). */
  col: V3[];
  idx: number[];
  part: Part[];
  /** For rim/bag vertices: the face vertex they hang off and how deep (1..n) they are. */
  anchor: number[];
  depth: number[];
  eyeCenter: { left: V3; right: V3 };
  eyeRadius: number;
  /** Jaw hinge (temporomandibular joint), rotation axis is x. */
  jawPivot: V3;
  /** Number of canonical face vertices (they come first). */
  faceCount: number;
  upperLip: Set<number>;
  lowerLip: Set<number>;
}

export const EYE_RADIUS = 1.2;

/** Texture space: the face's canonical UVs occupy the middle half of the skin texture. */
export const faceUvToTex = (u: number, v: number): [number, number] => [0.25 + u * 0.5, 0.25 + v * 0.5];

type Sdf = (p: V3) => number;

function ellipsoid(c: V3, r: V3): Sdf {
  const m = Math.min(r[0], r[1], r[2]);
  return (p) => (Math.hypot((p[0] - c[0]) / r[0], (p[1] - c[1]) / r[1], (p[2] - c[2]) / r[2]) - 1) * m;
}
function smin(a: number, b: number, k: number): number {
  const h = clamp(0.5 + (0.5 * (b - a)) / k);
  return b + (a - b) * h - k * h * (1 - h);
}

const skull = ellipsoid([0, 3.4, -4.4], [7.9, 10.6, 9.9]);
const jawBlob = ellipsoid([0, -4.6, -1.2], [6.3, 5.4, 6.2]);
/** Implicit skull + jaw volume the cap (and the hair, in hair.ts) is wrapped onto. */
export const headSdf: Sdf = (p) => smin(skull(p), jawBlob(p), 2.5);

/** Marches from `from` along `dir` to the zero crossing of `sdf` (from must be inside). */
function hit(sdf: Sdf, from: V3, dir: V3): V3 {
  let lo = 0;
  let hi = 40;
  for (let i = 0; i < 40; i++) {
    const mid = (lo + hi) / 2;
    if (sdf(add(from, scale(dir, mid))) < 0) lo = mid;
    else hi = mid;
  }
  return add(from, scale(dir, lo));
}

function boundaryLoop(idx: number[], filter: (v: number) => boolean): number[] {
  const count = new Map<string, number>();
  const next = new Map<number, number>();
  for (let t = 0; t < idx.length; t += 3) {
    for (let e = 0; e < 3; e++) {
      const a = idx[t + e];
      const b = idx[t + ((e + 1) % 3)];
      const k = a < b ? `${a}_${b}` : `${b}_${a}`;
      count.set(k, (count.get(k) ?? 0) + 1);
    }
  }
  for (let t = 0; t < idx.length; t += 3) {
    for (let e = 0; e < 3; e++) {
      const a = idx[t + e];
      const b = idx[t + ((e + 1) % 3)];
      const k = a < b ? `${a}_${b}` : `${b}_${a}`;
      if (count.get(k) === 1 && filter(a)) next.set(a, b); // keeps the winding direction
    }
  }
  const start = next.keys().next().value as number;
  const loop = [start];
  for (let v = next.get(start)!; v !== start; v = next.get(v)!) loop.push(v);
  return loop;
}

/** Applies catalogue shape offsets and gender to the canonical face (rest shape only). */
function shapeFace(p: V3[], look: FaceLook, male: boolean): void {
  const s = look.shape;
  const noseTip = p[L.NOSE_TIP];
  const noseBase: V3 = [0, -1.6, 4.6];
  for (let i = 0; i < p.length; i++) {
    let [x, y, z] = p[i];
    // Lower face below the nose: longer/shorter face and wider/narrower jaw.
    const lower = smoothstep(-1.5, -7, y);
    const jaw = s.jaw * 0.07 + (male ? 0.04 : -0.07);
    x *= 1 + jaw * lower;
    y += (y + 1.5) * lower * (s.length * 0.06 + (male ? 0.02 : -0.04));
    // Chin: men squarer and slightly forward.
    if (male) z += 0.25 * smoothstep(-7, -9.4, y) * falloff(Math.abs(x), 3);
    // Nose: scale about its base.
    const dn = Math.hypot(x - noseBase[0], (y - noseBase[1]) * 0.8, z - noseBase[2]);
    const nw = falloff(dn, 3.2) * smoothstep(-2.6, -1.6, y);
    const ns = s.nose * 0.12 + (male ? 0.07 : -0.04);
    x += x * ns * nw * 0.9;
    z += (z - noseBase[2]) * ns * nw;
    y += (y - noseBase[1]) * ns * nw * 0.4;
    // Cheekbones: out and forward around the zygoma.
    const cheek = Math.max(falloff(Math.hypot(x - 5, y - 0.3, (z - 2) * 0.7), 2.8), falloff(Math.hypot(x + 5, y - 0.3, (z - 2) * 0.7), 2.8));
    x += Math.sign(x) * cheek * s.cheeks * 0.35;
    z += cheek * s.cheeks * 0.2;
    // Brow ridge forward.
    const brow = falloff(Math.hypot(x * 0.35, y - 4.6), 1.6) * smoothstep(2, 5, z);
    z += brow * (s.brow * 0.3 + (male ? 0.2 : -0.05));
    p[i] = [x, y, z];
  }
  void noseTip;
}

export function buildHeadMesh(look: FaceLook, male: boolean): HeadMesh {
  const canon = loadCanonicalMesh();
  const pos: V3[] = [];
  const uv: [number, number][] = [];
  for (let i = 0; i < 468; i++) {
    pos.push([canon.positions[i * 3], canon.positions[i * 3 + 1], canon.positions[i * 3 + 2]]);
    uv.push(faceUvToTex(canon.uvs[i * 2], canon.uvs[i * 2 + 1]));
  }
  const col: V3[] = pos.map(() => [1, 1, 1]);
  const part: Part[] = pos.map(() => Part.Face);
  const anchor: number[] = pos.map((_, i) => i);
  const depth: number[] = pos.map(() => 0);

  // 1. Cut the openings: drop triangles made only of one contour's vertices.
  const holes = [
    new Set([...L.EYE_LEFT_UPPER, ...L.EYE_LEFT_LOWER]),
    new Set([...L.EYE_RIGHT_UPPER, ...L.EYE_RIGHT_LOWER]),
    new Set([...L.LIP_INNER_UPPER, ...L.LIP_INNER_LOWER]),
  ];
  const idx: number[] = [];
  for (let t = 0; t < canon.indices.length; t += 3) {
    const tri = [canon.indices[t], canon.indices[t + 1], canon.indices[t + 2]];
    if (holes.some((h) => tri.every((v) => h.has(v)))) continue;
    idx.push(...tri);
  }

  // Close the lips at rest: the canonical face is slightly parted. Meet in the middle, with the
  // rows next to the inner contour following part of the way so the lips keep their volume.
  for (let k = 1; k < L.LIP_INNER_UPPER.length - 1; k++) {
    const u = L.LIP_INNER_UPPER[k];
    const l = L.LIP_INNER_LOWER[k];
    const mid = lerp(pos[u], pos[l], 0.5);
    const du = sub(mid, pos[u]);
    const dl = sub(mid, pos[l]);
    // overshoot a little: subdivision pulls the seam back, and a sealed seam must stay sealed
    pos[u] = add(pos[u], scale(du, 1.2));
    pos[l] = add(pos[l], scale(dl, 1.2));
  }
  // Fuller lips: the vermilion swells forward and away from the lip line, most at the middle.
  {
    const my = (pos[13][1] + pos[14][1]) / 2;
    const mz = pos[13][2];
    for (let i = 0; i < 468; i++) {
      const [x, y, z] = pos[i];
      if (z < mz - 2.5) continue;
      const w = falloff(Math.hypot(x / 3.3, (y - my) / 1.5), 1);
      const lower = y < my ? 1.15 : 1;
      pos[i] = [x, y + (y - my) * 0.22 * w, z + 0.28 * w * lower];
    }
  }
  shapeFace(pos, look, male);

  // 2. Cap over the skull, marching from the face oval.
  const sdf = headSdf;
  const C: V3 = [0, 1.5, -4];
  const oval = boundaryLoop(idx, () => true);
  const K = 16;
  const rings: number[][] = [oval];
  const ovalDir = oval.map((v) => norm(sub(pos[v], C)));
  const psi0 = ovalDir.map((d) => Math.acos(clamp(d[2], -1, 1)));
  const alpha = ovalDir.map((d) => Math.atan2(d[1], d[0]));
  const offset = oval.map((v, i) => sub(pos[v], hit(sdf, C, ovalDir[i])));
  const center = faceUvToTex(0.5, 0.5);
  for (let k = 1; k < K; k++) {
    const ring: number[] = [];
    oval.forEach((v, i) => {
      const t = k / K;
      const psi = psi0[i] + (Math.PI - psi0[i]) * t;
      const dir: V3 = [Math.sin(psi) * Math.cos(alpha[i]), Math.sin(psi) * Math.sin(alpha[i]), Math.cos(psi)];
      const travelled = psi - psi0[i];
      const w = 1 - smoothstep(0, 0.7, travelled);
      pos.push(add(hit(sdf, C, dir), scale(offset[i], w)));
      const u0 = uv[v];
      const f = 1 + 0.8 * t;
      uv.push([center[0] + (u0[0] - center[0]) * f, center[1] + (u0[1] - center[1]) * f]);
      col.push([1, 1, 1]);
      part.push(Part.Cap);
      anchor.push(v);
      depth.push(k);
      ring.push(pos.length - 1);
    });
    rings.push(ring);
  }
  const pole = pos.length;
  pos.push(hit(sdf, C, [0, 0, -1]));
  uv.push([0.03, 0.5]);
  col.push([1, 1, 1]);
  part.push(Part.Cap);
  anchor.push(oval[0]);
  depth.push(K);
  // The oval loop runs with the face on its left; the cap continues on the other side.
  for (let k = 0; k < K - 1; k++) {
    const a = rings[k];
    const b = rings[k + 1];
    for (let i = 0; i < a.length; i++) {
      const j = (i + 1) % a.length;
      idx.push(a[j], a[i], b[i], a[j], b[i], b[j]);
    }
  }
  const last = rings[K - 1];
  for (let i = 0; i < last.length; i++) idx.push(last[(i + 1) % last.length], last[i], pole);

  // 3. Eyes: place eyeballs behind the openings, then extrude lid rims onto the eyeball.
  const eyeCenter = (upper: number[], lower: number[]): V3 => {
    const ring = [...upper, ...lower];
    const c = scale(ring.reduce((s, v) => add(s, pos[v]), [0, 0, 0] as V3), 1 / ring.length);
    const top = pos[upper[4]];
    // Cornea apex sits just behind the upper-lid centre.
    return [c[0], c[1] + 0.05, top[2] - EYE_RADIUS - 0.12];
  };
  const eyeL = eyeCenter(L.EYE_LEFT_UPPER, L.EYE_LEFT_LOWER);
  const eyeR = eyeCenter(L.EYE_RIGHT_UPPER, L.EYE_RIGHT_LOWER);
  const rimRings = (center: V3, contour: number[]): void => {
    const loop = boundaryLoop(idx, (v) => contour.includes(v));
    const radii = [EYE_RADIUS + 0.06, EYE_RADIUS - 0.15];
    let prev = loop;
    radii.forEach((r, d) => {
      const ring = prev.map((_, i) => {
        const m = pos[loop[i]];
        const dir = norm(sub(m, center));
        // pull towards the eyeball: the rim is the lid's inner (wet) surface
        const p = add(center, scale(dir, r));
        pos.push(lerp(p, [m[0], m[1], p[2] - 0.05], 0.15));
        uv.push(uv[loop[i]]);
        col.push(d === 0 ? [0.95, 0.72, 0.7] : [0.55, 0.35, 0.35]);
        part.push(Part.LidRim);
        anchor.push(loop[i]);
        depth.push(d + 1);
        return pos.length - 1;
      });
      for (let i = 0; i < loop.length; i++) {
        const j = (i + 1) % loop.length;
        idx.push(prev[j], prev[i], ring[i], prev[j], ring[i], ring[j]);
      }
      prev = ring;
    });
  };
  rimRings(eyeL, [...L.EYE_LEFT_UPPER, ...L.EYE_LEFT_LOWER]);
  rimRings(eyeR, [...L.EYE_RIGHT_UPPER, ...L.EYE_RIGHT_LOWER]);

  // 4. Mouth bag: inner lip surface rolling back, then a cavity wide enough for teeth and tongue.
  const upperLip = new Set([...L.LIP_INNER_UPPER, ...L.LIP_OUTER_UPPER]);
  const lowerLip = new Set([...L.LIP_INNER_LOWER, ...L.LIP_OUTER_LOWER]);
  const mouthLoop = boundaryLoop(idx, (v) => v < 468 && (L.LIP_INNER_UPPER.includes(v) || L.LIP_INNER_LOWER.includes(v)));
  const mouthMid = scale(mouthLoop.reduce((s, v) => add(s, pos[v]), [0, 0, 0] as V3), 1 / mouthLoop.length);
  // [depth back, lateral scale, vertical spread above/below the lip line, colour]
  const bag: [number, number, number, number][] = [
    // the lips' wet inner faces press together at rest (negative spread), then a dark cavity
    [0.3, 1.0, -0.04, 0.5],
    // (no deeper than ~4 cm: further back the neck's top would show through an open mouth)
    [0.9, 1.05, 0.4, 0.2],
    [1.7, 1.25, 1.0, 0.1],
    [2.6, 1.3, 1.3, 0.07],
    [3.3, 1.1, 1.2, 0.06],
    [3.8, 0.7, 0.8, 0.05],
  ];
  const bagTris = idx.length;
  let prev = mouthLoop;
  bag.forEach(([back, wide, spread, shade], d) => {
    const ring = mouthLoop.map((v) => {
      const p = pos[v];
      const side = L.LIP_INNER_UPPER.includes(v) && !L.LIP_INNER_LOWER.includes(v) ? 1 : L.LIP_INNER_LOWER.includes(v) && !L.LIP_INNER_UPPER.includes(v) ? -1 : 0;
      const archBack = 0.25 * (p[0] * p[0]) * (d > 0 ? 1 : 0.3); // follows the dental arch backwards at the sides
      pos.push([p[0] * wide, mouthMid[1] + (p[1] - mouthMid[1]) + side * spread, p[2] - back - archBack * 0.3]);
      uv.push(uv[v]);
      col.push([shade, shade * 0.55, shade * 0.55]);
      part.push(Part.MouthBag);
      anchor.push(v);
      depth.push(d + 1);
      return pos.length - 1;
    });
    for (let i = 0; i < mouthLoop.length; i++) {
      const j = (i + 1) % mouthLoop.length;
      idx.push(prev[j], prev[i], ring[i], prev[j], ring[i], ring[j]);
    }
    prev = ring;
  });
  const bagEnd = pos.length;
  pos.push([0, mouthMid[1], mouthMid[2] - 4.3]);
  uv.push(uv[L.LIP_INNER_UPPER[5]]);
  col.push([0.05, 0.025, 0.025]);
  part.push(Part.MouthBag);
  anchor.push(L.LIP_INNER_LOWER[5]);
  depth.push(bag.length + 1);
  for (let i = 0; i < prev.length; i++) idx.push(prev[(i + 1) % prev.length], prev[i], bagEnd);
  // The cavity is seen from inside: its faces must point at the mouth's axis, or back-face
  // culling makes it vanish and the neck shows through an open mouth.
  orient(pos, idx, bagTris, idx.length, (c) => [0 - c[0], mouthMid[1] - c[1], 0]);

  const earTris = idx.length;
  addEars(pos, uv, col, idx, part, anchor, depth);
  // Ears face outwards (the disc and its relief are seen from the side).
  orient(pos, idx, earTris, idx.length, (c) => [Math.sign(c[0]), 0, 0]);
  addNeck(pos, uv, col, idx, part, anchor, depth, male);

  const jawPivot: V3 = [0, 0.2, -3.2];
  return { pos, uv, col, idx, part, anchor, depth, eyeCenter: { left: eyeL, right: eyeR }, eyeRadius: EYE_RADIUS, jawPivot, faceCount: 468, upperLip, lowerLip };
}

/**
 * Flips the winding of triangles idx[from..to) as a block if most of them face against `want`
 * (evaluated at each triangle's centroid), so back-face culling keeps the side that is seen.
 */
function orient(pos: V3[], idx: number[], from: number, to: number, want: (c: V3) => V3): void {
  let votes = 0;
  for (let t = from; t < to; t += 3) {
    const [a, b, c] = [pos[idx[t]], pos[idx[t + 1]], pos[idx[t + 2]]];
    const u = sub(b, a);
    const v = sub(c, a);
    const n: V3 = [u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]];
    const w = want(scale(add(add(a, b), c), 1 / 3));
    votes += Math.sign(n[0] * w[0] + n[1] * w[1] + n[2] * w[2]);
  }
  if (votes >= 0) return;
  for (let t = from; t < to; t += 3) [idx[t + 1], idx[t + 2]] = [idx[t + 2], idx[t + 1]];
}

/**
 * Ears: a shaped disc (helix rim, scapha groove, antihelix, concha bowl) on a short stalk that
 * disappears into the skull. Not anatomically exact, but reads as an ear at portrait distance.
 */
function addEars(pos: V3[], uv: [number, number][], col: V3[], idx: number[], part: Part[], anchor: number[], depth: number[]): void {
  const NU = 28;
  const profile: [number, number, number][] = [
    // [radial fraction, height off the ear plane, shade]
    // rolled helix rim, scapha groove, antihelix ridge, then the deep concha bowl
    [1.0, -0.3, 0.9],
    [1.04, 0.25, 1.0],
    [0.95, 0.6, 1.0],
    [0.84, 0.35, 0.82],
    [0.72, 0.6, 0.97],
    [0.58, 0.5, 0.9],
    [0.44, -0.05, 0.66],
    [0.24, -0.45, 0.5],
    [0.0, -0.55, 0.45],
  ];
  for (const sideSign of [1, -1]) {
    const base: V3 = [7.75 * sideSign, 1.0, -4.4]; // the concha's floor just outside the skull
    const start = pos.length;
    const ring = (u: number): [number, number] => {
      // ear outline: taller than wide, narrower lobe at the bottom
      const a = (u / NU) * Math.PI * 2;
      const ry = 3.1;
      const rx = Math.sin(a) > 0 ? 1.9 : 1.55 + 0.2 * Math.cos(a);
      return [Math.cos(a) * rx, Math.sin(a) * ry];
    };
    // Ear plane: faces sideways, tilted back ~15° and flared out ~20° from the skull.
    const toWorld = (ex: number, ey: number, h: number): V3 => {
      const back = ex; // ear-local x runs front(+)/back(-)
      const tilt = 0.26;
      const yy = ey * Math.cos(tilt) - back * Math.sin(tilt) * 0.3;
      const zz = back * Math.cos(0.1) + ey * Math.sin(tilt) * -0.6 - 0.2;
      const flare = 0.32 * (0.5 - back / 3.2);
      return [base[0] + sideSign * (h + 0.6 + flare * 1.6 * clamp(-back + 1.5, 0, 3) * 0.4), base[1] + yy, base[2] + zz];
    };
    profile.forEach(([r, h, shade], d) => {
      for (let u = 0; u < NU; u++) {
        const [ex, ey] = ring(u);
        const concha = r < 0.5 ? 0.5 : 1; // the bowl sits low and to the front
        pos.push(toWorld(ex * r + (1 - r) * 0.4 * concha, ey * r - (1 - r) * 0.6, h));
        uv.push([0.06, 0.5]);
        col.push([shade, shade * 0.93, shade * 0.93]);
        part.push(Part.Ear);
        anchor.push(-1);
        depth.push(0);
      }
    });
    // Back of the ear: from the rim to the skull.
    for (let u = 0; u < NU; u++) {
      const [ex, ey] = ring(u);
      const p = toWorld(ex * 0.6, ey * 0.6, -0.6);
      pos.push([p[0] - sideSign * 0.9, p[1], p[2]]);
      uv.push([0.06, 0.5]);
      col.push([0.85, 0.8, 0.8]);
      part.push(Part.Ear);
      anchor.push(-1);
      depth.push(0);
    }
    const rows = profile.length + 1;
    const order = [profile.length, ...profile.map((_, i) => i)];
    for (let rr = 0; rr < rows - 1; rr++) {
      const a = start + order[rr] * NU;
      const b = start + order[rr + 1] * NU;
      for (let u = 0; u < NU; u++) {
        const v = (u + 1) % NU;
        if (sideSign > 0) idx.push(a + u, a + v, b + u, b + u, a + v, b + v);
        else idx.push(a + v, a + u, b + u, a + v, b + u, b + v);
      }
    }
  }
}

/** Neck: an elliptic tube that starts inside the skull and ends inside the shirt. */
function addNeck(pos: V3[], uv: [number, number][], col: V3[], idx: number[], part: Part[], anchor: number[], depth: number[], male: boolean): void {
  const NU = 32;
  const w = male ? 1.08 : 0.95;
  // [y, centre z, half width, half depth]
  const rows: [number, number, number, number][] = [
    // the top rows sit well back, behind the mouth cavity
    [-1, -5.0, 4.6, 3.6],
    [-5, -4.8, 5.0, 4.2],
    [-9, -3.6, 5.2, 5.3],
    [-13, -3.4, 5.4, 5.4],
    [-17, -3.3, 6.0, 5.6],
    [-20, -3.3, 7.5, 6.2],
  ];
  const start = pos.length;
  rows.forEach(([y, cz, hw, hd], r) => {
    for (let u = 0; u < NU; u++) {
      const a = (u / NU) * Math.PI * 2;
      pos.push([Math.sin(a) * hw * w, y, cz + Math.cos(a) * hd * w]);
      uv.push([0.06, 0.45 + r * 0.01]);
      // The jaw shades the front of the upper neck from the light above (no shadow maps here).
      const underJaw = r === 2 ? 0.22 * Math.max(0, Math.cos(a)) : 0;
      const shade = (r === 0 ? 0.8 : r === 1 ? 0.9 : 1) - underJaw;
      col.push([shade, shade, shade]);
      part.push(Part.Neck);
      anchor.push(-1);
      depth.push(0);
    }
  });
  for (let r = 0; r < rows.length - 1; r++) {
    const a = start + r * NU;
    const b = a + NU;
    for (let u = 0; u < NU; u++) {
      const v = (u + 1) % NU;
      idx.push(a + u, b + u, a + v, a + v, b + u, b + v);
    }
  }
  void len;
}
