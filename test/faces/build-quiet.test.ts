/**
 * Issue 15, item 7: building a face writes no log lines (gltf-transform's quantize warned
 * "Skipping TEXCOORD_0; out of [0,1] range" for every primitive with tiled UVs, dozens of lines on
 * every npm install), and the GLB is still written.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeGlb } from '../../src/faces/glb.js';

test('a face whose UVs leave [0,1] is written without a line on the console', async () => {
  const lines: string[] = [];
  const saved = { warn: console.warn, info: console.info, log: console.log, debug: console.debug };
  for (const name of ['warn', 'info', 'log', 'debug'] as const) console[name] = (...args: unknown[]) => void lines.push(args.join(' '));
  let glb: Uint8Array;
  try {
    glb = await writeGlb(
      [
        {
          name: 'Tile',
          primitives: [
            {
              positions: new Float32Array([0, 0, 0, 1, 0, 0, 0, 1, 0]),
              normals: new Float32Array([0, 0, 1, 0, 0, 1, 0, 0, 1]),
              uvs: new Float32Array([0, 0, 3, 0, 0, 3]), // tiled: outside [0,1]
              indices: new Uint32Array([0, 1, 2]),
              material: 'Skin',
            },
          ],
        },
      ],
      [{ name: 'Skin', color: [1, 0.8, 0.7, 1], roughness: 0.5 }],
      {},
    );
  } finally {
    Object.assign(console, saved);
  }
  assert.deepEqual(lines, []);
  assert.equal(Buffer.from(glb!.subarray(0, 4)).toString('ascii'), 'glTF');
});
