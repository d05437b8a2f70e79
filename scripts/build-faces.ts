/**
 * (Re)generates every built-in face GLB into build/faces (or the folder given as the first argument).
 * Usage: [FACES=face01,face03] node --import tsx scripts/build-faces.ts [outDir]
 */
import { BUILTIN_FACES } from '../src/faces/builtin.js';
import { buildAllFaces } from '../src/faces/index.js';

const outDir = process.argv[2] ?? 'build/faces';
const only = process.env.FACES?.split(',');
const started = performance.now();
const results = await buildAllFaces(outDir, only ? BUILTIN_FACES.filter((f) => only.includes(f.avatar_id)) : BUILTIN_FACES);
for (const r of results) console.log(`${r.id}: ${(r.bytes / 1024).toFixed(0)} KiB, ${r.ms.toFixed(0)} ms`);
console.log(`${results.length} faces in ${((performance.now() - started) / 1000).toFixed(1)} s -> ${outDir}`);
