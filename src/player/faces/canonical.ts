/**
 * Reads MediaPipe's canonical face mesh (468 vertices with UVs, the same data as MediaPipe's
 * `canonical_face_model.obj`) straight out of the `@mediapipe/face_mesh` npm package, so the repo
 * ships no copy of it. The package bundles several assets into one packed `.data` file; its loader
 * script lists each file's byte range. The one we want is the geometry pipeline metadata protobuf,
 * whose field 1 is a `Mesh3d` { vertex_type, primitive_type, vertex_buffer (x,y,z,u,v floats),
 * index_buffer (uint32 triangles) }. Units are centimetres, +y up, +z towards the viewer.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

export interface CanonicalMesh {
  /** xyz per vertex, centimetres. */
  positions: Float32Array;
  /** uv per vertex (MediaPipe texture layout, v down). */
  uvs: Float32Array;
  /** Triangle indices. */
  indices: Uint32Array;
}

const METADATA_NAME = 'geometry_pipeline_metadata_landmarks.binarypb';

function packageDir(): string {
  const require = createRequire(import.meta.url);
  return path.dirname(require.resolve('@mediapipe/face_mesh/package.json'));
}

/** Locates the metadata protobuf inside the packed asset file via the loader's file table. */
function readMetadata(): Uint8Array {
  const dir = packageDir();
  const loader = fs.readFileSync(path.join(dir, 'face_mesh_solution_packed_assets_loader.js'), 'utf8');
  const re = /"filename":\s*"([^"]+)",\s*"start":\s*(\d+),\s*"end":\s*(\d+)/g;
  for (let m = re.exec(loader); m; m = re.exec(loader)) {
    if (m[1].endsWith(METADATA_NAME)) {
      const data = fs.readFileSync(path.join(dir, 'face_mesh_solution_packed_assets.data'));
      return data.subarray(Number(m[2]), Number(m[3]));
    }
  }
  throw new Error(`@mediapipe/face_mesh: ${METADATA_NAME} not found in the packed assets`);
}

/** Minimal protobuf wire-format reader: just what Mesh3d needs. */
class Reader {
  pos = 0;
  constructor(readonly buf: Uint8Array, readonly end = buf.length) {}
  varint(): number {
    let result = 0;
    let shift = 0;
    let byte: number;
    do {
      byte = this.buf[this.pos++];
      result += (byte & 0x7f) * 2 ** shift;
      shift += 7;
    } while (byte & 0x80);
    return result;
  }
  skip(wire: number): void {
    if (wire === 0) this.varint();
    else if (wire === 1) this.pos += 8;
    else if (wire === 2) {
      const len = this.varint(); // read first: `pos += varint()` would use the stale pos
      this.pos += len;
    }
    else if (wire === 5) this.pos += 4;
    else throw new Error(`protobuf: unsupported wire type ${wire}`);
  }
}

let cached: CanonicalMesh | null = null;

export function loadCanonicalMesh(): CanonicalMesh {
  if (cached) return cached;
  const meta = readMetadata();
  const top = new Reader(meta);
  let meshStart = -1;
  let meshEnd = -1;
  while (top.pos < top.end) {
    const key = top.varint();
    if (key >>> 3 === 1 && (key & 7) === 2) {
      const len = top.varint();
      meshStart = top.pos;
      meshEnd = top.pos + len;
      top.pos = meshEnd;
    } else top.skip(key & 7);
  }
  if (meshStart < 0) throw new Error('canonical mesh missing from geometry metadata');
  const r = new Reader(meta, meshEnd);
  r.pos = meshStart;
  const floats: number[] = [];
  const idx: number[] = [];
  const view = new DataView(meta.buffer, meta.byteOffset, meta.byteLength);
  while (r.pos < r.end) {
    const key = r.varint();
    const field = key >>> 3;
    const wire = key & 7;
    if (field === 3 && wire === 2) {
      const len = r.varint();
      const end = r.pos + len;
      for (; r.pos < end; r.pos += 4) floats.push(view.getFloat32(r.pos, true));
    } else if (field === 4 && wire === 2) {
      const len = r.varint();
      const end = r.pos + len;
      while (r.pos < end) idx.push(r.varint());
    } else if (field === 3 && wire === 5) {
      // proto2 files store this repeated float unpacked: one tag per value.
      floats.push(view.getFloat32(r.pos, true));
      r.pos += 4;
    } else if (field === 4 && wire === 0) {
      idx.push(r.varint());
    } else r.skip(wire);
  }
  const n = floats.length / 5;
  if (n !== 468) throw new Error(`canonical mesh: expected 468 vertices, got ${n}`);
  const positions = new Float32Array(n * 3);
  const uvs = new Float32Array(n * 2);
  for (let i = 0; i < n; i++) {
    positions.set(floats.slice(i * 5, i * 5 + 3), i * 3);
    uvs.set(floats.slice(i * 5 + 3, i * 5 + 5), i * 2);
  }
  cached = { positions, uvs, indices: Uint32Array.from(idx) };
  return cached;
}
