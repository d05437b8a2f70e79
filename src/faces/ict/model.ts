/**
 * The ICT FaceKit data committed beside this file (mesh.bin, identity.bin, expressions.bin; see
 * README.md), decoded once per process: the generic mesh, its identity modes and its ARKit
 * expression deltas. A head is `neutral + Σ wᵢ·identityᵢ + Σ eⱼ·expressionⱼ` (centimetres, +y up,
 * +z forward, +x the subject's left).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readContainer } from './format.js';

export interface PartRange {
  name: string;
  start: number;
  count: number;
  triStart: number;
  triCount: number;
}

export interface IctModel {
  vertexCount: number;
  neutral: Float32Array;
  /** Per uv index (u, v); tiles along u per part, as in the FaceKit. */
  uvs: Float32Array;
  /** Per triangle corner: vertex and uv index. */
  triVertex: Uint16Array;
  triUv: Uint16Array;
  parts: Map<string, PartRange>;
  landmarks68: number[];
  identityModes: number;
  /** Identity mode m, vertex i, axis k: identity[(m * vertexCount + i) * 3 + k] * identityScale[m]. */
  identity: Int8Array;
  identityScale: number[];
  shapes: Map<string, { index: Uint32Array; delta: Float32Array }>;
}

const DIR = path.dirname(fileURLToPath(import.meta.url));
let cached: IctModel | null = null;

export function loadIctModel(): IctModel {
  if (cached) return cached;
  const mesh = readContainer<{
    vertexCount: number;
    parts: PartRange[];
    positionMin: number[];
    positionMax: number[];
    uvMin: number[];
    uvMax: number[];
    landmarks68: number[];
  }>(fs.readFileSync(path.join(DIR, 'mesh.bin')));
  const m = mesh.meta;
  const q = mesh.get<Uint16Array>('positions');
  const neutral = new Float32Array(q.length);
  for (let i = 0; i < q.length; i++) neutral[i] = m.positionMin[i % 3] + (q[i] / 65535) * (m.positionMax[i % 3] - m.positionMin[i % 3]);
  const uq = mesh.get<Uint16Array>('uvs');
  const uvs = new Float32Array(uq.length);
  for (let i = 0; i < uq.length; i++) uvs[i] = m.uvMin[i % 2] + (uq[i] / 65535) * (m.uvMax[i % 2] - m.uvMin[i % 2]);

  const id = readContainer<{ modes: number; scales: number[] }>(fs.readFileSync(path.join(DIR, 'identity.bin')));
  const ex = readContainer<{ shapes: { name: string; start: number; count: number; scale: number }[] }>(fs.readFileSync(path.join(DIR, 'expressions.bin')));
  const exIdx = ex.get<Uint16Array>('indices');
  const exDelta = ex.get<Int16Array>('deltas');
  const shapes = new Map<string, { index: Uint32Array; delta: Float32Array }>();
  for (const s of ex.meta.shapes) {
    const index = new Uint32Array(s.count);
    const delta = new Float32Array(s.count * 3);
    let v = 0;
    for (let k = 0; k < s.count; k++) {
      v = k === 0 ? exIdx[s.start] : v + exIdx[s.start + k];
      index[k] = v;
      for (let a = 0; a < 3; a++) delta[k * 3 + a] = exDelta[(s.start + k) * 3 + a] * s.scale;
    }
    shapes.set(s.name, { index, delta });
  }
  cached = {
    vertexCount: m.vertexCount,
    neutral,
    uvs,
    triVertex: Uint16Array.from(mesh.get<Uint16Array>('triangleVertices')),
    triUv: Uint16Array.from(mesh.get<Uint16Array>('triangleUvs')),
    parts: new Map(m.parts.map((p) => [p.name, p])),
    landmarks68: m.landmarks68,
    identityModes: id.meta.modes,
    identity: Int8Array.from(id.get<Int8Array>('modes')),
    identityScale: id.meta.scales,
    shapes,
  };
  return cached;
}

/** The rest shape of one identity (coefficients beyond the modes kept are ignored). */
export function identityShape(model: IctModel, coeffs: number[]): Float32Array {
  const pos = Float32Array.from(model.neutral);
  const n = model.vertexCount * 3;
  coeffs.slice(0, model.identityModes).forEach((w, m) => {
    if (!w) return;
    const s = w * model.identityScale[m];
    const base = m * n;
    for (let i = 0; i < n; i++) pos[i] += model.identity[base + i] * s;
  });
  return pos;
}

/** Dense delta of a weighted sum of expression shapes. */
export function expressionDelta(model: IctModel, recipe: Record<string, number>): Float32Array {
  const d = new Float32Array(model.vertexCount * 3);
  for (const [name, w] of Object.entries(recipe)) {
    const s = model.shapes.get(name);
    if (!s) throw new Error(`face data: no expression ${name}`);
    for (let k = 0; k < s.index.length; k++) {
      const o = s.index[k] * 3;
      d[o] += s.delta[k * 3] * w;
      d[o + 1] += s.delta[k * 3 + 1] * w;
      d[o + 2] += s.delta[k * 3 + 2] * w;
    }
  }
  return d;
}
