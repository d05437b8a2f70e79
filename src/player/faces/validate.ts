/**
 * Checks an uploaded face (GLB or VRM, which is a GLB) before the player uses it: the player drives
 * morph targets by name, so a face is only usable if its meshes carry the viseme_* set and the key
 * ARKit shapes. Reads the glTF JSON chunk only, so compressed geometry need not be decoded.
 */
import { ARKIT, VISEMES } from './morphs.js';

export const MAX_FACE_BYTES = 3 * 1024 * 1024;

/** ARKit shapes the player relies on beyond visemes: jaw, blinks, smiles, brows. */
export const KEY_ARKIT = ['jawOpen', 'eyeBlinkLeft', 'eyeBlinkRight', 'mouthSmileLeft', 'mouthSmileRight', 'browInnerUp', 'mouthFunnel', 'mouthPucker', 'mouthClose'] as const;

export interface FaceValidation {
  ok: boolean;
  problems: string[];
  morphs: string[];
  sizeBytes: number;
}

interface GltfJson {
  asset?: { version?: string };
  meshes?: { name?: string; extras?: { targetNames?: unknown }; primitives?: { targets?: unknown[] }[] }[];
  extensionsRequired?: string[];
}

const SUPPORTED_REQUIRED = new Set(['EXT_meshopt_compression', 'KHR_mesh_quantization', 'KHR_texture_transform', 'KHR_materials_unlit', 'KHR_texture_basisu', 'KHR_draco_mesh_compression']);

export function validateFaceGlb(buffer: Uint8Array, maxBytes = MAX_FACE_BYTES): FaceValidation {
  const problems: string[] = [];
  const sizeBytes = buffer.byteLength;
  const fail = (msg: string): FaceValidation => ({ ok: false, problems: [...problems, msg], morphs: [], sizeBytes });
  if (sizeBytes > maxBytes) problems.push(`file is ${sizeBytes} bytes, over the ${maxBytes}-byte limit`);
  if (sizeBytes < 20) return fail('not a GLB: too short');
  const view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  if (view.getUint32(0, true) !== 0x46546c67) return fail('not a GLB: bad magic (expected "glTF")');
  if (view.getUint32(4, true) !== 2) return fail(`unsupported glTF container version ${view.getUint32(4, true)}`);
  if (view.getUint32(8, true) > sizeBytes) return fail('GLB length header exceeds the data');
  const jsonLen = view.getUint32(12, true);
  if (view.getUint32(16, true) !== 0x4e4f534a || 20 + jsonLen > sizeBytes) return fail('GLB has no JSON chunk');
  let json: GltfJson;
  try {
    json = JSON.parse(new TextDecoder().decode(buffer.subarray(20, 20 + jsonLen))) as GltfJson;
  } catch {
    return fail('GLB JSON chunk is not valid JSON');
  }
  if (!json.asset?.version?.startsWith('2.')) problems.push('glTF asset version is not 2.x');
  for (const ext of json.extensionsRequired ?? []) {
    if (!SUPPORTED_REQUIRED.has(ext)) problems.push(`requires unsupported extension ${ext}`);
  }
  const morphs = new Set<string>();
  for (const mesh of json.meshes ?? []) {
    const names = mesh.extras?.targetNames;
    if (Array.isArray(names)) {
      const count = mesh.primitives?.[0]?.targets?.length ?? 0;
      if (count !== names.length) problems.push(`mesh ${mesh.name ?? '?'}: ${names.length} target names for ${count} targets`);
      for (const n of names) if (typeof n === 'string') morphs.add(n);
    }
  }
  const missingVisemes = VISEMES.filter((v) => !morphs.has(v));
  if (missingVisemes.length) problems.push(`missing viseme morphs: ${missingVisemes.join(', ')}`);
  const missingKey = KEY_ARKIT.filter((v) => !morphs.has(v));
  if (missingKey.length) problems.push(`missing ARKit morphs: ${missingKey.join(', ')}`);
  void ARKIT;
  return { ok: problems.length === 0, problems, morphs: [...morphs].sort(), sizeBytes };
}
