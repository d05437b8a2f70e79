/**
 * Assembles one catalogue face from the ICT FaceKit data: the identity's rest shape, the 15
 * visemes and the ARKit shapes as morph targets, UV-painted skin, eyes with a cut cornea window,
 * teeth and mouth darkening with depth, lashes, hair shells over this head's own scalp, and a
 * clothed torso. Units in the GLB are metres; the head faces +z.
 */
import type { Face } from '../builtin.js';
import { writeGlb, type MaterialSpec, type MeshSpec } from '../glb.js';
import { hairShells } from '../hair.js';
import { hexToRgb, srgbToLinear } from '../image.js';
import { torso, type Geo } from '../parts.js';
import { hairTexture } from '../texture.js';
import { clamp, hashString, smoothstep, type V3 } from '../vec.js';
import { expressionDelta, identityShape, loadIctModel, type IctModel } from './model.js';
import { paintEye, paintEyeShadow, paintLashes, paintSkin, rasterise, type RasterTri } from './paint.js';
import { VISEME_RECIPES } from './visemes.js';
import { ARKIT as ARKIT_NAMES, VISEMES } from '../names.js';

const CM = 0.01;
/**
 * The FaceKit head moved into the frame the hair and torso generators work in (their skull
 * centre, neck base and shoulders): eyes at y 2.7, z 2.6 cm.
 */
const OFFSET: V3 = [0, -0.93, -5.88];
/** The sclera's cornea bulge is cut away inside this angle from the eye's axis; the iris shows through. */
const CORNEA_CUT_DEG = 24;
const IRIS_DEG = 27;
const PUPIL_DEG = 9.5;
/** Unseen triangles cut (software GL pays for each): the iris sphere past this angle lies behind the sclera, the sclera past this one inside the head. */
const IRIS_KEEP_DEG = 45;
const SCLERA_KEEP_DEG = 120;

export interface BuiltFace {
  glb: Uint8Array;
  morphs: string[];
}

type Tri = { v: number[]; t: number[] };

function partTris(model: IctModel, names: string[]): Tri[] {
  const out: Tri[] = [];
  for (const n of names) {
    const p = model.parts.get(n)!;
    for (let t = p.triStart; t < p.triStart + p.triCount; t++) {
      out.push({
        v: [model.triVertex[t * 3], model.triVertex[t * 3 + 1], model.triVertex[t * 3 + 2]],
        t: [model.triUv[t * 3], model.triUv[t * 3 + 1], model.triUv[t * 3 + 2]],
      });
    }
  }
  return out;
}

/** Area-weighted vertex normals over the given triangles, on the unsplit vertices (so seams stay smooth). */
function vertexNormals(pos: Float32Array, tris: Tri[], count: number): Float32Array {
  const n = new Float32Array(count * 3);
  for (const { v } of tris) {
    const [a, b, c] = [v[0] * 3, v[1] * 3, v[2] * 3];
    const ux = pos[b] - pos[a],
      uy = pos[b + 1] - pos[a + 1],
      uz = pos[b + 2] - pos[a + 2];
    const vx = pos[c] - pos[a],
      vy = pos[c + 1] - pos[a + 1],
      vz = pos[c + 2] - pos[a + 2];
    const nx = uy * vz - uz * vy,
      ny = uz * vx - ux * vz,
      nz = ux * vy - uy * vx;
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

interface SplitOpts {
  tris: Tri[];
  pos: Float32Array;
  normals: Float32Array;
  uv: (u: number, v: number) => [number, number];
  color?: (vertex: number) => number;
  origin?: V3;
  material: string;
  morphs?: { names: string[]; deltas: Float32Array[] };
  /** Keep every target, even those that do not move this primitive (the Head carries the full set). */
  allTargets?: boolean;
  flip?: boolean;
}

/** Splits vertices at UV seams (one output vertex per (vertex, uv) pair) and emits a primitive with morph deltas. */
function split(model: IctModel, o: SplitOpts) {
  const map = new Map<number, number>();
  const src: number[] = [];
  const srcUv: number[] = [];
  const idx: number[] = [];
  for (const t of o.tris) {
    const corners = o.flip ? [0, 2, 1] : [0, 1, 2];
    for (const k of corners) {
      const key = t.v[k] * 65536 + t.t[k];
      let i = map.get(key);
      if (i === undefined) {
        i = src.length;
        map.set(key, i);
        src.push(t.v[k]);
        srcUv.push(t.t[k]);
      }
      idx.push(i);
    }
  }
  const org = o.origin ?? [0, 0, 0];
  const positions = new Float32Array(src.length * 3);
  const normals = new Float32Array(src.length * 3);
  const uvs = new Float32Array(src.length * 2);
  const colors = o.color ? new Float32Array(src.length * 3) : undefined;
  src.forEach((v, i) => {
    for (let k = 0; k < 3; k++) {
      positions[i * 3 + k] = (o.pos[v * 3 + k] - org[k]) * CM;
      normals[i * 3 + k] = o.normals[v * 3 + k] * (o.flip ? -1 : 1);
    }
    const [u, w] = o.uv(model.uvs[srcUv[i] * 2], model.uvs[srcUv[i] * 2 + 1]);
    uvs[i * 2] = u;
    uvs[i * 2 + 1] = 1 - w; // glTF's v runs down
    if (colors) colors.fill(o.color!(v), i * 3, i * 3 + 3);
  });
  // Only the targets that move this primitive.
  const names: string[] = [];
  const targets: Float32Array[] = [];
  o.morphs?.names.forEach((name, ti) => {
    const d = o.morphs!.deltas[ti];
    const out = new Float32Array(src.length * 3);
    let moved = 0;
    src.forEach((v, i) => {
      for (let k = 0; k < 3; k++) {
        const x = d[v * 3 + k] * CM;
        out[i * 3 + k] = x;
        moved = Math.max(moved, Math.abs(x));
      }
    });
    if (moved > 2e-5 || o.allTargets) {
      names.push(name);
      targets.push(out);
    }
  });
  return { prim: { positions, normals, uvs, colors, indices: Uint32Array.from(idx), material: o.material }, names, targets };
}

const lin = (hex: string, k = 1): [number, number, number, number] => {
  const c = hexToRgb(hex);
  return [srgbToLinear(c[0]) * k, srgbToLinear(c[1]) * k, srgbToLinear(c[2]) * k, 1];
};

/** Eye centre and sphere radius from the sclera's vertices (its cornea bulges forward, so z comes from the back). */
function eyeSphere(pos: Float32Array, start: number, count: number): { c: V3; r: number } {
  const mn = [Infinity, Infinity, Infinity];
  const mx = [-Infinity, -Infinity, -Infinity];
  for (let i = start; i < start + count; i++)
    for (let k = 0; k < 3; k++) {
      mn[k] = Math.min(mn[k], pos[i * 3 + k]);
      mx[k] = Math.max(mx[k], pos[i * 3 + k]);
    }
  const r = (mx[0] - mn[0] + (mx[1] - mn[1])) / 4;
  return { c: [(mn[0] + mx[0]) / 2, (mn[1] + mx[1]) / 2, mn[2] + r], r };
}

/** The neck's half-width and depth range per 1-cm band below the chin: the shirt is fitted around it. */
function neckFit(model: IctModel, pos: Float32Array): (y: number) => { hw: number; zmin: number; zmax: number } | null {
  const bands = new Map<number, { hw: number; zmin: number; zmax: number }>();
  for (const part of ['face', 'headNeck']) {
    const p = model.parts.get(part)!;
    for (let i = p.start; i < p.start + p.count; i++) {
      const y = pos[i * 3 + 1];
      if (y > -11) continue;
      const b = Math.round(y);
      const e = bands.get(b) ?? { hw: 0, zmin: Infinity, zmax: -Infinity };
      e.hw = Math.max(e.hw, Math.abs(pos[i * 3]));
      e.zmin = Math.min(e.zmin, pos[i * 3 + 2]);
      e.zmax = Math.max(e.zmax, pos[i * 3 + 2]);
      bands.set(b, e);
    }
  }
  return (y) => {
    // the band itself and its neighbours: the shirt row must clear all of them
    const near = [Math.floor(y), Math.ceil(y), Math.floor(y) - 1].map((b) => bands.get(b)).filter((e) => !!e);
    if (!near.length) return null;
    return { hw: Math.max(...near.map((e) => e.hw)), zmin: Math.min(...near.map((e) => e.zmin)), zmax: Math.max(...near.map((e) => e.zmax)) };
  };
}

/** A spherical depth map of this head's skull around the hair generator's centre: the hair shells wrap it. */
function skullSdf(pos: Float32Array, model: IctModel): (p: V3) => number {
  const C: V3 = [0, 3.4, -4.4];
  const NP = 48;
  const NT = 96;
  const rad = new Float32Array(NP * NT);
  const ears = model.landmarks68;
  const earY = (pos[ears[0] * 3 + 1] + pos[ears[16] * 3 + 1]) / 2;
  for (const part of ['face', 'headNeck']) {
    const p = model.parts.get(part)!;
    for (let i = p.start; i < p.start + p.count; i++) {
      const x = pos[i * 3] - C[0];
      const y = pos[i * 3 + 1] - C[1];
      const z = pos[i * 3 + 2] - C[2];
      // the ears stand off the skull: hair passes over them, not around them
      if (Math.abs(x) > 6.6 && Math.abs(pos[i * 3 + 1] - earY - 1) < 3.8 && z > -6) continue;
      const r = Math.hypot(x, y, z);
      const phi = Math.acos(clamp(y / r, -1, 1));
      const th = Math.atan2(x, z);
      const a = Math.min(NP - 1, Math.floor((phi / Math.PI) * NP));
      const b = Math.min(NT - 1, Math.floor(((th + Math.PI) / (2 * Math.PI)) * NT));
      rad[a * NT + b] = Math.max(rad[a * NT + b], r);
    }
  }
  // fill empty cells from their neighbours, then smooth
  for (let pass = 0; pass < 6; pass++) {
    for (let a = 0; a < NP; a++)
      for (let b = 0; b < NT; b++) {
        if (rad[a * NT + b]) continue;
        let s = 0,
          n = 0;
        for (const [da, db] of [
          [1, 0],
          [-1, 0],
          [0, 1],
          [0, -1],
        ]) {
          const aa = a + da;
          if (aa < 0 || aa >= NP) continue;
          const v = rad[aa * NT + ((b + db + NT) % NT)];
          if (v) (s += v), n++;
        }
        if (n) rad[a * NT + b] = s / n;
      }
  }
  const sm = Float32Array.from(rad);
  for (let a = 1; a < NP - 1; a++)
    for (let b = 0; b < NT; b++) {
      let s = 0;
      for (let da = -1; da <= 1; da++) for (let db = -1; db <= 1; db++) s += rad[(a + da) * NT + ((b + db + NT) % NT)];
      sm[a * NT + b] = s / 9;
    }
  return (p) => {
    const x = p[0] - C[0],
      y = p[1] - C[1],
      z = p[2] - C[2];
    const r = Math.hypot(x, y, z) || 1e-6;
    const fa = (Math.acos(clamp(y / r, -1, 1)) / Math.PI) * NP - 0.5;
    const fb = ((Math.atan2(x, z) + Math.PI) / (2 * Math.PI)) * NT - 0.5;
    const a0 = Math.max(0, Math.min(NP - 2, Math.floor(fa)));
    const b0 = Math.floor(fb);
    const ta = clamp(fa - a0),
      tb = fb - b0;
    const at = (a: number, b: number) => sm[a * NT + (((b % NT) + NT) % NT)];
    const R = (at(a0, b0) * (1 - tb) + at(a0, b0 + 1) * tb) * (1 - ta) + (at(a0 + 1, b0) * (1 - tb) + at(a0 + 1, b0 + 1) * tb) * ta;
    return r - R - 0.1;
  };
}

export async function buildIctFace(face: Face): Promise<BuiltFace> {
  const look = face.look;
  const male = face.gender === 'm';
  const seed = hashString(face.avatar_id);
  const model = loadIctModel();
  const pos = identityShape(model, look.identity ?? []);
  for (let i = 0; i < pos.length; i++) pos[i] += OFFSET[i % 3];
  const P = (i: number): V3 => [pos[i * 3], pos[i * 3 + 1], pos[i * 3 + 2]];
  const lm = model.landmarks68.map(P);
  const lipZ = Math.max(lm[51][2], lm[57][2]);

  // Morph targets: visemes from their recipes, the ARKit shapes as they are.
  const names = [...VISEMES, ...ARKIT_NAMES];
  const deltas = names.map((n) => (n === 'tongueOut' ? tongueOutDelta(model, pos) : expressionDelta(model, VISEME_RECIPES[n] ?? { [n]: 1 })));
  const morphs = { names, deltas };
  const meshes: MeshSpec[] = [];
  const allTris = (parts: string[]) => partTris(model, parts);

  // Skin: face, head and neck, mouth socket and eye sockets in one mesh (they share the seams).
  const skinParts = ['face', 'headNeck', 'mouthSocket', 'eyeSocketLeft', 'eyeSocketRight'];
  const skinNormals = vertexNormals(pos, allTris(skinParts), model.vertexCount);
  const head = split(model, {
    tris: allTris(skinParts.filter((p) => p !== 'mouthSocket')),
    pos,
    normals: skinNormals,
    uv: (u, v) => [u / 2, v],
    material: 'Skin',
    morphs,
    allTargets: true,
  });
  meshes.push({ name: 'Head', primitives: [head.prim], targetNames: head.names, targets: [head.targets] });

  // Mouth interior: lighter at the front, dark deep inside (a cheap stand-in for occlusion), and
  // with almost no specular: a dark but glossy cavity mirrors the room and reads as grey metal.
  const depthShade = (lo: number, hi: number, reach: number) => (v: number) => lo + (hi - lo) * smoothstep(lipZ - reach, lipZ - 0.6, pos[v * 3 + 2]);
  const socket = split(model, {
    tris: allTris(['mouthSocket']),
    pos,
    normals: skinNormals,
    uv: (u, v) => [u / 2, v],
    color: depthShade(0.03, 1, 2.2),
    material: 'Mouth',
    morphs,
  });
  meshes.push({ name: 'Mouth', primitives: [socket.prim], targetNames: socket.names, targets: [socket.targets] });
  const teethTris = allTris(['teeth']);
  const teeth = split(model, {
    tris: teethTris,
    pos,
    normals: vertexNormals(pos, teethTris, model.vertexCount),
    uv: (u, v) => [u - 3, v],
    color: depthShade(0.25, 1, 3.2),
    material: 'Teeth',
    morphs,
  });
  meshes.push({ name: 'Teeth', primitives: [teeth.prim], targetNames: teeth.names, targets: [teeth.targets] });
  const gumTris = allTris(['gumsTongue']);
  const tongue = split(model, {
    tris: gumTris,
    pos,
    normals: vertexNormals(pos, gumTris, model.vertexCount),
    uv: (u, v) => [u - 2, v],
    color: depthShade(0.05, 0.45, 3.0),
    material: 'Tongue',
    morphs,
  });
  meshes.push({ name: 'Tongue', primitives: [tongue.prim], targetNames: tongue.names, targets: [tongue.targets] });

  // Eyes: own nodes at the eyeball centre, so turning the node turns the eye in place.
  const eyeTris: RasterTri[] = [];
  let leftCentre: V3 = [0, 0, 0];
  for (const side of ['Left', 'Right'] as const) {
    const sclera = model.parts.get(`sclera${side}`)!;
    const { c } = eyeSphere(pos, sclera.start, sclera.count);
    if (side === 'Left') leftCentre = c;
    const angle = (v: number) => {
      const d: V3 = [pos[v * 3] - c[0], pos[v * 3 + 1] - c[1], pos[v * 3 + 2] - c[2]];
      return (Math.acos(clamp(d[2] / (Math.hypot(d[0], d[1], d[2]) || 1), -1, 1)) * 180) / Math.PI;
    };
    // the cornea window: drop the sclera's triangles over the iris
    // and the back of the eyeball, which stays inside the head however far the eye turns
    const sTris = allTris([`sclera${side}`]).filter((t) => Math.max(...t.v.map(angle)) > CORNEA_CUT_DEG && Math.min(...t.v.map(angle)) < SCLERA_KEEP_DEG);
    // the iris is an inner sphere: only its front cap shows through the cornea window
    const iTris = allTris([`iris${side}`]).filter((t) => Math.min(...t.v.map(angle)) < IRIS_KEEP_DEG);
    const sc = split(model, {
      tris: sTris,
      pos,
      normals: vertexNormals(pos, sTris, model.vertexCount),
      uv: (u, v) => [u, v],
      color: (v) => 1 - 0.5 * smoothstep(60, 120, angle(v)),
      origin: c,
      material: 'Sclera',
    });
    const ir = split(model, { tris: iTris, pos, normals: vertexNormals(pos, iTris, model.vertexCount), uv: (u, v) => [u, v], origin: c, material: 'Iris' });
    meshes.push({ name: `Eye${side}`, translation: [c[0] * CM, c[1] * CM, c[2] * CM], primitives: [sc.prim, ir.prim] });
    if (side === 'Left') {
      for (const [tris, group] of [
        [allTris(['scleraLeft']), 0],
        [iTris, 1],
      ] as const) {
        for (const t of tris)
          eyeTris.push({
            uv: t.t.map((q) => [model.uvs[q * 2], model.uvs[q * 2 + 1]] as [number, number]),
            p: t.v.map((v) => [pos[v * 3] - c[0], pos[v * 3 + 1] - c[1], 0] as V3),
            a: t.v.map(angle) as [number, number, number],
            group,
          });
      }
    }
  }

  // Eye occlusion: the FaceKit's thin shell over each eye, drawn as a soft shadow that is darkest
  // where it tucks under the lids and clear over the middle of the eye.
  const occTris = allTris(['eyeOcclusionLeft', 'eyeOcclusionRight']);
  const occT = occlusionDepth(pos, occTris);
  const occ = split(model, {
    tris: occTris,
    pos,
    normals: vertexNormals(pos, occTris, model.vertexCount),
    uv: (u, v) => [u, v],
    material: 'EyeShadow',
    morphs,
  });
  meshes.push({ name: 'EyeShadow', primitives: [occ.prim], targetNames: occ.names, targets: [occ.targets] });

  // Lashes: the FaceKit's stacked strips; each strip's v runs from the lid margin to the tips.
  const lashTris = allTris(['eyelashesLeft', 'eyelashesRight']);
  const tipness = lashTipness(model, pos, lashTris);
  const lashes = split(model, {
    tris: lashTris,
    pos,
    normals: vertexNormals(pos, lashTris, model.vertexCount),
    uv: (u, v) => [(u - 6) / 1, v],
    material: 'Lash',
    morphs,
  });
  meshes.push({ name: 'Eyelashes', primitives: [lashes.prim], targetNames: lashes.names, targets: [lashes.targets] });

  // Hair over this head's own scalp, and the clothed torso.
  const toPrim = (g: Geo, material: string) => ({
    positions: Float32Array.from(g.pos, (x) => x * CM),
    normals: geoNormals(g),
    uvs: Float32Array.from(g.uv),
    colors: Float32Array.from(g.col),
    indices: Uint32Array.from(g.idx),
    material,
  });
  if (look.hairStyle !== 'bald') {
    const hair = hairShells(look, seed, skullSdf(pos, model));
    // the soft layer last: it blends over the alpha-tested hair already in the depth buffer
    meshes.push({
      name: 'Hair',
      primitives: [
        toPrim(hair.inner, 'HairBase'),
        toPrim(hair.outer, 'Hair'),
        ...[hair.extra, hair.cards].filter((g) => g.idx.length).map((g) => toPrim(g, 'Hair')),
        ...(hair.soft.idx.length ? [toPrim(hair.soft, 'HairSoft')] : []),
      ],
    });
  }
  meshes.push({ name: 'Body', primitives: [toPrim(torso(male, neckFit(model, pos)), 'Shirt')] });

  // Textures.
  const skinRasterTris: RasterTri[] = [];
  const groupOf = (part: string) => (part === 'mouthSocket' ? 1 : part.startsWith('eyeSocket') ? 2 : 0);
  for (const part of skinParts) {
    const g = groupOf(part);
    for (const t of allTris([part]))
      skinRasterTris.push({ uv: t.t.map((q) => [model.uvs[q * 2] / 2, model.uvs[q * 2 + 1]] as [number, number]), p: t.v.map(P) as [V3, V3, V3], group: g });
  }
  const age = look.age ?? 0.3;
  const skin = paintSkin(
    rasterise(skinRasterTris, 2048, 1024),
    { skin: look.skin, lips: look.lips, hair: look.hair, age, male, beard: look.beard ?? null, brows: male ? 0.85 : 0.6 },
    lm,
    seed,
  );
  if (process.env.FACES_DEBUG_DIR) {
    const fs = await import('node:fs');
    fs.writeFileSync(`${process.env.FACES_DEBUG_DIR}/${face.avatar_id}-skin.jpg`, skin.color);
  }
  const eyeRaster = rasterise(
    eyeTris.filter((t) => t.group === 0),
    256,
    256,
  );
  const irisRaster = rasterise(
    eyeTris.filter((t) => t.group === 1),
    256,
    256,
  );
  const scleraTex = paintEye(eyeRaster, look.eyes, seed, PUPIL_DEG, IRIS_DEG);
  const irisTex = paintEye(irisRaster, look.eyes, seed, PUPIL_DEG, IRIS_DEG);
  const lashRaster = rasterise(
    lashTris.map((t) => ({
      uv: t.t.map((q) => [model.uvs[q * 2] - 6, model.uvs[q * 2 + 1]] as [number, number]),
      p: t.v.map(P) as [V3, V3, V3],
      a: t.v.map((v) => tipness.get(v) ?? 0) as [number, number, number],
      group: 0,
    })),
    512,
    256,
    2,
  );
  // texels of strips on the lower lid (their 3D points lie below the eye's centre)
  const lashTex = paintLashes(lashRaster, seed, (x, y) => {
    const o = y * lashRaster.width + x;
    return lashRaster.pos[o * 3 + 1] < leftCentre[1] - 0.2;
  });
  const occRaster = rasterise(
    allTris(['eyeOcclusionLeft']).map((t) => ({
      uv: t.t.map((q) => [model.uvs[q * 2], model.uvs[q * 2 + 1]] as [number, number]),
      p: t.v.map(P) as [V3, V3, V3],
      a: t.v.map((v) => occT.get(v) ?? 0) as [number, number, number],
      group: 0,
    })),
    128,
    128,
    2,
  );
  const occTex = paintEyeShadow(occRaster);
  const hairTex = hairTexture(seed, look.hairStyle === 'curly');
  const shirt = SHIRTS[seed % SHIRTS.length];
  const hairCol = lin(look.hair, look.hairStyle === 'buzz' ? 0.9 : 1).map((c, i) => (i < 3 ? Math.max(c, [0.03, 0.022, 0.017][i]) : c)) as [
    number,
    number,
    number,
    number,
  ];
  const materials: MaterialSpec[] = [
    // Skin: painted albedo, pore normals, roughness (oily T-zone, wet lips); a warm reddish sheen
    // stands in for light scattered under the skin at grazing angles (subsurface on the cheap).
    {
      name: 'Skin',
      color: [1, 1, 1, 1],
      roughness: 1,
      texture: { data: skin.color, mime: 'image/jpeg' },
      normalTexture: { data: skin.normal, mime: 'image/jpeg', scale: 0.5 },
      roughnessTexture: { data: skin.roughness, mime: 'image/jpeg' },
      sheen: { color: [0.14, 0.05, 0.035], roughness: 0.4 },
      specular: 0.5,
    },
    { name: 'Sclera', color: [1, 1, 1, 1], roughness: 0.2, texture: { data: scleraTex, mime: 'image/jpeg' }, clearcoat: { factor: 1, roughness: 0.03 } },
    // The iris sits behind the (cut) cornea: its clearcoat is the wet cornea highlight.
    { name: 'Iris', color: [1, 1, 1, 1], roughness: 0.4, texture: { data: irisTex, mime: 'image/jpeg' }, clearcoat: { factor: 1, roughness: 0.02 } },
    { name: 'Mouth', color: lin(look.lips, 0.8), roughness: 0.5, specular: 0.1 },
    { name: 'Teeth', color: [0.74, 0.7, 0.62, 1], roughness: 0.35, specular: 0.5 },
    { name: 'Tongue', color: [0.55, 0.2, 0.2, 1], roughness: 0.5, specular: 0.2 },
    { name: 'EyeShadow', color: [0.05, 0.03, 0.03, 1], roughness: 1, specular: 0, texture: { data: occTex, mime: 'image/png' }, blend: true },
    { name: 'Lash', color: [1, 1, 1, 1], roughness: 1, specular: 0, texture: { data: lashTex, mime: 'image/png' }, blend: true, doubleSided: true },
    {
      name: 'HairBase',
      color: hairCol.map((c, i) => (i < 3 ? c * 0.85 : 1)) as [number, number, number, number],
      roughness: 0.8,
      specular: 0.25,
      texture: { data: hairTex, mime: 'image/png' },
    },
    {
      name: 'Hair',
      color: hairCol,
      roughness: 0.72,
      specular: 0.25,
      texture: { data: hairTex, mime: 'image/png' },
      alphaCutoff: 0.45,
      doubleSided: true,
      sheen: { color: hairCol.slice(0, 3).map((c) => Math.min(1, c * 0.6 + 0.03)) as [number, number, number], roughness: 0.6 },
    },
    // The same strands alpha-blended over the hair's fading edges (hair.ts, softEdges).
    { name: 'HairSoft', color: hairCol, roughness: 0.72, specular: 0.25, texture: { data: hairTex, mime: 'image/png' }, blend: true, doubleSided: true },
    {
      name: 'Shirt',
      color: [srgbToLinear(shirt[0]), srgbToLinear(shirt[1]), srgbToLinear(shirt[2]), 1],
      roughness: 0.9,
      sheen: { color: [0.3, 0.3, 0.3], roughness: 0.6 },
    },
  ];
  const glb = await writeGlb(meshes, materials, { generator: 'presence-faces (ICT FaceKit, MIT)', avatar_id: face.avatar_id, name: face.name });
  return { glb, morphs: names };
}

const SHIRTS: [number, number, number][] = [
  [0.16, 0.2, 0.28],
  [0.52, 0.55, 0.6],
  [0.62, 0.32, 0.22],
  [0.12, 0.12, 0.13],
  [0.82, 0.8, 0.76],
  [0.25, 0.32, 0.22],
  [0.45, 0.18, 0.22],
  [0.2, 0.3, 0.45],
  [0.35, 0.36, 0.4],
  [0.6, 0.55, 0.45],
];

/**
 * tongueOut (the FaceKit has none): the jaw a little open and the front of the tongue slid
 * forward. The tongue is the part of gumsTongue that is not hugging a tooth.
 */
function tongueOutDelta(model: IctModel, pos: Float32Array): Float32Array {
  const d = expressionDelta(model, { jawOpen: 0.3 });
  const gums = model.parts.get('gumsTongue')!;
  const teeth = model.parts.get('teeth')!;
  let teethY = 0;
  for (let t = teeth.start; t < teeth.start + teeth.count; t++) teethY += pos[t * 3 + 1] / teeth.count;
  const tongue: number[] = [];
  for (let i = gums.start; i < gums.start + gums.count; i++) {
    if (Math.abs(pos[i * 3]) > 2.5 || pos[i * 3 + 1] > teethY) continue;
    let near = Infinity;
    for (let t = teeth.start; t < teeth.start + teeth.count && near > 0.35; t += 2)
      near = Math.min(near, Math.hypot(pos[i * 3] - pos[t * 3], pos[i * 3 + 1] - pos[t * 3 + 1], pos[i * 3 + 2] - pos[t * 3 + 2]));
    if (near > 0.35) tongue.push(i);
  }
  if (!tongue.length) return d;
  const tip = tongue.reduce((a, b) => (pos[b * 3 + 2] > pos[a * 3 + 2] ? b : a));
  for (const i of tongue) {
    const w = smoothstep(3.5, 0, Math.hypot(pos[i * 3] - pos[tip * 3], pos[i * 3 + 1] - pos[tip * 3 + 1], pos[i * 3 + 2] - pos[tip * 3 + 2]));
    d[i * 3 + 1] += 0.3 * w;
    d[i * 3 + 2] += 1.4 * w;
  }
  return d;
}

function geoNormals(g: Geo): Float32Array {
  const pos = Float32Array.from(g.pos);
  const tris = [] as Tri[];
  for (let t = 0; t < g.idx.length; t += 3) tris.push({ v: [g.idx[t], g.idx[t + 1], g.idx[t + 2]], t: [0, 0, 0] });
  return vertexNormals(pos, tris, g.pos.length / 3);
}

/**
 * Per eye-occlusion vertex: 0 on the shell's inner edge (towards the middle of the eye) .. 1 on its
 * outer edge (under the lids), by hops through the mesh from each edge.
 */
function occlusionDepth(pos: Float32Array, tris: Tri[]): Map<number, number> {
  const edges = new Map<string, number>();
  const nb = new Map<number, Set<number>>();
  for (const { v } of tris)
    for (let k = 0; k < 3; k++) {
      const a = v[k],
        b = v[(k + 1) % 3];
      const key = a < b ? `${a}_${b}` : `${b}_${a}`;
      edges.set(key, (edges.get(key) ?? 0) + 1);
      if (!nb.has(a)) nb.set(a, new Set());
      if (!nb.has(b)) nb.set(b, new Set());
      nb.get(a)!.add(b);
      nb.get(b)!.add(a);
    }
  const boundary = new Set<number>();
  for (const [key, n] of edges) if (n === 1) for (const x of key.split('_')) boundary.add(Number(x));
  // inner edge: boundary vertices nearer their eye's centre (in the face plane) than the median
  const centre = (v: number) => (pos[v * 3] > 0 ? 1 : -1);
  const cx = new Map<number, [number, number]>();
  for (const side of [1, -1]) {
    const vs = [...nb.keys()].filter((v) => centre(v) === side);
    cx.set(side, [vs.reduce((s, v) => s + pos[v * 3], 0) / vs.length, vs.reduce((s, v) => s + pos[v * 3 + 1], 0) / vs.length]);
  }
  const r = (v: number) => {
    const [x, y] = cx.get(centre(v))!;
    return Math.hypot(pos[v * 3] - x, (pos[v * 3 + 1] - y) * 1.8);
  };
  const rs = [...boundary].map(r).sort((a, b) => a - b);
  const median = rs[Math.floor(rs.length / 2)];
  const hops = (start: number[]) => {
    const d = new Map<number, number>(start.map((v) => [v, 0]));
    let frontier = start;
    while (frontier.length) {
      const next: number[] = [];
      for (const v of frontier) for (const w of nb.get(v)!) if (!d.has(w)) d.set(w, d.get(v)! + 1), next.push(w);
      frontier = next;
    }
    return d;
  };
  const inner = hops([...boundary].filter((v) => r(v) < median));
  const outer = hops([...boundary].filter((v) => r(v) >= median));
  const out = new Map<number, number>();
  for (const v of nb.keys()) {
    const a = inner.get(v) ?? 0,
      b = outer.get(v) ?? 0;
    out.set(v, a + b ? a / (a + b) : 0);
  }
  return out;
}

/** Per lash vertex: 0 at the lid margin .. 1 at the tip, from each strip's v range (oriented by distance to the eye). */
function lashTipness(model: IctModel, pos: Float32Array, tris: Tri[]): Map<number, number> {
  // connected strips by union-find over shared vertices
  const parent = new Map<number, number>();
  const find = (x: number): number => {
    let r = x;
    while (parent.get(r) !== r) r = parent.get(r)!;
    parent.set(x, r);
    return r;
  };
  const vUv = new Map<number, number>();
  for (const t of tris)
    for (let k = 0; k < 3; k++) {
      if (!parent.has(t.v[k])) parent.set(t.v[k], t.v[k]);
      vUv.set(t.v[k], model.uvs[t.t[k] * 2 + 1]);
    }
  for (const t of tris) {
    const a = find(t.v[0]);
    parent.set(find(t.v[1]), a);
    parent.set(find(t.v[2]), a);
  }
  const strips = new Map<number, number[]>();
  for (const v of parent.keys()) {
    const r = find(v);
    if (!strips.has(r)) strips.set(r, []);
    strips.get(r)!.push(v);
  }
  const out = new Map<number, number>();
  const lidX = 3.2;
  for (const verts of strips.values()) {
    const vs = verts.map((v) => vUv.get(v)!);
    const lo = Math.min(...vs);
    const hi = Math.max(...vs);
    // which end is the root: the one nearer the eye's centre line
    const side = pos[verts[0] * 3] > 0 ? lidX : -lidX;
    const dist = (v: number) => Math.hypot(pos[v * 3] - side, pos[v * 3 + 1] - 2.7, pos[v * 3 + 2] - 2.0);
    let dLo = 0,
      dHi = 0,
      nLo = 0,
      nHi = 0;
    for (const v of verts) {
      const t = (vUv.get(v)! - lo) / (hi - lo || 1);
      if (t < 0.2) (dLo += dist(v)), nLo++;
      if (t > 0.8) (dHi += dist(v)), nHi++;
    }
    const rootLow = dLo / (nLo || 1) < dHi / (nHi || 1);
    for (const v of verts) {
      const t = (vUv.get(v)! - lo) / (hi - lo || 1);
      out.set(v, rootLow ? t : 1 - t);
    }
  }
  return out;
}
