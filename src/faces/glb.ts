/**
 * Turns the generator's plain arrays into a meshopt-compressed GLB with gltf-transform.
 * Kept separate from the geometry code so the geometry stays testable without glTF machinery.
 */
import { Document, Logger, NodeIO, type Accessor, type Material, type Primitive, type Texture } from '@gltf-transform/core';
import { EXTMeshoptCompression, KHRMaterialsClearcoat, KHRMaterialsSheen, KHRMeshQuantization, KHRMaterialsSpecular } from '@gltf-transform/extensions';
import { meshopt } from '@gltf-transform/functions';
import { MeshoptDecoder, MeshoptEncoder } from 'meshoptimizer';
import { GUARDED, lodScale, simplifyIndices, type LodInput } from './lod.js';

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
    const mat = doc
      .createMaterial(m.name)
      .setBaseColorFactor(m.color)
      .setRoughnessFactor(m.roughness)
      .setMetallicFactor(m.metallic ?? 0);
    if (m.texture) {
      let tex = textures.get(m.texture.data);
      if (!tex) textures.set(m.texture.data, (tex = doc.createTexture(`${m.name}Color`).setImage(m.texture.data).setMimeType(m.texture.mime)));
      mat.setBaseColorTexture(tex);
    }
    if (m.normalTexture) {
      mat
        .setNormalTexture(doc.createTexture(`${m.name}Normal`).setImage(m.normalTexture.data).setMimeType(m.normalTexture.mime))
        .setNormalScale(m.normalTexture.scale);
    }
    if (m.roughnessTexture) {
      mat.setMetallicRoughnessTexture(doc.createTexture(`${m.name}Roughness`).setImage(m.roughnessTexture.data).setMimeType(m.roughnessTexture.mime));
    }
    if (m.alphaCutoff !== undefined) mat.setAlphaMode('MASK').setAlphaCutoff(m.alphaCutoff);
    if (m.blend) mat.setAlphaMode('BLEND');
    if (m.doubleSided) mat.setDoubleSided(true);
    if (m.clearcoat)
      mat.setExtension(
        'KHR_materials_clearcoat',
        clearcoatExt.createClearcoat().setClearcoatFactor(m.clearcoat.factor).setClearcoatRoughnessFactor(m.clearcoat.roughness),
      );
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
  await addLightLevel(doc);
  const io = new NodeIO()
    .registerExtensions([EXTMeshoptCompression, KHRMeshQuantization, KHRMaterialsClearcoat, KHRMaterialsSheen, KHRMaterialsSpecular])
    .registerDependencies({
      'meshopt.encoder': MeshoptEncoder,
      'meshopt.decoder': MeshoptDecoder,
    });
  return io.writeBinary(doc);
}

/** An accessor's elements as floats (dequantised), `size` per element. */
function floats(acc: Accessor | null, size: number): Float32Array | null {
  if (!acc) return null;
  const out = new Float32Array(acc.getCount() * size);
  const el: number[] = [];
  for (let i = 0; i < acc.getCount(); i++) {
    acc.getElement(i, el);
    for (let k = 0; k < size; k++) out[i * size + k] = el[k];
  }
  return out;
}

/**
 * The software-GL level of detail (src/faces/lod.ts), computed here once rather than in
 * every visitor's browser: per primitive, an extra index accessor over the same (final, reordered
 * and quantised) vertices, named in the primitive's extras as `lightIndices`. Viewers ignore it;
 * the page draws it instead of simplifying at load (docs/player.md, "Level of detail").
 */
async function addLightLevel(doc: Document): Promise<void> {
  const buffer = doc.getRoot().listBuffers()[0];
  const parts: { name: string; prim: Primitive; input: LodInput; unit: number }[] = [];
  for (const node of doc.getRoot().listNodes()) {
    const mesh = node.getMesh();
    if (!mesh) continue;
    const m = node.getWorldMatrix();
    const unit = Math.hypot(m[0], m[1], m[2]);
    const targetNames = (mesh.getExtras() as { targetNames?: string[] }).targetNames ?? [];
    mesh.listPrimitives().forEach((prim, pi) => {
      const indices = prim.getIndices();
      const positions = floats(prim.getAttribute('POSITION'), 3);
      if (!indices || !positions) return;
      const motion: Float32Array[] = [];
      for (const name of GUARDED) {
        const target = prim.listTargets()[targetNames.indexOf(name)];
        const delta = target ? floats(target.getAttribute('POSITION'), 3) : null;
        if (delta) motion.push(delta);
      }
      const input: LodInput = {
        positions,
        normals: floats(prim.getAttribute('NORMAL'), 3),
        uvs: floats(prim.getAttribute('TEXCOORD_0'), 2),
        motion,
        indices: Uint32Array.from(indices.getArray() as ArrayLike<number>),
      };
      parts.push({ name: `${mesh.getName()}:${pi}`, prim, input, unit });
    });
  }
  if (!parts.length) return;
  const largest = parts.reduce((a, b) => (b.input.indices.length > a.input.indices.length ? b : a));
  const faceScale = (await lodScale(largest.input.positions)) * largest.unit;
  for (const part of parts) {
    const simplified = await simplifyIndices(part.input, faceScale / part.unit);
    if (!simplified) continue;
    // 32-bit: an accessor no primitive uses is stored as vertex data, in 4-byte strides (16-bit
    // values would come back interleaved).
    const acc = doc.createAccessor(`${part.name}:light`).setType('SCALAR').setArray(simplified).setBuffer(buffer);
    part.prim.setExtras({ ...part.prim.getExtras(), lightIndices: acc.getName() });
  }
}

/** Reads a (possibly meshopt-compressed) GLB back into a gltf-transform Document. */
export async function readGlb(data: Uint8Array): Promise<Document> {
  await MeshoptDecoder.ready;
  const { ALL_EXTENSIONS } = await import('@gltf-transform/extensions');
  const io = new NodeIO().registerExtensions(ALL_EXTENSIONS).registerDependencies({ 'meshopt.decoder': MeshoptDecoder, 'meshopt.encoder': MeshoptEncoder });
  return io.readBinary(data);
}
