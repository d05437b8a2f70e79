/**
 * A lighter level of detail for software GL. A software rasteriser (SwiftShader, llvmpipe) pays
 * a fixed set-up cost per triangle, and at player sizes a face built for GPUs has triangles of two
 * or three pixels: the triangle count, not the shading, sets the frame rate there. Each mesh's
 * index buffer is simplified with meshoptimizer; vertices, UVs and morph targets stay as they are
 * (the new triangles reference the same vertices), so every face, built-in or uploaded, animates
 * exactly as before. The error metric includes normals, UVs and how far the jaw, lip and eyelid
 * morphs move each vertex, so the parts that move when it talks keep their shape.
 */
import { BufferAttribute, type BufferGeometry, type Mesh } from 'three';
import { MeshoptSimplifier } from 'meshoptimizer/simplifier';
import { readXyz } from './attributes.js';

/** Morphs whose motion the simplified mesh must still show: jaw, lips and eyelids. */
const GUARDED = ['jawOpen', 'mouthFunnel', 'mouthPucker', 'mouthSmileLeft', 'mouthSmileRight', 'mouthClose', 'eyeBlinkLeft', 'eyeBlinkRight'];

export interface LodOptions {
  /** Fraction of triangles to aim for. */
  ratio: number;
  /** Largest allowed deviation, relative to the mesh's size. */
  error: number;
  /** Meshes with fewer triangles are left alone. */
  minTriangles: number;
  /** Weight of the guarded morphs' displacement in the error, against position (1). */
  motionWeight: number;
}

export const SOFTWARE_LOD: LodOptions = { ratio: 0.2, error: 0.01, minTriangles: 600, motionWeight: 1 };

export interface LodReport { mesh: string; before: number; after: number }

/** Per-vertex attributes for the simplifier's error metric, and their weights. */
function errorAttributes(mesh: Mesh, positions: Float32Array, scale: number, motionWeight: number): { data: Float32Array; stride: number; weights: number[] } {
  const g = mesh.geometry as BufferGeometry;
  const count = positions.length / 3;
  const columns: { values: Float32Array; size: number; weight: number }[] = [];
  if (g.attributes.normal) columns.push({ values: readXyz(g.attributes.normal), size: 3, weight: 0.5 });
  const uv = g.attributes.uv;
  if (uv) {
    const values = new Float32Array(count * 2);
    for (let i = 0; i < count; i++) (values[i * 2] = uv.getX(i)), (values[i * 2 + 1] = uv.getY(i));
    columns.push({ values, size: 2, weight: 0.5 });
  }
  const dict = mesh.morphTargetDictionary ?? {};
  const morphs = g.morphAttributes.position ?? [];
  for (const name of GUARDED) {
    const index = dict[name];
    if (index === undefined || !morphs[index]) continue;
    const target = readXyz(morphs[index]);
    // Displacement in the mesh's own scale, so a lip that travels far weighs like a visible edge.
    for (let i = 0; i < target.length; i++) target[i] = (g.morphTargetsRelative ? target[i] : target[i] - positions[i]) / scale;
    columns.push({ values: target, size: 3, weight: motionWeight });
  }
  const stride = columns.reduce((n, c) => n + c.size, 0);
  const data = new Float32Array(count * stride);
  const weights: number[] = [];
  let offset = 0;
  for (const c of columns) {
    for (let i = 0; i < count; i++) for (let k = 0; k < c.size; k++) data[i * stride + offset + k] = c.values[i * c.size + k];
    for (let k = 0; k < c.size; k++) weights.push(c.weight);
    offset += c.size;
  }
  return { data, stride, weights };
}

/** Simplifies each mesh's triangles in place; returns what changed. */
export async function simplifyMeshes(meshes: Mesh[], options: LodOptions = SOFTWARE_LOD): Promise<LodReport[]> {
  await MeshoptSimplifier.ready;
  const report: LodReport[] = [];
  for (const mesh of meshes) {
    const g = mesh.geometry as BufferGeometry;
    const triangles = g.index ? g.index.count / 3 : 0;
    // Multi-material groups index into ranges of the index buffer: leave such meshes whole.
    if (!g.index || triangles < options.minTriangles || g.groups.length > 1) continue;
    const positions = readXyz(g.attributes.position);
    const scale = MeshoptSimplifier.getScale(positions, 3) || 1;
    const attrs = errorAttributes(mesh, positions, scale, options.motionWeight);
    const indices = Uint32Array.from(g.index.array as ArrayLike<number>);
    const target = Math.max(options.minTriangles, Math.floor(triangles * options.ratio)) * 3;
    const [simplified] = attrs.stride
      ? MeshoptSimplifier.simplifyWithAttributes(indices, positions, 3, attrs.data, attrs.stride, attrs.weights, null, target, options.error)
      : MeshoptSimplifier.simplify(indices, positions, 3, target, options.error);
    if (simplified.length >= indices.length) continue;
    g.setIndex(new BufferAttribute(positions.length / 3 > 65535 ? simplified : Uint16Array.from(simplified), 1));
    g.clearGroups();
    report.push({ mesh: mesh.name, before: triangles, after: simplified.length / 3 });
  }
  return report;
}
