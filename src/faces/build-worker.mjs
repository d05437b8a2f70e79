// One of the face-building workers (index.ts, buildInParallel): for each face it is sent it builds
// the GLB (or reads the current one) and renders its still picture, and hands both back
// (transferred, not copied). The main thread writes the files and stamps, so a worker never races
// another on the stamp file.
import fs from 'node:fs/promises';
import { parentPort } from 'node:worker_threads';
import { importSource } from '../core/import-source.mjs';

const { buildFace } = await importSource(import.meta.url, './build.ts');
const { renderStill } = await importSource(import.meta.url, './still.ts');
const own = (bytes) => (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : bytes.slice());
parentPort.on('message', async ({ face, build, file }) => {
  try {
    const started = performance.now();
    const glb = own(build ? (await buildFace(face)).glb : new Uint8Array(await fs.readFile(file)));
    const ms = performance.now() - started;
    const still = await renderStill(glb, { skin: face.look?.skin });
    const png = own(still.png);
    const transfer = build ? [glb.buffer, png.buffer] : [png.buffer];
    parentPort.postMessage({ id: face.avatar_id, glb: build ? glb : undefined, ms, still: { ...still, png } }, transfer);
  } catch (error) {
    parentPort.postMessage({ id: face.avatar_id, error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  }
});
parentPort.postMessage({ ready: true });
