/**
 * The rigid parts around the skin: eyeballs (own nodes so the player can rotate them), teeth and
 * tongue (ride the jaw), eyelashes (follow the lid margins) and clothed shoulders.
 * All in centimetres in head space; build.ts converts to metres.
 */
import { add, clamp, rotX, smoothstep, sub, type V3 } from './vec.js';

export interface Geo {
  pos: number[];
  uv: number[];
  col: number[];
  idx: number[];
}

const newGeo = (): Geo => ({ pos: [], uv: [], col: [], idx: [] });

/** Lat-long grid helper: rows × cols vertices from f(u,v), u wraps. */
function grid(g: Geo, rows: number, cols: number, f: (u: number, v: number) => { p: V3; uv?: [number, number]; c?: V3 }, flip = false): void {
  const start = g.pos.length / 3;
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const o = f(c / cols, r / (rows - 1));
      g.pos.push(...o.p);
      g.uv.push(...(o.uv ?? [c / cols, r / (rows - 1)]));
      g.col.push(...(o.c ?? [1, 1, 1]));
    }
  }
  for (let r = 0; r < rows - 1; r++) {
    for (let c = 0; c < cols; c++) {
      const a = start + r * cols + c;
      const b = start + r * cols + ((c + 1) % cols);
      const a2 = a + cols;
      const b2 = b + cols;
      if (flip) g.idx.push(a, a2, b, b, a2, b2);
      else g.idx.push(a, b, a2, b, b2, a2);
    }
  }
}

/**
 * Eyeball centred at the origin looking down +z, with a slight corneal bulge (it catches the
 * highlight like a real eye). UV = sqrt(polar angle) so the iris gets most texels.
 */
export function eyeball(radius: number): Geo {
  const g = newGeo();
  const rows = 28;
  const cols = 36;
  grid(g, rows, cols, (u, v) => {
    const theta = v * Math.PI;
    const phi = u * Math.PI * 2;
    const cornea = theta < 0.62 ? 0.09 * (1 - (theta / 0.62) ** 2) : 0;
    const r = radius + cornea;
    const p: V3 = [Math.sin(theta) * Math.cos(phi) * r, Math.sin(theta) * Math.sin(phi) * r, Math.cos(theta) * r];
    const ruv = 0.5 * Math.sqrt(theta / Math.PI);
    return { p, uv: [0.5 + Math.cos(phi) * ruv, 0.5 - Math.sin(phi) * ruv] };
  }, true);
  return g;
}

/** Eyeball rotation deltas for eyeLook* morphs (the player may also rotate the nodes). */
export function eyeRotationDelta(g: Geo, yaw: number, pitch: number): Float32Array {
  const out = new Float32Array(g.pos.length);
  for (let i = 0; i < g.pos.length; i += 3) {
    const [x, y, z] = [g.pos[i], g.pos[i + 1], g.pos[i + 2]];
    // pitch about x (positive looks up), then yaw about y (positive looks towards +x)
    const y1 = y * Math.cos(pitch) + z * Math.sin(pitch);
    const z1 = -y * Math.sin(pitch) + z * Math.cos(pitch);
    const x2 = x * Math.cos(yaw) + z1 * Math.sin(yaw);
    const z2 = -x * Math.sin(yaw) + z1 * Math.cos(yaw);
    out[i] = x2 - x;
    out[i + 1] = y1 - y;
    out[i + 2] = z2 - z;
  }
  return out;
}

export interface TeethGeo extends Geo {
  /** 1 for lower-jaw vertices (they follow the jaw), 0 for upper. */
  lower: number[];
}

/**
 * Upper and lower dental arches: fourteen rounded crowns each on a parabolic arch, and a gum band.
 * Vertex colours: ivory crowns darkening towards the molars (they sit in the mouth's shadow).
 */
export function teeth(front: V3): TeethGeo {
  const g: TeethGeo = { ...newGeo(), lower: [] };
  const widths = [0.86, 0.68, 0.78, 0.7, 0.68, 1.0, 0.95];
  const arch = (s: number, back: number): [number, number] => {
    // s: arc position in cm from the midline (signed); returns [x, z offset]
    const a = 2.45 - back * 0.3;
    const t = s / a;
    return [a * Math.sin(t) * 1.05, -2.2 * (1 - Math.cos(t)) * 1.15];
  };
  for (const jaw of [0, 1]) {
    for (const side of [1, -1]) {
      let s = 0;
      widths.forEach((w, k) => {
        const mid = s + w / 2;
        s += w;
        const [ax, az] = arch(mid * side * (jaw ? 0.93 : 1), jaw);
        const molar = k >= 3;
        const h = k === 0 ? 1.0 : k === 1 ? 0.9 : k === 2 ? 1.0 : 0.75;
        const depth = molar ? 0.85 : 0.55 + k * 0.05;
        const cx = front[0] + ax;
        const cz = front[2] + az - (jaw ? 0.18 : 0);
        const edgeY = front[1] + (jaw ? 0.04 : -0.14);
        const cy = jaw ? edgeY - h / 2 : edgeY + h / 2;
        const yaw = Math.atan2(ax, -az * 1.3 + 2.5) * 1.0;
        const shade = 1 - 0.55 * smoothstep(0, 6, k);
        const start = g.pos.length / 3;
        grid(g, 8, 12, (u, v) => {
          const phi = u * Math.PI * 2;
          const theta = v * Math.PI;
          // superellipsoid: boxy crown with rounded edges
          const sp = (q: number, e: number) => Math.sign(q) * Math.abs(q) ** e;
          let lx = sp(Math.sin(theta), 0.5) * sp(Math.cos(phi), 0.5) * (w * 0.51);
          const lz = sp(Math.sin(theta), 0.5) * sp(Math.sin(phi), 0.5) * (depth / 2) * (k < 3 ? 0.8 : 1);
          const ly = sp(Math.cos(theta), 0.4) * (h / 2);
          // incisors thin towards the biting edge
          const toEdge = jaw ? (-ly / h + 0.5) : (ly / h + 0.5);
          lx *= 1 - 0.1 * toEdge;
          const p: V3 = [cx + lx * Math.cos(yaw) + lz * Math.sin(yaw), cy - ly * (jaw ? -1 : 1) * -1, cz - lx * Math.sin(yaw) + lz * Math.cos(yaw)];
          const root = jaw ? smoothstep(0.3, 0.0, (p[1] - (cy - h / 2)) / h) : smoothstep(0.7, 1.0, (p[1] - (cy - h / 2)) / h);
          const tooth: V3 = [0.8 * shade, 0.76 * shade, 0.68 * shade]; // ivory, never paper-white
          const gum: V3 = [0.72 * shade, 0.32 * shade, 0.34 * shade];
          const c: V3 = [tooth[0] + (gum[0] - tooth[0]) * root, tooth[1] + (gum[1] - tooth[1]) * root, tooth[2] + (gum[2] - tooth[2]) * root];
          return { p, c, uv: [0, 0] };
        }, true);
        for (let i = start; i < g.pos.length / 3; i++) g.lower.push(jaw);
      });
    }
    // gum band over the roots, following the arch
    const start = g.pos.length / 3;
    const N = 24;
    const total = widths.reduce((a, b) => a + b, 0);
    for (let r = 0; r < 3; r++) {
      for (let c = 0; c <= N; c++) {
        const s = (c / N - 0.5) * 2 * total * (jaw ? 0.93 : 1);
        const [ax, az] = arch(s, jaw);
        const y = front[1] + (jaw ? -0.7 - r * 0.35 : 0.6 + r * 0.35);
        const out = r === 1 ? 0.38 : 0.15;
        const n = Math.hypot(ax, az - 2) || 1;
        g.pos.push(front[0] + ax * (1 + out / n * 0.2), y, front[2] + az - (jaw ? 0.18 : 0) + out * (r === 1 ? 1 : 0.5) - (r === 2 ? 0.4 : 0));
        g.uv.push(0, 0);
        const sh = 1 - 0.5 * Math.abs(s) / total;
        g.col.push(0.75 * sh, 0.3 * sh, 0.33 * sh);
        g.lower.push(jaw);
      }
    }
    for (let r = 0; r < 2; r++) {
      for (let c = 0; c < N; c++) {
        const a = start + r * (N + 1) + c;
        const b = a + N + 1;
        if (jaw) g.idx.push(a, a + 1, b, a + 1, b + 1, b);
        else g.idx.push(a, b, a + 1, a + 1, b, b + 1);
      }
    }
  }
  return g;
}

/** Tongue: a flattened, slightly grooved blob resting on the floor of the mouth. */
export function tongue(front: V3): Geo & { tip: number[] } {
  const g = { ...newGeo(), tip: [] as number[] };
  grid(g, 12, 20, (u, v) => {
    const theta = v * Math.PI;
    const phi = u * Math.PI * 2;
    let x = Math.sin(theta) * Math.cos(phi) * 1.9;
    let y = Math.cos(theta) * 0.55;
    let z = Math.sin(theta) * Math.sin(phi) * 2.5;
    if (y > 0) y -= 0.15 * Math.exp(-(x * x) / 0.3); // median groove
    const toTip = clamp((z + 2.5) / 5);
    x *= 0.75 + 0.25 * (1 - toTip);
    y *= 0.8 + 0.2 * (1 - toTip);
    const p: V3 = [front[0] + x, front[1] - 1.1 + y, front[2] - 3.0 + z];
    const ao = 0.45 + 0.55 * toTip * toTip; // darker towards the throat
    return { p, c: [0.8 * ao, 0.44 * ao, 0.44 * ao], uv: [toTip, 0] };
  }, true);
  for (let i = 0; i < g.uv.length; i += 2) g.tip.push(g.uv[i]);
  return g;
}

/** Jaw-following delta for the teeth/tongue of one recipe (rotation about the hinge + slides). */
export function rigidJaw(p: V3, pivot: V3, angle: number, fwd: number, side: number): V3 {
  return sub(add(rotX(p, pivot, angle), [side, 0, fwd]), p);
}

/**
 * Shirt: a lathe whose cross-section is a superellipse: a crew collar, the trapezius sloping
 * gently out to the shoulders, rounded deltoids, then the chest and upper arms falling straight.
 * The profile is a Catmull-Rom curve through its key rows: easing each segment separately would
 * flatten the slope at every row, which shades as horizontal bands.
 */
export function torso(male: boolean): Geo {
  const g = newGeo();
  const k = male ? 1.08 : 0.95;
  // [y, half width, half depth, centre z] (cm)
  const prof: [number, number, number, number][] = [
    [-14.2, 6.2, 5.9, -3.4],
    [-15.0, 7.4, 6.5, -3.4],
    [-16.0, 10.5, 7.3, -3.5],
    [-17.2, 14.2, 8.2, -3.8],
    [-18.6, 17.2, 9.2, -4.0],
    [-20.6, 19.6, 10.0, -4.1],
    [-23.5, 21.0, 10.6, -4.1],
    [-28, 21.3, 11.1, -4.0],
    [-36, 20.6, 11.2, -3.9],
    [-52, 19.6, 10.8, -3.8],
  ];
  const rows = 48;
  const at = (i: number) => prof[Math.max(0, Math.min(prof.length - 1, i))];
  const sample = (t: number) => {
    const f = t * (prof.length - 1);
    const i = Math.min(prof.length - 2, Math.floor(f));
    const s = f - i;
    const [p0, p1, p2, p3] = [at(i - 1), at(i), at(i + 1), at(i + 2)];
    return p1.map((_, j) => 0.5 * (2 * p1[j] + (p2[j] - p0[j]) * s + (2 * p0[j] - 5 * p1[j] + 4 * p2[j] - p3[j]) * s * s + (3 * p1[j] - p0[j] - 3 * p2[j] + p3[j]) * s * s * s)) as [number, number, number, number];
  };
  grid(g, rows, 48, (u, v) => {
    const [y, hw, hd, cz] = sample(v);
    const a = u * Math.PI * 2;
    const e = 0.7 + 0.3 * smoothstep(0.15, 0.45, v); // rounder at the collar, boxier at the chest
    const sx = Math.sign(Math.sin(a)) * Math.abs(Math.sin(a)) ** e;
    const sz = Math.sign(Math.cos(a)) * Math.abs(Math.cos(a)) ** e;
    // The shoulder line falls a little from the neck to the arm.
    const dropY = -Math.abs(sx) * 1.4 * smoothstep(0.05, 0.3, v) * (1 - smoothstep(0.4, 0.7, v));
    const collar = v < 0.05 ? 0.55 : 1;
    return { p: [sx * hw * k, y + dropY, cz + sz * hd * k], c: [collar, collar, collar], uv: [u * 6, v * 8] };
  }, true); // rows run down and columns round to the right: flipped, the faces point outwards
  return g;
}

/**
 * Eyelashes: a ribbon of alpha-blended strands (see lashTexture) along the upper (and a short,
 * sparse one along the lower) lid margin, curving up and out. `margin` is the subdivided lid margin, outer to inner corner.
 */
export function lashes(margin: V3[], center: V3, upper: boolean, lengthCm: number): Geo & { anchor: number[] } {
  const g = { ...newGeo(), anchor: [] as number[] };
  const rows = 3;
  const n = margin.length;
  for (let r = 0; r < rows; r++) {
    for (let i = 0; i < n; i++) {
      const m = margin[i];
      const t = i / (n - 1);
      const taper = Math.sin(Math.PI * (0.1 + 0.85 * t)) ** 0.7;
      const out = sub(m, center);
      const ol = Math.hypot(out[0], out[1], out[2]) || 1;
      const dir: V3 = [out[0] / ol, out[1] / ol, out[2] / ol];
      const h = (r / (rows - 1)) * lengthCm * (0.35 + 0.65 * taper);
      const curl = (r / (rows - 1)) ** 2;
      const up = upper ? 1 : -1;
      g.pos.push(m[0] + dir[0] * h * 0.6, m[1] + up * (h * 0.45 + curl * h * 0.35), m[2] + dir[2] * h * 0.7 + 0.02);
      // lashTexture: upper strands in v 0..0.5, the sparse lower row in v 0.5..1
      g.uv.push(t * (upper ? 2.4 : 1.6), (upper ? 0.002 : 0.502) + (r / (rows - 1)) * 0.49);
      g.col.push(1, 1, 1);
      g.anchor.push(i);
    }
  }
  for (let r = 0; r < rows - 1; r++) {
    for (let i = 0; i < n - 1; i++) {
      const a = r * n + i;
      g.idx.push(a, a + 1, a + n, a + 1, a + n + 1, a + n);
    }
  }
  return g;
}
