/**
 * Software GL reads only the colour textures of a face's glTF (src/player/client/scene.ts,
 * onlyColourTextures): the Lambert materials drawn there use no other, so the rest are taken out of
 * the glTF's materials before GLTFLoader reads them, and are never decoded.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { onlyColourTextures } from '../../src/player/client/scene.js';
import { facesDir } from './support/faces.js';

type Json = { materials?: Record<string, unknown>[] };

/** Every texture reference in a glTF material, as `path.to.key`. */
function textureSlots(material: Record<string, unknown>, prefix = ''): string[] {
  return Object.entries(material).flatMap(([key, value]) =>
    key.endsWith('Texture')
      ? [`${prefix}${key}`]
      : value && typeof value === 'object'
        ? textureSlots(value as Record<string, unknown>, `${prefix}${key}.`)
        : [],
  );
}

function glbJson(file: string): Json {
  const bytes = fs.readFileSync(file);
  return JSON.parse(bytes.subarray(20, 20 + bytes.readUInt32LE(12)).toString('utf8')) as Json;
}

test('every texture but the colour and emissive maps is taken out, and nothing else', () => {
  const json: Json = {
    materials: [
      {
        name: 'Skin',
        pbrMetallicRoughness: { baseColorTexture: { index: 0 }, metallicRoughnessTexture: { index: 2 }, metallicFactor: 0 },
        normalTexture: { index: 1, scale: 0.5 },
        occlusionTexture: { index: 3 },
        emissiveTexture: { index: 4 },
        extensions: {
          KHR_materials_sheen: { sheenColorFactor: [0.1, 0, 0], sheenColorTexture: { index: 5 } },
          KHR_materials_clearcoat: { clearcoatFactor: 1, clearcoatNormalTexture: { index: 6 } },
        },
      },
      { name: 'Plain', pbrMetallicRoughness: { baseColorFactor: [1, 0, 0, 1] } },
    ],
  };
  onlyColourTextures({ json });
  assert.deepEqual(
    json.materials?.map((m) => textureSlots(m)),
    [['pbrMetallicRoughness.baseColorTexture', 'emissiveTexture'], []],
  );
  const skin = json.materials?.[0] as { normalTexture?: unknown; extensions: Record<string, Record<string, unknown>> };
  assert.equal(skin.normalTexture, undefined);
  // The layers' factors stay (the material is still read as what it is, then drawn as Lambert).
  assert.deepEqual(skin.extensions.KHR_materials_sheen, { sheenColorFactor: [0.1, 0, 0] });
  assert.deepEqual(skin.extensions.KHR_materials_clearcoat, { clearcoatFactor: 1 });
});

test("a built-in face's skin loses its normal and roughness maps and keeps its colour map", async (t) => {
  const faces = await facesDir();
  if (!faces.generated) return t.skip('the faces are not built (npm install builds them)');
  const json = glbJson(path.join(faces.dir, 'face01.glb'));
  const before = json.materials?.find((m) => m.name === 'Skin');
  assert.ok(before && textureSlots(before).includes('normalTexture'), 'face01 has a skin normal map to leave out');
  onlyColourTextures({ json });
  const skin = json.materials?.find((m) => m.name === 'Skin');
  assert.deepEqual(textureSlots(skin ?? {}), ['pbrMetallicRoughness.baseColorTexture']);
  for (const m of json.materials ?? []) for (const slot of textureSlots(m)) assert.match(slot, /baseColorTexture|emissiveTexture/, `${m.name}: ${slot}`);
});
