/**
 * A lighter level of detail for software GL. A software rasteriser (SwiftShader, llvmpipe) pays
 * a fixed set-up cost per triangle, and at player sizes a face built for GPUs has triangles of two
 * or three pixels: the triangle count, not the shading, sets the frame rate there. Each mesh's
 * index buffer is simplified with meshoptimizer; vertices, UVs and morph targets stay as they are
 * (the new triangles reference the same vertices), so every face, built-in or uploaded, animates
 * exactly as before. The error metric includes normals, UVs and how far the jaw, lip and eyelid
 * morphs move each vertex, so the parts that move when it talks keep their shape. The allowed error
 * is measured against the face (its largest mesh), not each part: a part small on screen (teeth,
 * tongue, eyes) may lose more of its own detail, up to `maxPartError`.
 * The built-in faces carry this level in their GLB (src/faces/glb.ts, `lightIndices`), made
 * by the same function at install time, so the page has nothing to compute for them.
 */
import { BufferAttribute, type BufferGeometry, type Mesh } from 'three';
import { MeshoptSimplifier } from 'meshoptimizer/simplifier';
import { readXyz } from './attributes.js';

type Attribute = BufferGeometry['attributes'][string];

/** Morphs whose motion the simplified mesh must still show: jaw, lips and eyelids. */
export const GUARDED = ['jawOpen', 'mouthFunnel', 'mouthPucker', 'mouthSmileLeft', 'mouthSmileRight', 'mouthClose', 'eyeBlinkLeft', 'eyeBlinkRight'];

export interface LodOptions {
  /** Fraction of triangles to aim for. */
  ratio: number;
  /** Largest allowed deviation, relative to the face's size (its largest mesh). */
  error: number;
  /** The same relative to a part's own size, at most (small parts: teeth, eyes). */
  maxPartError: number;
  /** Meshes with fewer triangles are left alone. */
  minTriangles: number;
  /** Weight of the guarded morphs' displacement in the error, against position (1). */
  motionWeight: number;
}

export const SOFTWARE_LOD: LodOptions = { ratio: 0.2, error: 0.01, maxPartError: 0.04, minTriangles: 300, motionWeight: 1 };

export interface LodReport {
  mesh: string;
  before: number;
  after: number;
}

/** One primitive's data as plain arrays: what the simplifier needs, in the page or at build time. */
export interface LodInput {
  positions: Float32Array;
  normals?: Float32Array | null;
  /** Two per vertex. */
  uvs?: Float32Array | null;
  /** Displacement per vertex (x, y, z) of each guarded morph present, relative to the rest shape. */
  motion: Float32Array[];
  indices: Uint32Array;
}

/** The extent the simplifier measures errors against. */
export async function lodScale(positions: Float32Array): Promise<number> {
  await MeshoptSimplifier.ready;
  return MeshoptSimplifier.getScale(positions, 3) || 1;
}

/**
 * The light level's triangles for one primitive (same vertices), or null when it is left alone.
 * `faceScale`: lodScale() of the face's largest mesh.
 */
export async function simplifyIndices(input: LodInput, faceScale: number, options: LodOptions = SOFTWARE_LOD): Promise<Uint32Array | null> {
  // faceScale is in this primitive's units (the caller converts between nodes' scales).
  await MeshoptSimplifier.ready;
  const triangles = input.indices.length / 3;
  if (triangles < options.minTriangles) return null;
  const { positions } = input;
  const count = positions.length / 3;
  const scale = MeshoptSimplifier.getScale(positions, 3) || 1;
  const columns: { values: Float32Array; size: number; weight: number }[] = [];
  if (input.normals) columns.push({ values: input.normals, size: 3, weight: 0.5 });
  if (input.uvs) columns.push({ values: input.uvs, size: 2, weight: 0.5 });
  // Displacement in the mesh's own scale, so a lip that travels far weighs like a visible edge.
  for (const m of input.motion) columns.push({ values: m.map((v) => v / scale), size: 3, weight: options.motionWeight });
  const stride = columns.reduce((n, c) => n + c.size, 0);
  const data = new Float32Array(count * stride);
  const weights: number[] = [];
  let offset = 0;
  for (const c of columns) {
    for (let i = 0; i < count; i++) for (let k = 0; k < c.size; k++) data[i * stride + offset + k] = c.values[i * c.size + k];
    for (let k = 0; k < c.size; k++) weights.push(c.weight);
    offset += c.size;
  }
  const error = Math.min(options.maxPartError, (options.error * faceScale) / scale);
  const target = Math.max(options.minTriangles, Math.floor(triangles * options.ratio)) * 3;
  const [simplified] = stride
    ? MeshoptSimplifier.simplifyWithAttributes(input.indices, positions, 3, data, stride, weights, null, target, error)
    : MeshoptSimplifier.simplify(input.indices, positions, 3, target, error);
  return simplified.length < input.indices.length ? simplified : null;
}

/** A three.js mesh's data for simplifyIndices (null: not simplified, e.g. multi-material or unindexed). */
export function lodInput(mesh: Mesh): LodInput | null {
  const g = mesh.geometry as BufferGeometry;
  // Multi-material groups index into ranges of the index buffer: leave such meshes whole.
  if (!g.index || g.groups.length > 1) return null;
  const positions = readXyz(g.attributes.position);
  const uv = g.attributes.uv;
  let uvs: Float32Array | null = null;
  if (uv) {
    uvs = new Float32Array(uv.count * 2);
    for (let i = 0; i < uv.count; i++) (uvs[i * 2] = uv.getX(i)), (uvs[i * 2 + 1] = uv.getY(i));
  }
  const dict = mesh.morphTargetDictionary ?? {};
  const morphs = g.morphAttributes.position ?? [];
  const motion: Float32Array[] = [];
  for (const name of GUARDED) {
    const index = dict[name];
    if (index === undefined || !morphs[index]) continue;
    const target = readXyz(morphs[index]);
    if (!g.morphTargetsRelative) for (let i = 0; i < target.length; i++) target[i] -= positions[i];
    motion.push(target);
  }
  return {
    positions,
    normals: g.attributes.normal ? readXyz(g.attributes.normal) : null,
    uvs,
    motion,
    indices: Uint32Array.from(g.index.array as ArrayLike<number>),
  };
}

/**
 * The light level a GLB carries (built-in faces: src/faces/glb.ts): each primitive's
 * `lightIndices` accessor, by name, in place of its triangles. Null when the GLB has none.
 */
export async function shippedLevel(
  meshes: Mesh[],
  parser: { json: { accessors?: { name?: string }[] }; getDependency(type: 'accessor', index: number): Promise<unknown> },
): Promise<LodReport[] | null> {
  const accessors = parser.json.accessors ?? [];
  const report: LodReport[] = [];
  for (const mesh of meshes) {
    const g = mesh.geometry as BufferGeometry;
    const name = (g.userData as { lightIndices?: unknown }).lightIndices;
    const index = typeof name === 'string' ? accessors.findIndex((a) => a.name === name) : -1;
    if (index < 0 || !g.index) continue;
    const light = (await parser.getDependency('accessor', index)) as BufferAttribute;
    if (light.count % 3 || light.count >= g.index.count) continue;
    report.push({ mesh: mesh.name, before: g.index.count / 3, after: light.count / 3 });
    g.setIndex(light);
    g.clearGroups();
  }
  return report.length ? report : null;
}

/** Simplifies each mesh's triangles in place; returns what changed. */
export async function simplifyMeshes(meshes: Mesh[], options: LodOptions = SOFTWARE_LOD): Promise<LodReport[]> {
  // Each mesh's own units to the face's (quantised GLBs scale every mesh's positions differently).
  const inputs = meshes.map((m) => (m.updateWorldMatrix(true, false), { mesh: m, input: lodInput(m), unit: m.matrixWorld.getMaxScaleOnAxis() || 1 }));
  // The face's size: the mesh with the most triangles (the head).
  let largest: (typeof inputs)[number] | null = null;
  for (const part of inputs) if (part.input && (!largest || part.input.indices.length > largest.input!.indices.length)) largest = part;
  if (!largest?.input) return [];
  const faceScale = (await lodScale(largest.input.positions)) * largest.unit;
  const report: LodReport[] = [];
  for (const { mesh, input, unit } of inputs) {
    if (!input) continue;
    const simplified = await simplifyIndices(input, faceScale / unit, options);
    if (!simplified) continue;
    const g = mesh.geometry as BufferGeometry;
    g.setIndex(new BufferAttribute(input.positions.length / 3 > 65535 ? simplified : Uint16Array.from(simplified), 1));
    g.clearGroups();
    report.push({ mesh: mesh.name, before: input.indices.length / 3, after: simplified.length / 3 });
  }
  return report;
}

/**
 * Keeps only the vertices a mesh's triangles use (after simplification most are unused), with
 * their attributes and morph targets, as floats. The bounding box and sphere are those of the full
 * set, so framing does not depend on the level of detail.
 */
export function compactVertices(mesh: Mesh): void {
  const g = mesh.geometry as BufferGeometry;
  if (!g.index || !g.attributes.position) return;
  const index = g.index.array as ArrayLike<number>;
  const count = g.attributes.position.count;
  const remap = new Int32Array(count).fill(-1);
  const keep: number[] = [];
  const newIndex = new Uint32Array(index.length);
  for (let i = 0; i < index.length; i++) {
    const v = index[i];
    if (remap[v] < 0) (remap[v] = keep.length), keep.push(v);
    newIndex[i] = remap[v];
  }
  if (keep.length > count * 0.9) return;
  if (!g.boundingBox) g.computeBoundingBox();
  if (!g.boundingSphere) g.computeBoundingSphere();
  const pick = (a: Attribute): BufferAttribute => {
    const n = a.itemSize;
    const out = new Float32Array(keep.length * n);
    const get = [a.getX, a.getY, a.getZ, a.getW];
    for (let k = 0; k < keep.length; k++) for (let c = 0; c < n; c++) out[k * n + c] = get[c].call(a, keep[k]);
    return new BufferAttribute(out, n);
  };
  for (const name of Object.keys(g.attributes)) g.setAttribute(name, pick(g.attributes[name]));
  const morphs = g.morphAttributes as Record<string, Attribute[]>;
  for (const name of Object.keys(morphs)) morphs[name] = morphs[name].map(pick);
  g.setIndex(new BufferAttribute(keep.length > 65535 ? newIndex : Uint16Array.from(newIndex), 1));
}
