/**
 * Clothed shoulders under the head, and the small geometry type the hair and torso generators
 * share. Centimetres in head space; the face builder converts to metres.
 */
import { smoothstep, type V3 } from './vec.js';

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
 * Shirt: a lathe whose cross-section is a superellipse: a crew neckline lying on the neck, the trapezius sloping
 * gently out to the shoulders, rounded deltoids, then the chest and upper arms falling straight.
 * The profile is a Catmull-Rom curve through its key rows: easing each segment separately would
 * flatten the slope at every row, which shades as horizontal bands.
 */
/** How far (cm) the neckline dips at the front below its height at the back. */
export const NECKLINE_DIP = 3.6;

export function torso(male: boolean, fit?: (y: number) => { hw: number; zmin: number; zmax: number } | null): Geo {
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
    return p1.map(
      (_, j) =>
        0.5 * (2 * p1[j] + (p2[j] - p0[j]) * s + (2 * p0[j] - 5 * p1[j] + 4 * p2[j] - p3[j]) * s * s + (3 * p1[j] - p0[j] - 3 * p2[j] + p3[j]) * s * s * s),
    ) as [number, number, number, number];
  };
  const yTop = prof[0][0];
  const yBottom = -26;
  grid(
    g,
    rows,
    48,
    (u, v) => {
      const [y0, hw, hd, cz] = sample(v);
      const a = u * Math.PI * 2;
      // The neckline: a crew neck that dips at the front (the throat and the notch between the
      // collarbones show, as in a video call) and sits at the base of the neck at the back. The rows
      // above the chest are pulled down at the front, evenly, so they never fold over each other.
      const dip = NECKLINE_DIP * smoothstep(0.1, 1, Math.cos(a)) ** 1.5;
      const y = y0 > yBottom ? y0 - dip * ((y0 - yBottom) / (yTop - yBottom)) : y0;
      const e = 0.7 + 0.3 * smoothstep(0.15, 0.45, v); // rounder at the collar, boxier at the chest
      const sx = Math.sign(Math.sin(a)) * Math.abs(Math.sin(a)) ** e;
      const sz = Math.sign(Math.cos(a)) * Math.abs(Math.cos(a)) ** e;
      // The shoulder line falls a little from the neck to the arm.
      const dropY = -Math.abs(sx) * 1.4 * smoothstep(0.05, 0.3, v) * (1 - smoothstep(0.4, 0.7, v));
      // the inside of the collar's edge, seen past the neck, is in shadow
      const collar = v < 0.03 ? 0.55 : 1;
      // A head whose neck flares into the shoulders (a scanned one) must stay inside the shirt.
      let [w, zc, d] = [hw * k, cz, hd * k];
      const f = fit?.(y);
      if (f) {
        w = Math.max(w, f.hw + 0.5);
        const lo = Math.min(zc - d, f.zmin - 0.5);
        const hi = Math.max(zc + d, f.zmax + 0.5);
        zc = (lo + hi) / 2;
        d = (hi - lo) / 2;
        // At the top the collar lies on the skin (not a wide ring standing off the neck, which read
        // as a turtleneck): the neck's own outline plus the cloth's thickness.
        const hug = 1 - smoothstep(0.08, 0.3, v);
        if (hug > 0) {
          const lo2 = f.zmin - 0.35;
          const hi2 = f.zmax + 0.35;
          w += (f.hw + 0.35 - w) * hug;
          zc += ((lo2 + hi2) / 2 - zc) * hug;
          d += ((hi2 - lo2) / 2 - d) * hug;
        }
      }
      return { p: [sx * w, y + dropY, zc + sz * d], c: [collar, collar, collar], uv: [u * 6, v * 8] };
    },
    true,
  ); // rows run down and columns round to the right: flipped, the faces point outwards
  return g;
}
