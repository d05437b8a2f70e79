/**
 * Development-time step: reads the ICT FaceKit's OBJ files (ICT-VGL/ICT-FaceKit, MIT) and writes the
 * compact data committed in src/faces/ict/ (mesh, identity modes, expression deltas), from
 * which `npm install` builds the face GLBs offline. See src/faces/ict/README.md.
 *
 * Usage: node --import tsx scripts/extract-facekit.ts <FaceKit checkout or its FaceXModel folder>
 *        (or FACEKIT_DIR=… node --import tsx scripts/extract-facekit.ts)
 */
import fs from 'node:fs';
import path from 'node:path';
import { writeContainer } from '../src/faces/ict/format.js';

const arg = process.argv[2] ?? process.env.FACEKIT_DIR;
if (!arg) {
  console.error('usage: extract-facekit.ts <ICT-FaceKit dir> (or FACEKIT_DIR)');
  process.exit(2);
}
const dir = fs.existsSync(path.join(arg, 'FaceXModel')) ? path.join(arg, 'FaceXModel') : arg;
const OUT = path.join(path.dirname(new URL(import.meta.url).pathname), '..', 'src', 'player', 'faces', 'ict');

/** Identity modes kept: the PCA modes are ordered by variance; past ~30 they move < 1.5 mm. */
const IDENTITY_MODES = 30;
/** Expression deltas below this (cm) are dropped from the sparse lists: 0.05 mm. */
const EXPRESSION_EPS = 0.005;

/**
 * Parts kept, as ranges of the FaceKit's vertex indices (its README's tables). Dropped: the molars
 * (unseen behind the cheeks), lacrimal fluid and eye-blend meshes (made for Unreal's shaders).
 */
const PARTS: { name: string; ranges: [number, number][] }[] = [
  { name: 'face', ranges: [[0, 9408]] },
  { name: 'headNeck', ranges: [[9409, 11247]] },
  { name: 'mouthSocket', ranges: [[11248, 13293]] },
  { name: 'eyeSocketLeft', ranges: [[13294, 13677]] },
  { name: 'eyeSocketRight', ranges: [[13678, 14061]] },
  { name: 'gumsTongue', ranges: [[14062, 17038]] },
  // 2nd bicuspid to 2nd bicuspid, upper then lower.
  {
    name: 'teeth',
    ranges: [
      [17607, 18678],
      [19814, 20883],
    ],
  },
  { name: 'scleraLeft', ranges: [[21451, 22220]] },
  { name: 'irisLeft', ranges: [[22221, 23020]] },
  { name: 'scleraRight', ranges: [[23021, 23790]] },
  { name: 'irisRight', ranges: [[23791, 24590]] },
  { name: 'eyeOcclusionLeft', ranges: [[25047, 25198]] },
  { name: 'eyeOcclusionRight', ranges: [[25199, 25350]] },
  { name: 'eyelashesLeft', ranges: [[25351, 26034]] },
  { name: 'eyelashesRight', ranges: [[26035, 26718]] },
];

/** Multi-PIE 68-point landmarks (FaceKit README; all in the face part, whose indices are kept). */
const LANDMARKS_68 = [
  1225, 1888, 1052, 367, 1719, 1722, 2199, 1447, 966, 3661, 4390, 3927, 3924, 2608, 3272, 4088, 3443, 268, 493, 1914, 2044, 1401, 3615, 4240, 4114, 2734, 2509,
  978, 4527, 4942, 4857, 1140, 2075, 1147, 4269, 3360, 1507, 1542, 1537, 1528, 1518, 1511, 3742, 3751, 3756, 3721, 3725, 3732, 5708, 5695, 2081, 0, 4275, 6200,
  6213, 6346, 6461, 5518, 5957, 5841, 5702, 5711, 5533, 6216, 6207, 6470, 5517, 5966,
];

function readVertices(file: string): Float32Array {
  const out: number[] = [];
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (line.startsWith('v ')) {
      const p = line.split(/\s+/);
      out.push(+p[1], +p[2], +p[3]);
    }
  }
  return Float32Array.from(out);
}

// --- the generic mesh -----------------------------------------------------------------------
const neutralText = fs.readFileSync(path.join(dir, 'generic_neutral_mesh.obj'), 'utf8');
const V: number[] = [];
const VT: number[] = [];
const F: { v: number[]; t: number[] }[] = [];
for (const line of neutralText.split('\n')) {
  if (line.startsWith('v ')) {
    const p = line.split(/\s+/);
    V.push(+p[1], +p[2], +p[3]);
  } else if (line.startsWith('vt ')) {
    const p = line.split(/\s+/);
    VT.push(+p[1], +p[2]);
  } else if (line.startsWith('f ')) {
    const c = line
      .trim()
      .split(/\s+/)
      .slice(1)
      .map((s) => s.split('/').map((n) => parseInt(n, 10) - 1));
    F.push({ v: c.map((x) => x[0]), t: c.map((x) => x[1]) });
  }
}
const vertexCount = V.length / 3;
console.log(`neutral: ${vertexCount} vertices, ${VT.length / 2} uvs, ${F.length} polygons`);

const remap = new Int32Array(vertexCount).fill(-1);
const partOf = new Int32Array(vertexCount).fill(-1);
const kept: number[] = [];
const partInfo: { name: string; start: number; count: number; triStart: number; triCount: number }[] = [];
PARTS.forEach((part, pi) => {
  const start = kept.length;
  for (const [a, b] of part.ranges)
    for (let v = a; v <= b; v++) {
      remap[v] = kept.length;
      partOf[v] = pi;
      kept.push(v);
    }
  partInfo.push({ name: part.name, start, count: kept.length - start, triStart: 0, triCount: 0 });
});

// Triangles grouped by part; quads split along their shorter diagonal.
const uvRemap = new Map<number, number>();
const uvs: number[] = [];
const trisByPart: number[][] = PARTS.map(() => []);
const len2 = (a: number, b: number) => (V[a * 3] - V[b * 3]) ** 2 + (V[a * 3 + 1] - V[b * 3 + 1]) ** 2 + (V[a * 3 + 2] - V[b * 3 + 2]) ** 2;
for (const f of F) {
  if (f.v.some((v) => remap[v] < 0)) continue;
  const part = partOf[f.v[0]];
  const corner = (k: number) => {
    const t = f.t[k];
    let ui = uvRemap.get(t);
    if (ui === undefined) {
      ui = uvs.length / 2;
      uvRemap.set(t, ui);
      uvs.push(VT[t * 2], VT[t * 2 + 1]);
    }
    return [remap[f.v[k]], ui];
  };
  const tri = (a: number, b: number, c: number) => trisByPart[part].push(...corner(a), ...corner(b), ...corner(c));
  if (f.v.length === 3) tri(0, 1, 2);
  else if (f.v.length === 4) {
    if (len2(f.v[0], f.v[2]) <= len2(f.v[1], f.v[3])) {
      tri(0, 1, 2);
      tri(0, 2, 3);
    } else {
      tri(0, 1, 3);
      tri(1, 2, 3);
    }
  } else for (let k = 1; k + 1 < f.v.length; k++) tri(0, k, k + 1);
}
const corners: number[] = [];
trisByPart.forEach((list, pi) => {
  partInfo[pi].triStart = corners.length / 6;
  partInfo[pi].triCount = list.length / 6;
  corners.push(...list);
});

// Positions quantised to 16 bits over the kept vertices' bounding box.
const min = [Infinity, Infinity, Infinity];
const max = [-Infinity, -Infinity, -Infinity];
for (const v of kept)
  for (let k = 0; k < 3; k++) {
    min[k] = Math.min(min[k], V[v * 3 + k]);
    max[k] = Math.max(max[k], V[v * 3 + k]);
  }
const positions = new Uint16Array(kept.length * 3);
kept.forEach((v, i) => {
  for (let k = 0; k < 3; k++) positions[i * 3 + k] = Math.round(((V[v * 3 + k] - min[k]) / (max[k] - min[k])) * 65535);
});
const uvMin = [Math.min(...uvs.filter((_, i) => i % 2 === 0)), Math.min(...uvs.filter((_, i) => i % 2 === 1))];
const uvMax = [Math.max(...uvs.filter((_, i) => i % 2 === 0)), Math.max(...uvs.filter((_, i) => i % 2 === 1))];
const uvq = Uint16Array.from(uvs, (u, i) => Math.round(((u - uvMin[i % 2]) / (uvMax[i % 2] - uvMin[i % 2])) * 65535));

const vertexIndex = new Uint16Array(corners.length / 2);
const uvIndex = new Uint16Array(corners.length / 2);
for (let i = 0; i < corners.length / 2; i++) {
  vertexIndex[i] = corners[i * 2];
  uvIndex[i] = corners[i * 2 + 1];
}
if (kept.length > 65535 || uvs.length / 2 > 65535) throw new Error('index overflow');

const provenance = {
  source: 'ICT FaceKit, Face Model Light (github.com/ICT-VGL/ICT-FaceKit), MIT License, Copyright (c) 2020 USC Institute for Creative Technologies',
  units: "cm, +y up, +z forward, +x the subject's left",
};
fs.mkdirSync(OUT, { recursive: true });
const meshFile = writeContainer(
  {
    ...provenance,
    version: 1,
    vertexCount: kept.length,
    triangleCount: vertexIndex.length / 3,
    parts: partInfo,
    positionMin: min,
    positionMax: max,
    uvMin,
    uvMax,
    landmarks68: LANDMARKS_68.map((v) => remap[v]),
  },
  { positions, uvs: uvq, triangleVertices: vertexIndex, triangleUvs: uvIndex },
);
fs.writeFileSync(path.join(OUT, 'mesh.bin'), meshFile);
console.log(`mesh.bin: ${kept.length} vertices, ${vertexIndex.length / 3} triangles, ${uvs.length / 2} uvs, ${(meshFile.length / 1024).toFixed(0)} KiB`);
for (const p of partInfo) console.log(`  ${p.name}: ${p.count} vertices, ${p.triCount} triangles`);

const neutral = Float32Array.from(V);
const deltaOf = (file: string) => {
  const e = readVertices(path.join(dir, file));
  if (e.length !== neutral.length) throw new Error(`${file}: ${e.length / 3} vertices, expected ${vertexCount}`);
  const d = new Float32Array(kept.length * 3);
  kept.forEach((v, i) => {
    for (let k = 0; k < 3; k++) d[i * 3 + k] = e[v * 3 + k] - neutral[v * 3 + k];
  });
  return d;
};

// --- identity modes: 8-bit per mode, scaled to the mode's largest displacement ---------------
const idScales: number[] = [];
const identity = new Int8Array(IDENTITY_MODES * kept.length * 3);
for (let m = 0; m < IDENTITY_MODES; m++) {
  const d = deltaOf(`identity${String(m).padStart(3, '0')}.obj`);
  let mx = 0;
  for (const x of d) mx = Math.max(mx, Math.abs(x));
  const s = mx / 127;
  idScales.push(s);
  for (let i = 0; i < d.length; i++) identity[m * d.length + i] = Math.round(d[i] / s);
  process.stdout.write(`\ridentity ${m + 1}/${IDENTITY_MODES}`);
}
const idFile = writeContainer({ ...provenance, version: 1, modes: IDENTITY_MODES, vertexCount: kept.length, scales: idScales }, { modes: identity });
fs.writeFileSync(path.join(OUT, 'identity.bin'), idFile);
console.log(`\nidentity.bin: ${IDENTITY_MODES} modes, ${(idFile.length / 1024).toFixed(0)} KiB`);

// --- expressions: ARKit names, sparse, 16-bit per shape ------------------------------------
const files = fs
  .readdirSync(dir)
  .filter((f) => f.endsWith('.obj') && !/^identity|^generic|^PupilDilate/.test(f))
  .sort();
const arkitName = (f: string) =>
  f
    .replace(/\.obj$/, '')
    .replace(/_L$/, 'Left')
    .replace(/_R$/, 'Right');
const shapes = new Map<string, Float32Array>();
for (const f of files) {
  const name = arkitName(f);
  // ARKit has one browInnerUp and one cheekPuff; the FaceKit splits them by side.
  const merged =
    name === 'browInnerUpLeft' || name === 'browInnerUpRight' ? 'browInnerUp' : name === 'cheekPuffLeft' || name === 'cheekPuffRight' ? 'cheekPuff' : name;
  const d = deltaOf(f);
  const prev = shapes.get(merged);
  if (prev) for (let i = 0; i < d.length; i++) prev[i] += d[i];
  else shapes.set(merged, d);
  process.stdout.write(`\rexpressions ${shapes.size}`);
}
const exprMeta: { name: string; start: number; count: number; scale: number }[] = [];
const exIdx: number[] = [];
const exDelta: number[] = [];
for (const [name, d] of shapes) {
  let mx = 0;
  for (const x of d) mx = Math.max(mx, Math.abs(x));
  const s = mx / 32767;
  const start = exIdx.length;
  for (let i = 0; i < kept.length; i++) {
    if (Math.hypot(d[i * 3], d[i * 3 + 1], d[i * 3 + 2]) < EXPRESSION_EPS) continue;
    exIdx.push(i);
    exDelta.push(Math.round(d[i * 3] / s), Math.round(d[i * 3 + 1] / s), Math.round(d[i * 3 + 2] / s));
  }
  exprMeta.push({ name, start, count: exIdx.length - start, scale: s });
}
// Indices delta-coded within each shape: small numbers compress far better.
const exIdxCoded = new Uint16Array(exIdx.length);
for (const e of exprMeta) for (let k = 0; k < e.count; k++) exIdxCoded[e.start + k] = k === 0 ? exIdx[e.start] : exIdx[e.start + k] - exIdx[e.start + k - 1];
const exFile = writeContainer(
  { ...provenance, version: 1, vertexCount: kept.length, shapes: exprMeta },
  { indices: exIdxCoded, deltas: Int16Array.from(exDelta) },
);
fs.writeFileSync(path.join(OUT, 'expressions.bin'), exFile);
console.log(`\nexpressions.bin: ${exprMeta.length} shapes, ${exIdx.length} deltas, ${(exFile.length / 1024).toFixed(0)} KiB`);
