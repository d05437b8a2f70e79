/**
 * Hair as layered shells over the skull: an opaque inner layer that hides the scalp and an outer
 * alpha-tested layer whose strand texture ends in ragged tips at the hairline and at the ends.
 * The shell is a grid over (azimuth around the vertical axis, arc from the crown); each style sets
 * the hairline, the thickness, how far the hair falls below the skull and extra volumes (bun,
 * ponytail). Curly and wavy styles displace the shell with noise for clumps.
 */
import type { FaceLook } from './builtin.js';
import type { Geo } from './parts.js';
import { makeNoise } from './image.js';
import { clamp, cross, norm, rng, smoothstep, type V3 } from './vec.js';

interface Style {
  thick: number;
  /** y (cm) where the hair ends at the back and at the sides, or null to stop at the hairline. */
  fallBack: number | null;
  fallSide: number | null;
  /** Extra outward flare of the fall at its ends (cm). */
  flare: number;
  bumps: number;
  wave: number;
  /** The hairline's drop at the sides (cm below the default). */
  sideDrop: number;
  tight: boolean;
  /** How far (radians of arc) the hair falls past the front hairline onto the forehead. */
  fringe?: number;
}

const STYLES: Record<FaceLook['hairStyle'], Style> = {
  short: { thick: 1.1, fallBack: null, fallSide: null, flare: 0, bumps: 0.25, wave: 0, sideDrop: 0, tight: false },
  bald: { thick: 0, fallBack: null, fallSide: null, flare: 0, bumps: 0, wave: 0, sideDrop: 0, tight: true },
  buzz: { thick: 0.3, fallBack: null, fallSide: null, flare: 0, bumps: 0.03, wave: 0, sideDrop: 0, tight: true },
  long: { thick: 1.3, fallBack: -24, fallSide: -19, flare: 1.5, bumps: 0.2, wave: 0, sideDrop: 1, tight: false },
  bob: { thick: 1.6, fallBack: -6.5, fallSide: -7.5, flare: -0.8, bumps: 0.15, wave: 0, sideDrop: 1, tight: false, fringe: 0.14 },
  bun: { thick: 0.75, fallBack: null, fallSide: null, flare: 0, bumps: 0.08, wave: 0, sideDrop: 0.5, tight: true },
  ponytail: { thick: 0.75, fallBack: null, fallSide: null, flare: 0, bumps: 0.08, wave: 0, sideDrop: 0.5, tight: true },
  curly: { thick: 3.2, fallBack: -9, fallSide: -6, flare: 2.5, bumps: 1.1, wave: 0, sideDrop: 1, tight: false },
  wavy: { thick: 1.5, fallBack: -3, fallSide: 0.5, flare: 0.5, bumps: 0.35, wave: 0.5, sideDrop: 0, tight: false, fringe: 0.2 },
};

const CENTER: V3 = [0, 3.4, -4.4];

/** Polar angle (from straight up, radians) of the hairline at azimuth theta (0 = front). */
function hairlinePhi(theta: number, st: Style): number {
  const a = Math.abs(theta) / Math.PI; // 0 front .. 1 back
  const keys: [number, number][] = [
    // a rounded front hairline (no sharp widow's peak), receding at the temples
    [0, 48],
    [0.07, 50],
    [0.15, 61 + st.sideDrop * 5],
    [0.22, 80 + st.sideDrop * 8],
    [0.32, 90 + st.sideDrop * 6],
    [0.42, 84],
    [0.6, 112],
    [1, 132],
  ];
  for (let i = 0; i < keys.length - 1; i++) {
    if (a <= keys[i + 1][0]) {
      const t = (a - keys[i][0]) / (keys[i + 1][0] - keys[i][0]);
      const e = t * t * (3 - 2 * t);
      return ((keys[i][1] + (keys[i + 1][1] - keys[i][1]) * e) * Math.PI) / 180;
    }
  }
  return (132 * Math.PI) / 180;
}

type Sdf = (p: V3) => number;
/** The skull the shells wrap: the head builder passes its own (hairShells' argument). */
let skullSdf: Sdf = () => 1;

/** Point on the scalp in direction (phi from up, theta from front) from the skull centre. */
function scalp(phi: number, theta: number): { p: V3; n: V3 } {
  const dir: V3 = [Math.sin(phi) * Math.sin(theta), Math.cos(phi), Math.sin(phi) * Math.cos(theta)];
  let lo = 0;
  let hi = 30;
  for (let i = 0; i < 30; i++) {
    const mid = (lo + hi) / 2;
    if (skullSdf([CENTER[0] + dir[0] * mid, CENTER[1] + dir[1] * mid, CENTER[2] + dir[2] * mid]) < 0) lo = mid;
    else hi = mid;
  }
  return { p: [CENTER[0] + dir[0] * lo, CENTER[1] + dir[1] * lo, CENTER[2] + dir[2] * lo], n: dir };
}

/** Azimuth (radians, 0 = front, + towards the subject's left) of a style's side parting, or null. */
const PARTING: Partial<Record<FaceLook['hairStyle'], number>> = { long: 0.42, bob: -0.38, wavy: 0.45, short: 0.5 };

export function hairShells(look: FaceLook, seed: number, sdf: Sdf): { inner: Geo; outer: Geo; extra: Geo; cards: Geo; soft: Geo } {
  skullSdf = sdf;
  const st = STYLES[look.hairStyle];
  const noise = makeNoise(seed, 24);
  const cols = 72;
  const rowsTop = 26;
  const fall = st.fallBack !== null;
  const rowsFall = fall ? 20 : 0;
  const rows = rowsTop + rowsFall;
  const parting = PARTING[look.hairStyle] ?? null;

  /**
   * Shell point at (fractional) column c and row r. `layer` 0 is the inner, opaque layer. For
   * falling styles the fall blends in over a band of azimuths, so neighbouring columns never jump
   * from the hairline to the shoulders (that jump made long slivers whose back faces showed as
   * dark vertical streaks beside the face).
   */
  const point = (c: number, r: number, layer: number): { p: V3; v: number; part: number } => {
    const thickScale = layer === 0 ? 0.55 : 1;
    const theta = (c / cols) * Math.PI * 2 - Math.PI; // -π..π, 0 = front
    const a = Math.abs(theta) / Math.PI;
    const line = hairlinePhi(theta, st);
    const fw = fall ? smoothstep(0.22, 0.32, a) : 0;
    const phiEnd = line + (Math.min(line, (100 * Math.PI) / 180) - line) * fw;
    const bump = (noise((c / cols) * 24, r * 0.35) - 0.5) * st.bumps * 2;
    // the parting: a narrow groove from the front hairline back to the crown
    let part = 0;
    if (parting !== null) {
      const dTheta = Math.abs(Math.atan2(Math.sin(theta - parting), Math.cos(theta - parting)));
      const phiHere = (Math.min(r, rowsTop - 1) / (rowsTop - 1)) * phiEnd;
      part = smoothstep(0.09, 0.0, dTheta * Math.sin(Math.max(phiHere, 0.25))) * smoothstep(0.25, 0.45, phiHere) * smoothstep(1.05, 0.85, phiHere);
    }
    if (r <= rowsTop - 1) {
      const t = r / (rowsTop - 1);
      // a fringe: at the front the hair carries on past the hairline, lying a little off the brow
      const fr = (st.fringe ?? 0) * smoothstep(0.2, 0.06, a) * (0.75 + 0.5 * noise((c / cols) * 24, 7.5));
      // the opaque inner layer stops short of the hairline, so the outer layer's ragged tips
      // make the edge there instead of a hard line
      const phi = t * (phiEnd + fr) * (layer === 0 ? 1 - 0.1 * (1 - fw) : 1);
      const s = scalp(phi, theta);
      // Thinner towards the hairline so the edge is not a step; tight styles hug the skull.
      const edge = fw + (1 - fw) * Math.max(smoothstep(1, 0.8, t), fr > 0 ? 0.6 * smoothstep(0, 0.05, fr) : 0);
      const th =
        (st.thick * (0.55 + 0.45 * Math.cos(phi * 0.7)) * edge * (1 - 0.6 * part) + 0.08 + bump * edge + fr * 1.2 * smoothstep(0.6, 1, t)) * thickScale;
      return { p: [s.p[0] + s.n[0] * th, s.p[1] + s.n[1] * th, s.p[2] + s.n[2] * th], v: t * (0.97 + (0.45 - 0.97) * fw), part };
    }
    const s = scalp(phiEnd, theta);
    const th = (st.thick * fw + 0.08) * thickScale;
    const top: V3 = [s.p[0] + s.n[0] * th, s.p[1] + s.n[1] * th, s.p[2] + s.n[2] * th];
    if (fw <= 0) return { p: top, v: 0.995, part };
    const t = (r - rowsTop + 1) / rowsFall;
    const sideness = Math.abs(Math.sin(theta));
    const yEndFull = st.fallSide! + (st.fallBack! - st.fallSide!) * smoothstep(0.45, 0.95, a) + (a < 0.5 ? (0.5 - a) * 22 : 0);
    const yEnd = top[1] + (yEndFull - top[1]) * fw;
    const y = top[1] + (yEnd - top[1]) * t;
    const h = Math.hypot(top[0] - CENTER[0], top[2] - CENTER[2]);
    // hair falls straight, over the shoulders at the back, and curls in (bob) or flares at the end
    const flare = (st.flare * t * t + (st.tight ? 0 : 0.6) * Math.sin(Math.PI * Math.min(1, t * 1.6)) * sideness) * fw;
    const wave = st.wave * Math.sin(t * 9 + theta * 3) * t;
    const out = h + flare + wave + bump * (0.5 + t) - (layer === 0 ? 0.5 : 0);
    const dx = (top[0] - CENTER[0]) / h;
    const dz = (top[2] - CENTER[2]) / h;
    // long hair rests on the back and shoulders rather than falling through them
    const back = a > 0.6 && y < -12 ? (y + 12) * -0.25 : 0;
    return { p: [CENTER[0] + dx * out, y, CENTER[2] + dz * out - back], v: 0.45 + t * 0.55 * fw + (1 - fw) * 0.545, part };
  };

  /**
   * One shell. The inner layer is hidden under the outer one except between strands, so it takes
   * every second row and column (a quarter of the triangles; its chords sag < 0.1 mm), keeping the
   * last row so it still ends where the outer one does.
   */
  const build = (layer: number): Geo => {
    const g: Geo = { pos: [], uv: [], col: [], idx: [] };
    const step = layer === 0 ? 2 : 1;
    const rowList: number[] = [];
    for (let r = 0; r < rows; r += step) rowList.push(r);
    if (rowList[rowList.length - 1] !== rows - 1) rowList.push(rows - 1);
    const nc = cols / step;
    for (const r of rowList) {
      for (let cc = 0; cc < nc; cc++) {
        const c = cc * step;
        const { p, v, part } = point(c, r, layer);
        g.pos.push(...p);
        g.uv.push((c / cols) * 16, clamp(v, 0, 0.995));
        // the inner layer is only a little darker: it shows between strands, not as black gaps
        const sh = (layer === 0 ? 0.8 : 1) * (1 - 0.45 * part);
        g.col.push(sh, sh, sh);
      }
    }
    for (let r = 0; r < rowList.length - 1; r++) {
      for (let c = 0; c < nc; c++) {
        const a = r * nc + c;
        const b = r * nc + ((c + 1) % nc);
        g.idx.push(a, a + nc, b, b, a + nc, b + nc);
      }
    }
    return g;
  };

  // Loose locks over the shell: ribbons that follow it a little further out and end at their own
  // length in ragged tips, so the outline breaks up into strands instead of a hard helmet edge.
  const cards: Geo = { pos: [], uv: [], col: [], idx: [] };
  const rand = rng(seed ^ 0x4a1f);
  const curly = look.hairStyle === 'curly';
  const nCards = look.hairStyle === 'buzz' || curly ? 0 : fall ? 150 : 90;
  for (let k = 0; k < nCards; k++) {
    const c0 = rand() * cols;
    const width = curly ? 0.7 + rand() * 0.8 : (fall ? 1.6 : 1.1) + rand() * 1.6; // in columns
    const r0 = curly ? 1 + rand() * (rows - 4) : 2 + rand() * (fall ? rowsTop * 0.7 : rowsTop * 0.55);
    const r1 = curly
      ? Math.min(rows - 1, r0 + 3 + rand() * 2.5)
      : fall
        ? Math.min(rows - 1, r0 + 8 + rand() * (rows - r0))
        : Math.min(rowsTop - 1 - rand() * 3, r0 + 6 + rand() * 12);
    if (r1 - r0 < 3) continue;
    // curls stand off the mass in springy coils; straight locks lie close
    const lift = curly ? 0.3 + rand() * 1.4 : 0.15 + rand() * (st.thick * 0.25 + 0.2);
    const drift = (rand() - 0.5) * (curly ? 5 : 2.5); // locks wander a little sideways
    const u0 = rand() * 16;
    const n = 10;
    const base = cards.pos.length / 3;
    for (let i = 0; i <= n; i++) {
      const t = i / n;
      const r = r0 + (r1 - r0) * t;
      for (const side of [-0.5, 0.5]) {
        const c = c0 + side * width * (1 - 0.5 * t * t) + drift * t * t;
        const { p, part } = point(((c % cols) + cols) % cols, r, 1);
        const o: V3 = [p[0] - CENTER[0], p[1] - CENTER[1] * (r > rowsTop ? 0 : 1), p[2] - CENTER[2]];
        if (r > rowsTop) o[1] = 0;
        const ol = Math.hypot(o[0], o[1], o[2]) || 1;
        const out = lift * (0.4 + 0.6 * Math.sin(Math.PI * Math.min(1, t * 1.3 + 0.1)));
        cards.pos.push(p[0] + (o[0] / ol) * out, p[1] + (o[1] / ol) * out, p[2] + (o[2] / ol) * out);
        // v runs 0.15 → 0.99 so every lock ends in the texture's ragged tips
        cards.uv.push(u0 + (side + 0.5) * width * (16 / cols), 0.15 + 0.84 * t);
        const sh = (0.9 + 0.2 * rand()) * (1 - 0.45 * part);
        cards.col.push(sh, sh, sh);
      }
    }
    for (let i = 0; i < n; i++) {
      const a = base + i * 2;
      cards.idx.push(a, a + 2, a + 1, a + 1, a + 2, a + 3);
    }
  }

  // Curls: narrow ribbons wound into springy coils standing off the mass, each ending in ragged
  // tips; side by side they break the outline into ringlets instead of flat paper patches.
  if (curly) {
    const segs = 14;
    for (let k = 0; k < 430; k++) {
      const c0 = rand() * cols;
      const r0 = 1 + rand() * (rows - 3);
      const { p: root } = point(c0, r0, 1);
      const o: V3 = [root[0] - CENTER[0], root[1] - CENTER[1] * (r0 > rowsTop ? 0 : 1), root[2] - CENTER[2]];
      const ol = Math.hypot(o[0], o[1], o[2]) || 1;
      const n: V3 = [o[0] / ol, o[1] / ol, o[2] / ol];
      // the coil's axis leans from the scalp outwards and down (gravity pulls the ringlet)
      const axis = norm([n[0] * 0.7, n[1] * 0.7 - 0.55, n[2] * 0.7]);
      const side = norm(cross(axis, Math.abs(axis[1]) > 0.9 ? [1, 0, 0] : [0, 1, 0]));
      const up = cross(axis, side);
      const radius = 0.45 + rand() * 0.4;
      const length = 2.2 + rand() * 2.4;
      const turns = 1.4 + rand() * 0.9;
      const width = 0.45 + rand() * 0.3;
      const phase = rand() * Math.PI * 2;
      const lift = 0.1 + rand() * 0.9;
      const u0 = rand() * 16;
      const sh = 0.85 + 0.25 * rand();
      const base = cards.pos.length / 3;
      for (let i = 0; i <= segs; i++) {
        const t = i / segs;
        const a = phase + t * turns * Math.PI * 2;
        const rr = radius * (1 - 0.3 * t);
        const ring: V3 = [
          side[0] * Math.cos(a) + up[0] * Math.sin(a),
          side[1] * Math.cos(a) + up[1] * Math.sin(a),
          side[2] * Math.cos(a) + up[2] * Math.sin(a),
        ];
        const centre: V3 = [
          root[0] + n[0] * lift + axis[0] * length * t,
          root[1] + n[1] * lift + axis[1] * length * t,
          root[2] + n[2] * lift + axis[2] * length * t,
        ];
        // the ribbon's width runs along the coil's axis, so it reads as a flat lock wound round
        for (const s of [-0.5, 0.5]) {
          cards.pos.push(
            centre[0] + ring[0] * rr + axis[0] * s * width,
            centre[1] + ring[1] * rr + axis[1] * s * width,
            centre[2] + ring[2] * rr + axis[2] * s * width,
          );
          cards.uv.push(u0 + (s + 0.5) * 0.6, 0.15 + 0.84 * t);
          cards.col.push(sh, sh, sh);
        }
      }
      for (let i = 0; i < segs; i++) {
        const a = base + i * 2;
        cards.idx.push(a, a + 2, a + 1, a + 1, a + 2, a + 3);
      }
    }
  }

  const extra: Geo = { pos: [], uv: [], col: [], idx: [] };
  const blob = (center: V3, rad: V3, twist: number): void => {
    const start = extra.pos.length / 3;
    const R = 16;
    const C = 24;
    for (let r = 0; r <= R; r++) {
      for (let c = 0; c < C; c++) {
        const th = (r / R) * Math.PI;
        const ph = (c / C) * Math.PI * 2;
        const b = 1 + 0.06 * Math.sin(ph * 3 + th * twist);
        extra.pos.push(
          center[0] + Math.sin(th) * Math.cos(ph) * rad[0] * b,
          center[1] + Math.cos(th) * rad[1] * b,
          center[2] + Math.sin(th) * Math.sin(ph) * rad[2] * b,
        );
        extra.uv.push((c / C) * 3 + r * 0.08 * twist, 0.1 + (r / R) * 0.6);
        extra.col.push(1, 1, 1);
      }
    }
    for (let r = 0; r < R; r++) {
      for (let c = 0; c < C; c++) {
        const a = start + r * C + c;
        const b = start + r * C + ((c + 1) % C);
        extra.idx.push(a, b, a + C, b, b + C, a + C);
      }
    }
  };
  if (look.hairStyle === 'bun') blob([0, 9.5, -13.2], [3.6, 3.2, 3.4], 6);
  if (look.hairStyle === 'ponytail') {
    // tie, then a tapered tube falling down the back
    blob([0, 5.5, -14.6], [1.6, 1.6, 1.4], 0);
    const start = extra.pos.length / 3;
    const R = 18;
    const C = 16;
    for (let r = 0; r <= R; r++) {
      const t = r / R;
      const cy = 5.5 - t * 22;
      const cz = -15.6 - Math.sin(t * Math.PI * 0.7) * 2.5 + t * 2;
      const rad = 1.5 * (1 - t * 0.7) * (t < 0.1 ? 0.6 + 4 * t : 1);
      for (let c = 0; c < C; c++) {
        const ph = (c / C) * Math.PI * 2;
        extra.pos.push(Math.cos(ph) * rad * 1.1, cy, cz + Math.sin(ph) * rad * 0.8);
        extra.uv.push((c / C) * 3, 0.05 + t * 0.94);
        extra.col.push(1, 1, 1);
      }
    }
    for (let r = 0; r < R; r++) {
      for (let c = 0; c < C; c++) {
        const a = start + r * C + c;
        const b = start + r * C + ((c + 1) % C);
        extra.idx.push(a, a + C, b, b, a + C, b + C);
      }
    }
    // Locks around the core, each its own length, spreading a little towards the end and ending
    // in ragged tips: the tail's outline breaks up into strands instead of a smooth tube.
    const path = (t: number): V3 => [0, 5.5 - t * 22, -15.6 - Math.sin(t * Math.PI * 0.7) * 2.5 + t * 2];
    const radAt = (t: number) => 2.2 * (1 - t * 0.7) * (t < 0.1 ? 0.6 + 4 * t : 1);
    const segs = 12;
    for (let k = 0; k < 90; k++) {
      const ang = rand() * Math.PI * 2;
      const depth = 0.55 + rand() * 0.75;
      const tEnd = 0.72 + rand() * 0.3;
      const width = 0.6 + rand() * 0.8;
      const swing = (rand() - 0.5) * 3;
      const u0 = rand() * 16;
      const sh = 0.85 + 0.25 * rand();
      const base = cards.pos.length / 3;
      for (let i = 0; i <= segs; i++) {
        const t = 0.04 + (tEnd - 0.04) * (i / segs);
        const c = path(t);
        const a = ang + swing * t;
        const rr = radAt(t) * depth * (1 + 0.5 * t * t);
        const radial: V3 = [Math.cos(a) * 1.1, 0, Math.sin(a) * 0.8];
        const tangent: V3 = [-Math.sin(a), 0, Math.cos(a)];
        const w = width * (1 - 0.4 * (i / segs));
        for (const s of [-0.5, 0.5]) {
          cards.pos.push(c[0] + radial[0] * rr + tangent[0] * s * w, c[1], c[2] + radial[2] * rr + tangent[2] * s * w);
          cards.uv.push(u0 + (s + 0.5) * 0.5, 0.15 + 0.84 * (i / segs));
          cards.col.push(sh, sh, sh);
        }
      }
      for (let i = 0; i < segs; i++) {
        const a = base + i * 2;
        cards.idx.push(a, a + 2, a + 1, a + 1, a + 2, a + 3);
      }
    }
  }
  const outer = build(1);
  return { inner: build(0), outer, extra, cards, soft: softEdges([outer, cards]) };
}

/**
 * The hair's soft edges: the triangles where the strand texture fades out (hairline, ends, the
 * tips of locks and curls) again, for an alpha-blended layer drawn over the alpha-tested one at
 * the same depth. The tested layer keeps the hair's occlusion right; the blended copy adds the
 * partly covered fringe the cutoff throws away, so edges fade instead of stopping hard.
 */
function softEdges(geos: Geo[], fadeFrom = 0.76): Geo {
  const soft: Geo = { pos: [], uv: [], col: [], idx: [] };
  for (const g of geos) {
    const remap = new Map<number, number>();
    const take = (i: number): number => {
      let j = remap.get(i);
      if (j === undefined) {
        j = soft.pos.length / 3;
        remap.set(i, j);
        soft.pos.push(g.pos[i * 3], g.pos[i * 3 + 1], g.pos[i * 3 + 2]);
        soft.uv.push(g.uv[i * 2], g.uv[i * 2 + 1]);
        soft.col.push(g.col[i * 3], g.col[i * 3 + 1], g.col[i * 3 + 2]);
      }
      return j;
    };
    for (let t = 0; t < g.idx.length; t += 3) {
      const tri = [g.idx[t], g.idx[t + 1], g.idx[t + 2]];
      if (Math.max(...tri.map((i) => g.uv[i * 2 + 1])) < fadeFrom) continue;
      soft.idx.push(...tri.map(take));
    }
  }
  return soft;
}
