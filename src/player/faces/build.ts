/**
 * Assembles one catalogue face into a GLB: skin (subdivided, with morphs), eyes, teeth, tongue,
 * lashes, hair and shirt, with generated textures. Units are metres; the head faces +z with its
 * centre near the origin (the canonical face's origin), shoulders below.
 */
import type { Face } from '../../catalog/faces.js';
import { buildHeadMesh } from './mesh.js';
import { buildHeadMorphs, JAW_OPEN, MORPH_NAMES, RECIPES } from './morphs.js';
import { applySubdiv, loopSubdivide } from './subdivide.js';
import { eyeball, eyeRotationDelta, lashes, teeth, tongue, torso, rigidJaw, type Geo } from './parts.js';
import { hairShells } from './hair.js';
import { eyeTexture, hairTexture, lashTexture, skinTexture } from './texture.js';
import { hexToRgb, srgbToLinear } from './image.js';
import { writeGlb, type MaterialSpec, type MeshSpec } from './glb.js';
import * as L from './landmarks.js';
import { hashString, type V3 } from './vec.js';

const CM = 0.01;

/** Area-weighted smooth normals. */
function normals(pos: ArrayLike<number>, idx: ArrayLike<number>): Float32Array {
  const n = new Float32Array(pos.length);
  for (let t = 0; t < idx.length; t += 3) {
    const [a, b, c] = [idx[t] * 3, idx[t + 1] * 3, idx[t + 2] * 3];
    const ux = pos[b] - pos[a], uy = pos[b + 1] - pos[a + 1], uz = pos[b + 2] - pos[a + 2];
    const vx = pos[c] - pos[a], vy = pos[c + 1] - pos[a + 1], vz = pos[c + 2] - pos[a + 2];
    const nx = uy * vz - uz * vy, ny = uz * vx - ux * vz, nz = ux * vy - uy * vx;
    for (const o of [a, b, c]) {
      n[o] += nx;
      n[o + 1] += ny;
      n[o + 2] += nz;
    }
  }
  for (let i = 0; i < n.length; i += 3) {
    const l = Math.hypot(n[i], n[i + 1], n[i + 2]) || 1;
    n[i] /= l;
    n[i + 1] /= l;
    n[i + 2] /= l;
  }
  return n;
}

const toM = (a: ArrayLike<number>): Float32Array => Float32Array.from(a, (v) => v * CM);

function prim(g: Geo, material: string, offset: V3 = [0, 0, 0]) {
  const pos = new Float32Array(g.pos.length);
  for (let i = 0; i < pos.length; i += 3) {
    pos[i] = (g.pos[i] - offset[0]) * CM;
    pos[i + 1] = (g.pos[i + 1] - offset[1]) * CM;
    pos[i + 2] = (g.pos[i + 2] - offset[2]) * CM;
  }
  return { positions: pos, normals: normals(g.pos, g.idx), uvs: Float32Array.from(g.uv), colors: Float32Array.from(g.col), indices: Uint32Array.from(g.idx), material };
}

const SHIRTS: [number, number, number][] = [
  [0.16, 0.2, 0.28], [0.52, 0.55, 0.6], [0.62, 0.32, 0.22], [0.12, 0.12, 0.13], [0.82, 0.8, 0.76],
  [0.25, 0.32, 0.22], [0.45, 0.18, 0.22], [0.2, 0.3, 0.45], [0.35, 0.36, 0.4], [0.6, 0.55, 0.45],
];

const lin = (hex: string, k = 1): [number, number, number, number] => {
  const c = hexToRgb(hex);
  return [srgbToLinear(c[0]) * k, srgbToLinear(c[1]) * k, srgbToLinear(c[2]) * k, 1];
};

export interface BuiltFace {
  glb: Uint8Array;
  morphs: string[];
}

export async function buildFace(face: Face): Promise<BuiltFace> {
  const look = face.look;
  const male = face.gender === 'm';
  const seed = hashString(face.avatar_id);
  const head = buildHeadMesh(look, male);
  const morphs = buildHeadMorphs(head);

  // Skin: one Loop step, applied to the rest pose, attributes and every morph delta alike.
  const flat = (vs: number[][]) => Float32Array.from(vs.flat());
  const op = loopSubdivide(head.pos.length, head.idx);
  const sPos = applySubdiv(op, flat(head.pos), 3);
  const sUv = applySubdiv(op, flat(head.uv), 2);
  const sCol = applySubdiv(op, flat(head.col), 3);
  const sDeltas = morphs.deltas.map((d) => applySubdiv(op, d, 3));
  const at = (arr: Float32Array, i: number): V3 => [arr[i * 3], arr[i * 3 + 1], arr[i * 3 + 2]];

  const meshes: MeshSpec[] = [];
  meshes.push({
    name: 'Head',
    primitives: [{ positions: toM(sPos), normals: normals(sPos, op.indices), uvs: sUv, colors: sCol, indices: Uint32Array.from(op.indices), material: 'Skin' }],
    targetNames: morphs.names,
    targets: [sDeltas.map(toM)],
  });

  // Eyes: own nodes at the eyeball centre so rotating them turns the eye in place.
  for (const [name, center, side] of [['EyeLeft', head.eyeCenter.left, 1], ['EyeRight', head.eyeCenter.right, -1]] as const) {
    const g = eyeball(head.eyeRadius);
    const s = side === 1 ? 'Left' : 'Right';
    const yawOut = 0.35 * side; // "out" is towards the subject's own side
    const looks: [string, number, number][] = [
      [`eyeLookUp${s}`, 0, 0.3], [`eyeLookDown${s}`, 0, -0.35], [`eyeLookIn${s}`, -yawOut, 0], [`eyeLookOut${s}`, yawOut, 0],
    ];
    meshes.push({
      name,
      translation: [center[0] * CM, center[1] * CM, center[2] * CM],
      primitives: [{ ...prim(g, 'Eye'), colors: undefined }],
      targetNames: looks.map((l) => l[0]),
      targets: [looks.map(([, yaw, pitch]) => toM(eyeRotationDelta(g, yaw, pitch)))],
    });
  }

  // Teeth and tongue: rigid jaw part of every recipe that moves the jaw.
  const inner = head.pos[13];
  // Teeth sit just behind the sealed lips: no enamel shows through the seam at rest, and the upper
  // incisors show below the lip as soon as the mouth opens, as they do in people.
  const front: V3 = [0, head.pos[13][1] * 0.5 + head.pos[14][1] * 0.5 + 0.05, inner[2] - 0.75];
  const jawRecipes = MORPH_NAMES.filter((n) => RECIPES[n].jaw || RECIPES[n].jawFwd || RECIPES[n].jawSide || RECIPES[n].tongue);
  const tg = teeth(front);
  meshes.push({
    name: 'Teeth',
    primitives: [prim(tg, 'Teeth')],
    targetNames: jawRecipes,
    targets: [jawRecipes.map((n) => {
      const r = RECIPES[n];
      const d = new Float32Array(tg.pos.length);
      for (let i = 0; i < tg.lower.length; i++) {
        if (!tg.lower[i]) continue;
        const v = rigidJaw([tg.pos[i * 3], tg.pos[i * 3 + 1], tg.pos[i * 3 + 2]], head.jawPivot, (r.jaw ?? 0) * JAW_OPEN, r.jawFwd ?? 0, r.jawSide ?? 0);
        d.set(v.map((q) => q * CM), i * 3);
      }
      return d;
    })],
  });
  const to = tongue(front);
  meshes.push({
    name: 'Tongue',
    primitives: [prim(to, 'Tongue')],
    targetNames: jawRecipes,
    targets: [jawRecipes.map((n) => {
      const r = RECIPES[n];
      const d = new Float32Array(to.pos.length);
      for (let i = 0; i < to.pos.length / 3; i++) {
        const p: V3 = [to.pos[i * 3], to.pos[i * 3 + 1], to.pos[i * 3 + 2]];
        const tip = to.tip[i];
        const tw = r.tongue ? tip * tip : 0;
        const moved: V3 = [p[0], p[1] + (r.tongue?.up ?? 0) * tw, p[2] + (r.tongue?.fwd ?? 0) * tw];
        const j = rigidJaw(moved, head.jawPivot, (r.jaw ?? 0) * JAW_OPEN, r.jawFwd ?? 0, r.jawSide ?? 0);
        d.set([(moved[0] - p[0] + j[0]) * CM, (moved[1] - p[1] + j[1]) * CM, (moved[2] - p[2] + j[2]) * CM], i * 3);
      }
      return d;
    })],
  });

  // Lashes ride the lid margins: positions and deltas are read off the subdivided skin.
  const lashGeo: Geo = { pos: [], uv: [], col: [], idx: [] };
  const lashSrc: [number, number, number][] = []; // per lash vertex: margin vertex a, b, t
  const addLash = (loop: number[], center: V3, upper: boolean, length: number) => {
    const samples: [number, number, number][] = [];
    for (let k = 0; k < loop.length - 1; k++) for (let s = 0; s < 3; s++) samples.push([loop[k], loop[k + 1], s / 3]);
    samples.push([loop[loop.length - 1], loop[loop.length - 1], 0]);
    const margin = samples.map(([a, b, t]) => {
      const pa = at(sPos, a);
      const pb = at(sPos, b);
      return [pa[0] + (pb[0] - pa[0]) * t, pa[1] + (pb[1] - pa[1]) * t, pa[2] + (pb[2] - pa[2]) * t] as V3;
    });
    const g = lashes(margin, center, upper, length);
    const base = lashGeo.pos.length / 3;
    lashGeo.pos.push(...g.pos);
    lashGeo.uv.push(...g.uv);
    lashGeo.col.push(...g.col);
    lashGeo.idx.push(...g.idx.map((i) => i + base));
    for (const a of g.anchor) lashSrc.push(samples[a]);
  };
  const lashLen = male ? 0.75 : 1.0;
  addLash(L.EYE_LEFT_UPPER, head.eyeCenter.left, true, lashLen);
  addLash(L.EYE_RIGHT_UPPER, head.eyeCenter.right, true, lashLen);
  addLash(L.EYE_LEFT_LOWER, head.eyeCenter.left, false, lashLen * 0.4);
  addLash(L.EYE_RIGHT_LOWER, head.eyeCenter.right, false, lashLen * 0.4);
  const lashMorphIdx = morphs.names.map((_, i) => i).filter((i) => /^eye|^cheekSquint/.test(morphs.names[i]));
  meshes.push({
    name: 'Eyelashes',
    primitives: [prim(lashGeo, 'Lash')],
    targetNames: lashMorphIdx.map((i) => morphs.names[i]),
    targets: [lashMorphIdx.map((mi) => {
      const d = new Float32Array(lashGeo.pos.length);
      lashSrc.forEach(([a, b, t], i) => {
        const da = at(sDeltas[mi], a);
        const db = at(sDeltas[mi], b);
        d.set([0, 1, 2].map((k) => (da[k] + (db[k] - da[k]) * t) * CM), i * 3);
      });
      return d;
    })],
  });

  const hair = hairShells(look, seed);
  meshes.push({ name: 'Hair', primitives: [prim(hair.inner, 'HairBase'), prim(hair.outer, 'Hair'), ...[hair.extra, hair.cards].filter((g) => g.idx.length).map((g) => prim(g, 'Hair'))] });
  meshes.push({ name: 'Body', primitives: [prim(torso(male), 'Shirt')] });

  const skinTex = skinTexture(look, male, seed);
  const hairTex = hairTexture(seed, look.hairStyle === 'curly');
  const shirt = SHIRTS[seed % SHIRTS.length];
  // Near-black hair still shows its form under studio light: lift it to a very dark brown.
  const hairCol = lin(look.hair, look.hairStyle === 'buzz' ? 0.9 : 1).map((c, i) => (i < 3 ? Math.max(c, [0.03, 0.022, 0.017][i]) : c)) as [number, number, number, number];
  const materials: MaterialSpec[] = [
    // Skin: pore relief and roughness variation break up the plastic sheen; a warm reddish sheen
    // stands in for light scattered under the skin at grazing angles.
    {
      name: 'Skin', color: [1, 1, 1, 1], roughness: 1, texture: { data: skinTex.jpeg, mime: 'image/jpeg' },
      normalTexture: { data: skinTex.normal, mime: 'image/jpeg', scale: 0.6 }, roughnessTexture: { data: skinTex.roughness, mime: 'image/jpeg' },
      sheen: { color: [0.24, 0.1, 0.07], roughness: 0.45 }, specular: 0.55,
    },
    { name: 'Eye', color: [1, 1, 1, 1], roughness: 0.25, texture: { data: eyeTexture(look.eyes, seed), mime: 'image/jpeg' }, clearcoat: { factor: 1, roughness: 0.02 } },
    { name: 'Teeth', color: [0.9, 0.88, 0.84, 1], roughness: 0.35 },
    { name: 'Tongue', color: [0.34, 0.22, 0.22, 1], roughness: 0.45 }, // it sits in the mouth's shadow
    { name: 'Lash', color: [1, 0.9, 0.85, 1], roughness: 0.6, texture: { data: lashTexture(seed), mime: 'image/png' }, blend: true, doubleSided: true },
    // Hair is matte-ish: low specular, rough, a faint sheen in the hair's own colour for the soft
    // rim that real hair gets from light scattered through strands.
    { name: 'HairBase', color: hairCol.map((c, i) => (i < 3 ? c * 0.85 : 1)) as [number, number, number, number], roughness: 0.8, specular: 0.25, texture: { data: hairTex, mime: 'image/png' } },
    { name: 'Hair', color: hairCol, roughness: 0.72, specular: 0.25, texture: { data: hairTex, mime: 'image/png' }, alphaCutoff: 0.45, doubleSided: true, sheen: { color: hairCol.slice(0, 3).map((c) => Math.min(1, c * 0.6 + 0.03)) as [number, number, number], roughness: 0.6 } },
    { name: 'Shirt', color: [srgbToLinear(shirt[0]), srgbToLinear(shirt[1]), srgbToLinear(shirt[2]), 1], roughness: 0.9, sheen: { color: [0.3, 0.3, 0.3], roughness: 0.6 } },
  ];
  const glb = await writeGlb(meshes, materials, { generator: 'presence-faces', avatar_id: face.avatar_id, name: face.name });

  return { glb, morphs: morphs.names };
}
