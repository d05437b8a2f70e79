/** Small face GLBs for the custom-face tests, made with @gltf-transform/core. */
import { Document, NodeIO } from '@gltf-transform/core';
import { VISEMES } from '../../../src/faces/names.js';
import { KEY_ARKIT } from '../../../src/faces/validate.js';

/** Every morph target name a usable face needs (the 15 visemes and the key ARKit shapes). */
export const REQUIRED_MORPHS: string[] = [...VISEMES, ...KEY_ARKIT];

/**
 * A GLB with one triangle mesh whose morph targets carry `morphs` as names (glTF
 * `mesh.extras.targetNames`, as Blender, Ready Player Me and VRoid exports do).
 */
export async function faceGlb(morphs: string[] = REQUIRED_MORPHS, padBytes = 0): Promise<Uint8Array> {
  const doc = new Document();
  const buffer = doc.createBuffer();
  const positions = doc
    .createAccessor('POSITION')
    .setType('VEC3')
    .setBuffer(buffer)
    .setArray(new Float32Array([0, 0, 0, 1, 0, 0, 0, 1, 0]));
  const prim = doc.createPrimitive().setAttribute('POSITION', positions);
  morphs.forEach((name, i) => {
    const delta = doc
      .createAccessor(`${name}_delta`)
      .setType('VEC3')
      .setBuffer(buffer)
      .setArray(new Float32Array([0, 0.001 * (i + 1), 0, 0, 0, 0, 0, 0, 0]));
    prim.addTarget(doc.createPrimitiveTarget(name).setAttribute('POSITION', delta));
  });
  if (padBytes > 0) {
    // Ballast (e.g. a texture's worth) to test the size limit.
    doc.createAccessor('ballast').setType('SCALAR').setBuffer(buffer).setArray(new Uint8Array(padBytes));
  }
  const mesh = doc
    .createMesh('Head')
    .addPrimitive(prim)
    .setWeights(morphs.map(() => 0))
    .setExtras({ targetNames: morphs });
  doc.createScene('Scene').addChild(doc.createNode('Head').setMesh(mesh));
  return new NodeIO().writeBinary(doc);
}
