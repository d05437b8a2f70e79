/**
 * Public entry of the face generator: build all catalogue faces, or only those missing/outdated
 * (what the server calls at start-up), and validate uploaded faces.
 */
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUILTIN_FACES, type Face } from '../../catalog/faces.js';
import { buildFace } from './build.js';

export { validateFaceGlb, MAX_FACE_BYTES, type FaceValidation } from './validate.js';
export { buildFace } from './build.js';
export { MORPH_NAMES, VISEMES, ARKIT } from './names.js';

const STAMP_FILE = '.faces-stamp.json';

/**
 * Fingerprint of the generator source plus one face's parameters: a file is outdated when either
 * changes, so editing the generator or the catalogue regenerates exactly what it affects.
 */
let sourceHash: string | null = null;
async function generatorHash(): Promise<string> {
  if (sourceHash) return sourceHash;
  const dir = path.dirname(fileURLToPath(import.meta.url));
  // the generator's code here and in ict/, and the FaceKit data it reads (ict/*.bin)
  const files = [
    ...(await fs.readdir(dir)).filter((f) => /\.(ts|js)$/.test(f)),
    ...(await fs.readdir(path.join(dir, 'ict'))).filter((f) => /\.(ts|js|bin)$/.test(f)).map((f) => `ict/${f}`),
  ].sort();
  // and the level of detail the GLBs carry (client/lod.ts, shared with the page)
  files.push('../client/lod.ts');
  const h = crypto.createHash('sha256');
  for (const f of files) h.update(f).update(await fs.readFile(path.join(dir, f)));
  sourceHash = h.digest('hex');
  return sourceHash;
}

async function faceHash(face: Face): Promise<string> {
  return crypto.createHash('sha256').update(await generatorHash()).update(JSON.stringify([face.gender, face.look])).digest('hex').slice(0, 16);
}

export interface BuildResult {
  id: string;
  bytes: number;
  ms: number;
  built: boolean;
}

async function readStamps(outDir: string): Promise<Record<string, string>> {
  try {
    return JSON.parse(await fs.readFile(path.join(outDir, STAMP_FILE), 'utf8')) as Record<string, string>;
  } catch {
    return {};
  }
}

async function generate(outDir: string, faces: Face[], force: boolean): Promise<BuildResult[]> {
  await fs.mkdir(outDir, { recursive: true });
  const stamps = await readStamps(outDir);
  const results: BuildResult[] = [];
  for (const face of faces) {
    const file = path.join(outDir, `${face.avatar_id}.glb`);
    const hash = await faceHash(face);
    const exists = await fs.stat(file).then(() => true, () => false);
    if (!force && exists && stamps[face.avatar_id] === hash) {
      results.push({ id: face.avatar_id, bytes: (await fs.stat(file)).size, ms: 0, built: false });
      continue;
    }
    const t0 = performance.now();
    const { glb } = await buildFace(face);
    // write-then-rename so a server reading concurrently never sees a half-written file
    await writeAtomically(file, glb);
    stamps[face.avatar_id] = hash;
    // Stamped face by face, and atomically: a process killed mid-way keeps what it built, and never
    // leaves an empty stamp that would make every later start rebuild every face.
    await writeAtomically(path.join(outDir, STAMP_FILE), JSON.stringify(stamps, null, 2));
    results.push({ id: face.avatar_id, bytes: glb.byteLength, ms: performance.now() - t0, built: true });
  }
  return results;
}

/** Write-then-rename, so a reader (another server, a crash) never sees a half-written file. */
async function writeAtomically(file: string, data: Uint8Array | string): Promise<void> {
  const tmp = `${file}.${process.pid}.${crypto.randomBytes(3).toString('hex')}.tmp`;
  try {
    await fs.writeFile(tmp, data);
    await fs.rename(tmp, file);
  } finally {
    await fs.rm(tmp, { force: true });
  }
}

/** Generates only the built-in faces whose GLB is missing or outdated. */
export async function ensureFaces(outDir: string, only?: string[]): Promise<void> {
  await generate(outDir, only ? BUILTIN_FACES.filter((f) => only.includes(f.avatar_id)) : BUILTIN_FACES, false);
}

/** Regenerates every built-in face (or the given ones). */
export async function buildAllFaces(outDir: string, faces: Face[] = BUILTIN_FACES): Promise<BuildResult[]> {
  return generate(outDir, faces, true);
}
