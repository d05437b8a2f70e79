/** Vertex attributes read into plain arrays (GLB attributes may be quantised or interleaved). */
import type { BufferGeometry } from 'three';

type Attribute = BufferGeometry['attributes'][string];

/** Scale from a normalised integer array's values to [-1, 1] or [0, 1] (glTF's rules). */
function unit(array: ArrayLike<number>): number | null {
  if (array instanceof Float32Array) return 1;
  if (array instanceof Int16Array) return 1 / 32767;
  if (array instanceof Uint16Array) return 1 / 65535;
  if (array instanceof Int8Array) return 1 / 127;
  if (array instanceof Uint8Array) return 1 / 255;
  return null;
}

/** The attribute's x, y, z per vertex as floats, whatever its storage. */
export function readXyz(attr: Attribute): Float32Array {
  const out = new Float32Array(attr.count * 3);
  const plain = attr as Attribute & { isInterleavedBufferAttribute?: boolean; array: ArrayLike<number>; itemSize: number; normalized: boolean };
  // A plain attribute: straight from its array (the per-element accessors cost a call each, and a
  // face has millions of morph-target values to read at load).
  if (!plain.isInterleavedBufferAttribute && plain.itemSize >= 3) {
    const a = plain.array;
    const k = plain.normalized ? unit(a) : 1;
    if (k !== null) {
      const signed = plain.normalized && k !== 1 && !(a instanceof Uint16Array || a instanceof Uint8Array);
      const n = plain.itemSize;
      for (let i = 0, o = 0; o < out.length; i += n, o += 3) {
        for (let c = 0; c < 3; c++) {
          const v = a[i + c] * k;
          out[o + c] = signed ? Math.max(v, -1) : v;
        }
      }
      return out;
    }
  }
  for (let i = 0; i < attr.count; i++) {
    out[i * 3] = attr.getX(i);
    out[i * 3 + 1] = attr.getY(i);
    out[i * 3 + 2] = attr.getZ(i);
  }
  return out;
}
