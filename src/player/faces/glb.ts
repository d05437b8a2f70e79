/**
 * Turns the generator's plain arrays into a meshopt-compressed GLB with gltf-transform.
 * Kept separate from the geometry code so the geometry stays testable without glTF machinery.
 */
import { Document, Logger, NodeIO, type Material, type Texture } from '@gltf-transform/core';
import { EXTMeshoptCompression, KHRMaterialsClearcoat, KHRMaterialsSheen, KHRMeshQuantization, KHRMaterialsSpecular } from '@gltf-transform/extensions';
import { meshopt } from '@gltf-transform/functions';
import { MeshoptDecoder, MeshoptEncoder } from 'meshoptimizer';

export interface MaterialSpec {
  name: string;
  color: [number, number, number, number];
  roughness: number;
  metallic?: number;
  texture?: { data: Uint8Array; mime: 'image/png' | 'image/jpeg' };
  /** Tangent-space normal map and its strength. */
  normalTexture?: { data: Uint8Array; mime: 'image/png' | 'image/jpeg'; scale: number };
  /** Metallic-roughness map (G = roughness, multiplied by `roughness`). */
  roughnessTexture?: { data: Uint8Array; mime: 'image/png' | 'image/jpeg' };
  /** Alpha-tested cut-outs (hair tips, lashes). */
  alphaCutoff?: number;
  /** Alpha-blended (fine strands such as lashes, soft eye shadows). */
  blend?: boolean;
  doubleSided?: boolean;
  clearcoat?: { factor: number; roughness: number };
  sheen?: { color: [number, number, number]; roughness: number };
  specular?: number;
}

export interface PrimitiveSpec {
  positions: Float32Array;
  normals?: Float32Array;
  uvs?: Float32Array;
  colors?: Float32Array;
  indices: Uint32Array;
  material: string;
}

export interface MeshSpec {
  name: string;
  primitives: PrimitiveSpec[];
  /** Morph target names, and per primitive one position-delta array per target. */
  targetNames?: string[];
  targets?: Float32Array[][];
  translation?: [number, number, number];
}

export async function writeGlb(meshes: MeshSpec[], materials: MaterialSpec[], extras: Record<string, unknown>): Promise<Uint8Array> {
  // Errors only: meshopt's quantize warns once per primitive whose UVs leave [0,1] (expected for
  // tiled textures) and prune lists what it removed, dozens of lines on every install.
  const doc = new Document().setLogger(new Logger(Logger.Verbosity.ERROR));
  const buffer = doc.createBuffer();
  const scene = doc.createScene('Face');
  const root = doc.createNode('Face');
  root.setExtras(extras);
  scene.addChild(root);
  const clearcoatExt = doc.createExtension(KHRMaterialsClearcoat);
  const sheenExt = doc.createExtension(KHRMaterialsSheen);
  const specExt = doc.createExtension(KHRMaterialsSpecular);

  const mats = new Map<string, Material>();
  // one texture per image: materials that share an image (the hair layers) share the texture
  const textures = new Map<Uint8Array, Texture>();
  for (const m of materials) {
    const mat = doc.createMaterial(m.name).setBaseColorFactor(m.color).setRoughnessFactor(m.roughness).setMetallicFactor(m.metallic ?? 0);
    if (m.texture) {
      let tex = textures.get(m.texture.data);
      if (!tex) textures.set(m.texture.data, (tex = doc.createTexture(`${m.name}Color`).setImage(m.texture.data).setMimeType(m.texture.mime)));
      mat.setBaseColorTexture(tex);
    }
    if (m.normalTexture) {
      mat.setNormalTexture(doc.createTexture(`${m.name}Normal`).setImage(m.normalTexture.data).setMimeType(m.normalTexture.mime)).setNormalScale(m.normalTexture.scale);
    }
    if (m.roughnessTexture) {
      mat.setMetallicRoughnessTexture(doc.createTexture(`${m.name}Roughness`).setImage(m.roughnessTexture.data).setMimeType(m.roughnessTexture.mime));
    }
    if (m.alphaCutoff !== undefined) mat.setAlphaMode('MASK').setAlphaCutoff(m.alphaCutoff);
    if (m.blend) mat.setAlphaMode('BLEND');
    if (m.doubleSided) mat.setDoubleSided(true);
    if (m.clearcoat) mat.setExtension('KHR_materials_clearcoat', clearcoatExt.createClearcoat().setClearcoatFactor(m.clearcoat.factor).setClearcoatRoughnessFactor(m.clearcoat.roughness));
    if (m.sheen) mat.setExtension('KHR_materials_sheen', sheenExt.createSheen().setSheenColorFactor(m.sheen.color).setSheenRoughnessFactor(m.sheen.roughness));
    if (m.specular !== undefined) mat.setExtension('KHR_materials_specular', specExt.createSpecular().setSpecularFactor(m.specular));
    mats.set(m.name, mat);
  }

  for (const spec of meshes) {
    const mesh = doc.createMesh(spec.name);
    spec.primitives.forEach((p, pi) => {
      const prim = doc.createPrimitive().setMaterial(mats.get(p.material)!);
      prim.setAttribute('POSITION', doc.createAccessor().setType('VEC3').setArray(p.positions).setBuffer(buffer));
      if (p.normals) prim.setAttribute('NORMAL', doc.createAccessor().setType('VEC3').setArray(p.normals).setBuffer(buffer));
      if (p.uvs) prim.setAttribute('TEXCOORD_0', doc.createAccessor().setType('VEC2').setArray(p.uvs).setBuffer(buffer));
      if (p.colors) prim.setAttribute('COLOR_0', doc.createAccessor().setType('VEC3').setArray(p.colors).setBuffer(buffer));
      prim.setIndices(doc.createAccessor().setType('SCALAR').setArray(p.indices).setBuffer(buffer));
      spec.targets?.[pi]?.forEach((delta, ti) => {
        const target = doc.createPrimitiveTarget(spec.targetNames![ti]);
        target.setAttribute('POSITION', doc.createAccessor().setType('VEC3').setArray(delta).setBuffer(buffer));
        prim.addTarget(target);
      });
      mesh.addPrimitive(prim);
    });
    if (spec.targetNames?.length) {
      mesh.setExtras({ targetNames: spec.targetNames });
      mesh.setWeights(spec.targetNames.map(() => 0));
    }
    const node = doc.createNode(spec.name).setMesh(mesh);
    if (spec.translation) node.setTranslation(spec.translation);
    root.addChild(node);
  }

  await MeshoptEncoder.ready;
  doc.createExtension(KHRMeshQuantization);
  // Quantisation bits: 16-bit positions keep sub-0.1 mm accuracy for small lip and lid deltas.
  await doc.transform(meshopt({ encoder: MeshoptEncoder, level: 'high', quantizePosition: 16, quantizeNormal: 10, quantizeTexcoord: 12, quantizeColor: 8 }));
  const io = new NodeIO().registerExtensions([EXTMeshoptCompression, KHRMeshQuantization, KHRMaterialsClearcoat, KHRMaterialsSheen, KHRMaterialsSpecular]).registerDependencies({
    'meshopt.encoder': MeshoptEncoder,
    'meshopt.decoder': MeshoptDecoder,
  });
  return io.writeBinary(doc);
}

/** Reads a (possibly meshopt-compressed) GLB back into a gltf-transform Document. */
export async function readGlb(data: Uint8Array): Promise<Document> {
  await MeshoptDecoder.ready;
  const { ALL_EXTENSIONS } = await import('@gltf-transform/extensions');
  const io = new NodeIO().registerExtensions(ALL_EXTENSIONS).registerDependencies({ 'meshopt.decoder': MeshoptDecoder, 'meshopt.encoder': MeshoptEncoder });
  return io.readBinary(data);
}
