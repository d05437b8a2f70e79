/** Vertex attributes read into plain arrays (GLB attributes may be quantised or interleaved). */
import type { BufferGeometry } from 'three';

type Attribute = BufferGeometry['attributes'][string];

/** The attribute's x, y, z per vertex as floats, whatever its storage. */
export function readXyz(attr: Attribute): Float32Array {
  const out = new Float32Array(attr.count * 3);
  for (let i = 0; i < attr.count; i++) {
    out[i * 3] = attr.getX(i);
    out[i * 3 + 1] = attr.getY(i);
    out[i * 3 + 2] = attr.getZ(i);
  }
  return out;
}
