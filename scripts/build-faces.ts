/**
 * (Re)generates every built-in face GLB into build/faces (or the folder given as the first argument).
 * Usage: node --import tsx scripts/build-faces.ts [outDir]
 */
import { buildAllFaces } from '../src/player/faces/index.js';

const outDir = process.argv[2] ?? 'build/faces';
const started = performance.now();
const results = await buildAllFaces(outDir);
for (const r of results) console.log(`${r.id}: ${(r.bytes / 1024).toFixed(0)} KiB, ${r.ms.toFixed(0)} ms`);
console.log(`${results.length} faces in ${((performance.now() - started) / 1000).toFixed(1)} s -> ${outDir}`);
