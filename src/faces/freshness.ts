/**
 * Whether the built-in faces on disk are current: stamps written beside them against a hash of
 * the generator's source and each face's parameters. Only fs and crypto: the server checks this on
 * its own thread at start, and loads the generator (glTF-Transform, three, sharp: some 60 MB) in a
 * worker only when a face is missing or outdated.
 */
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Face } from './builtin.js';

export const STAMP_FILE = '.faces-stamp.json';

/** The still picture beside each face's GLB (`face01.still.png`) and where it sits (`face01.still.json`). */
export const stillFiles = (outDir: string, id: string) => ({ png: path.join(outDir, `${id}.still.png`), json: path.join(outDir, `${id}.still.json`) });

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
    // (still.ts and stills.ts are not the face: a change to the still re-renders stills, never faces)
    ...(await fs.readdir(dir)).filter((f) => /\.(ts|js)$/.test(f) && f !== 'still.ts' && f !== 'stills.ts'),
    ...(await fs.readdir(path.join(dir, 'ict'))).filter((f) => /\.(ts|js|bin)$/.test(f)).map((f) => `ict/${f}`),
  ].sort();
  const h = crypto.createHash('sha256');
  for (const f of files) h.update(f).update(await fs.readFile(path.join(dir, f)));
  sourceHash = h.digest('hex');
  return sourceHash;
}

let stillSource: string | null = null;
/** A face's still is outdated when its face is, or when the renderer changed. */
export async function stillHash(faceStamp: string): Promise<string> {
  stillSource ??= crypto
    .createHash('sha256')
    .update(await fs.readFile(fileURLToPath(new URL('./still.ts', import.meta.url))))
    .digest('hex');
  return crypto.createHash('sha256').update(stillSource).update(faceStamp).digest('hex').slice(0, 16);
}

export async function faceHash(face: Face): Promise<string> {
  return crypto
    .createHash('sha256')
    .update(await generatorHash())
    .update(JSON.stringify([face.gender, face.look]))
    .digest('hex')
    .slice(0, 16);
}

export async function readStamps(outDir: string): Promise<Record<string, string>> {
  try {
    return JSON.parse(await fs.readFile(path.join(outDir, STAMP_FILE), 'utf8')) as Record<string, string>;
  } catch {
    return {};
  }
}

/** Every given face has its GLB and its still, each stamped as current. */
export async function facesAreCurrent(outDir: string, faces: Face[]): Promise<boolean> {
  const stamps = await readStamps(outDir);
  for (const face of faces) {
    const hash = await faceHash(face);
    if (stamps[face.avatar_id] !== hash || stamps[`${face.avatar_id}.still`] !== (await stillHash(hash))) return false;
    const still = stillFiles(outDir, face.avatar_id);
    const present = await Promise.all(
      [path.join(outDir, `${face.avatar_id}.glb`), still.png].map((f) =>
        fs.stat(f).then(
          () => true,
          () => false,
        ),
      ),
    );
    if (present.includes(false)) return false;
  }
  return true;
}
