/**
 * Checks an uploaded face (GLB or VRM, which is a GLB) before the player uses it: the player drives
 * morph targets by name, so a face is only usable if its meshes carry the viseme_* set and the key
 * ARKit shapes. Reads the glTF JSON chunk only, so compressed geometry need not be decoded.
 */
import { ARKIT, VISEMES } from './names.js';

export const MAX_FACE_BYTES = 3 * 1024 * 1024;

/** ARKit shapes the player relies on beyond visemes: jaw, blinks, smiles, brows. */
export const KEY_ARKIT = [
  'jawOpen',
  'eyeBlinkLeft',
  'eyeBlinkRight',
  'mouthSmileLeft',
  'mouthSmileRight',
  'browInnerUp',
  'mouthFunnel',
  'mouthPucker',
  'mouthClose',
] as const;

export interface FaceValidation {
  ok: boolean;
  problems: string[];
  morphs: string[];
  sizeBytes: number;
}

type Json = Record<string, unknown>;

const SUPPORTED_REQUIRED = new Set([
  'EXT_meshopt_compression',
  'KHR_mesh_quantization',
  'KHR_texture_transform',
  'KHR_materials_unlit',
  'KHR_texture_basisu',
  'KHR_draco_mesh_compression',
]);

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const isIndex = (v: unknown): v is number => Number.isInteger(v) && (v as number) >= 0;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The glTF top-level arrays whose items other items point at by index. */
const ARRAYS = [
  'accessors',
  'animations',
  'buffers',
  'bufferViews',
  'cameras',
  'images',
  'materials',
  'meshes',
  'nodes',
  'samplers',
  'scenes',
  'skins',
  'textures',
] as const;
type ArrayName = (typeof ARRAYS)[number];

/** Index fields of each top-level array's items: field name, target array, one index or a list. */
const REFERENCES: Partial<Record<ArrayName, Array<[string, ArrayName, 'one' | 'many']>>> = {
  accessors: [['bufferView', 'bufferViews', 'one']],
  bufferViews: [['buffer', 'buffers', 'one']],
  images: [['bufferView', 'bufferViews', 'one']],
  nodes: [
    ['mesh', 'meshes', 'one'],
    ['skin', 'skins', 'one'],
    ['camera', 'cameras', 'one'],
    ['children', 'nodes', 'many'],
  ],
  scenes: [['nodes', 'nodes', 'many']],
  skins: [
    ['inverseBindMatrices', 'accessors', 'one'],
    ['skeleton', 'nodes', 'one'],
    ['joints', 'nodes', 'many'],
  ],
  textures: [
    ['source', 'images', 'one'],
    ['sampler', 'samplers', 'one'],
  ],
};

const COMPONENT_BYTES: Record<number, number> = { 5120: 1, 5121: 1, 5122: 2, 5123: 2, 5125: 4, 5126: 4 };
const TYPE_COMPONENTS: Record<string, number> = { SCALAR: 1, VEC2: 2, VEC3: 3, VEC4: 4, MAT2: 4, MAT3: 9, MAT4: 16 };
const MATERIAL_TEXTURES = ['normalTexture', 'occlusionTexture', 'emissiveTexture'];
const PBR_TEXTURES = ['baseColorTexture', 'metallicRoughnessTexture'];

/** At most this many problems are reported; a hostile file could otherwise produce millions. */
const MAX_PROBLEMS = 20;

/**
 * Checks the glTF JSON's structure before anything reads it: the types of the fields the player
 * and this validator use, and that every index points inside its array (a hostile or broken file
 * once reached code that assumed both, and answered 500). Loaders in the browser make the same
 * assumptions, so a file that fails here would not render either.
 */
function structureProblems(json: Json, problems: string[]): void {
  const add = (msg: string) => {
    if (problems.length < MAX_PROBLEMS) problems.push(msg);
  };
  const lengths = {} as Record<ArrayName, number>;
  for (const name of ARRAYS) {
    const value = json[name];
    lengths[name] = 0;
    if (value === undefined) continue;
    if (!Array.isArray(value)) {
      add(`"${name}" must be an array`);
      continue;
    }
    const bad = value.findIndex((item) => !isObject(item));
    if (bad >= 0) add(`${name}[${bad}] must be an object`);
    else lengths[name] = value.length;
  }
  const items = (name: ArrayName): Json[] => (lengths[name] ? (json[name] as Json[]) : []);
  const ref = (where: string, value: unknown, target: ArrayName) => {
    if (value === undefined) return;
    if (!isIndex(value)) add(`${where} must be an index into "${target}"`);
    else if (value >= lengths[target]) add(`${where} is ${value}, but "${target}" has ${lengths[target]} item(s)`);
  };
  const refs = (where: string, value: unknown, target: ArrayName) => {
    if (value === undefined) return;
    if (!Array.isArray(value)) add(`${where} must be an array of indices into "${target}"`);
    else value.forEach((v, i) => ref(`${where}[${i}]`, v, target));
  };
  for (const [source, fields] of Object.entries(REFERENCES) as Array<[ArrayName, Array<[string, ArrayName, 'one' | 'many']>]>) {
    items(source).forEach((item, i) => {
      for (const [field, target, arity] of fields) (arity === 'one' ? ref : refs)(`${source}[${i}].${field}`, item[field], target);
    });
  }
  ref('"scene"', json.scene, 'scenes');

  items('buffers').forEach((buffer, i) => {
    if (!isIndex(buffer.byteLength) || buffer.byteLength < 1) add(`buffers[${i}].byteLength must be a positive integer`);
  });
  items('bufferViews').forEach((view, i) => {
    const offset = view.byteOffset ?? 0;
    if (!isIndex(view.byteLength) || view.byteLength < 1) add(`bufferViews[${i}].byteLength must be a positive integer`);
    else if (!isIndex(offset)) add(`bufferViews[${i}].byteOffset must be a non-negative integer`);
    else if (view.byteStride !== undefined && (!isIndex(view.byteStride) || view.byteStride < 4 || view.byteStride > 252))
      add(`bufferViews[${i}].byteStride must be an integer from 4 to 252`);
    else {
      const buffer = isIndex(view.buffer) ? items('buffers')[view.buffer] : undefined;
      if (buffer && isIndex(buffer.byteLength) && offset + view.byteLength > buffer.byteLength)
        add(`bufferViews[${i}] reaches past the end of buffers[${view.buffer}]`);
    }
  });
  items('accessors').forEach((accessor, i) => {
    const componentBytes = COMPONENT_BYTES[accessor.componentType as number];
    const components = TYPE_COMPONENTS[accessor.type as string];
    if (!isIndex(accessor.count) || accessor.count < 1) return add(`accessors[${i}].count must be a positive integer`);
    if (!componentBytes) return add(`accessors[${i}].componentType is not a glTF component type`);
    if (!components) return add(`accessors[${i}].type must be one of ${Object.keys(TYPE_COMPONENTS).join(', ')}`);
    const offset = accessor.byteOffset ?? 0;
    if (!isIndex(offset)) return add(`accessors[${i}].byteOffset must be a non-negative integer`);
    const view = isIndex(accessor.bufferView) ? items('bufferViews')[accessor.bufferView] : undefined;
    if (!view || !isIndex(view.byteLength)) return;
    const elementBytes = componentBytes * components;
    const stride = isIndex(view.byteStride) ? view.byteStride : elementBytes;
    if (offset + stride * (accessor.count - 1) + elementBytes > view.byteLength)
      add(`accessors[${i}] reads past the end of bufferViews[${accessor.bufferView}]`);
  });
  items('meshes').forEach((mesh, m) => {
    const at = `meshes[${m}]`;
    if (!Array.isArray(mesh.primitives) || mesh.primitives.length === 0) return add(`${at}.primitives must be a non-empty array`);
    mesh.primitives.forEach((primitive: unknown, p) => {
      const pat = `${at}.primitives[${p}]`;
      if (!isObject(primitive)) return add(`${pat} must be an object`);
      if (!isObject(primitive.attributes)) add(`${pat}.attributes must be an object`);
      else for (const [name, index] of Object.entries(primitive.attributes)) ref(`${pat}.attributes.${name}`, index, 'accessors');
      ref(`${pat}.indices`, primitive.indices, 'accessors');
      ref(`${pat}.material`, primitive.material, 'materials');
      if (primitive.targets === undefined) return;
      if (!Array.isArray(primitive.targets)) return add(`${pat}.targets must be an array`);
      primitive.targets.forEach((target: unknown, t) => {
        if (!isObject(target)) add(`${pat}.targets[${t}] must be an object`);
        else for (const [name, index] of Object.entries(target)) ref(`${pat}.targets[${t}].${name}`, index, 'accessors');
      });
    });
    if (mesh.extras !== undefined && !isObject(mesh.extras)) add(`${at}.extras must be an object`);
    const names = isObject(mesh.extras) ? mesh.extras.targetNames : undefined;
    if (names === undefined) return;
    if (!Array.isArray(names) || names.some((n) => typeof n !== 'string')) add(`${at}.extras.targetNames must be an array of strings`);
    else if (names.some((n: string) => n.includes('\u0000') || LONE_SURROGATE.test(n) || n.length > 200))
      add(`${at}.extras.targetNames holds a name that is not plain text (NUL, unpaired surrogate or over 200 characters)`);
  });
  items('materials').forEach((material, i) => {
    const pbr = material.pbrMetallicRoughness;
    if (pbr !== undefined && !isObject(pbr)) return add(`materials[${i}].pbrMetallicRoughness must be an object`);
    const infos: Array<[string, unknown]> = [
      ...MATERIAL_TEXTURES.map((k): [string, unknown] => [k, material[k]]),
      ...PBR_TEXTURES.map((k): [string, unknown] => [`pbrMetallicRoughness.${k}`, pbr?.[k]]),
    ];
    for (const [key, info] of infos) {
      if (info === undefined) continue;
      if (!isObject(info)) add(`materials[${i}].${key} must be an object`);
      else ref(`materials[${i}].${key}.index`, info.index, 'textures');
    }
  });
  items('animations').forEach((animation, a) => {
    const samplers = Array.isArray(animation.samplers) ? animation.samplers : [];
    if (!Array.isArray(animation.samplers) || !Array.isArray(animation.channels)) return add(`animations[${a}] must have "channels" and "samplers" arrays`);
    samplers.forEach((sampler: unknown, s) => {
      if (!isObject(sampler)) return add(`animations[${a}].samplers[${s}] must be an object`);
      ref(`animations[${a}].samplers[${s}].input`, sampler.input, 'accessors');
      ref(`animations[${a}].samplers[${s}].output`, sampler.output, 'accessors');
    });
    (animation.channels as unknown[]).forEach((channel, c) => {
      if (!isObject(channel) || !isObject(channel.target)) return add(`animations[${a}].channels[${c}] must be an object with a "target" object`);
      if (!isIndex(channel.sampler) || channel.sampler >= samplers.length)
        add(`animations[${a}].channels[${c}].sampler must be an index into the animation's samplers`);
      ref(`animations[${a}].channels[${c}].target.node`, channel.target.node, 'nodes');
    });
  });
}

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
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder().decode(buffer.subarray(20, 20 + jsonLen)));
  } catch {
    return fail('GLB JSON chunk is not valid JSON');
  }
  if (!isObject(parsed)) return fail('GLB JSON chunk must be a JSON object');
  const json = parsed;
  const asset = json.asset;
  if (!isObject(asset) || typeof asset.version !== 'string' || !asset.version.startsWith('2.'))
    problems.push('glTF asset version is not 2.x ("asset": {"version": "2.0"})');
  for (const key of ['extensionsRequired', 'extensionsUsed']) {
    const list = json[key];
    if (list !== undefined && (!Array.isArray(list) || list.some((e) => typeof e !== 'string'))) problems.push(`"${key}" must be an array of extension names`);
  }
  if (Array.isArray(json.extensionsRequired)) {
    for (const ext of json.extensionsRequired) {
      if (typeof ext === 'string' && !SUPPORTED_REQUIRED.has(ext) && problems.length < MAX_PROBLEMS)
        problems.push(`requires unsupported extension ${ext.slice(0, 100)}`);
    }
  }
  structureProblems(json, problems);
  if (problems.length) return { ok: false, problems, morphs: [], sizeBytes };
  const morphs = new Set<string>();
  for (const mesh of (json.meshes ?? []) as Json[]) {
    const names = isObject(mesh.extras) ? mesh.extras.targetNames : undefined;
    if (Array.isArray(names)) {
      const primitives = mesh.primitives as Json[];
      const count = (primitives[0].targets as unknown[] | undefined)?.length ?? 0;
      if (count !== names.length)
        problems.push(`mesh ${typeof mesh.name === 'string' ? mesh.name.slice(0, 100) : '?'}: ${names.length} target names for ${count} targets`);
      for (const n of names as string[]) morphs.add(n);
    }
  }
  const missingVisemes = VISEMES.filter((v) => !morphs.has(v));
  if (missingVisemes.length) problems.push(`missing viseme morphs: ${missingVisemes.join(', ')}`);
  const missingKey = KEY_ARKIT.filter((v) => !morphs.has(v));
  if (missingKey.length) problems.push(`missing ARKit morphs: ${missingKey.join(', ')}`);
  void ARKIT;
  return { ok: problems.length === 0, problems, morphs: [...morphs].sort(), sizeBytes };
}
