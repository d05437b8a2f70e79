/** Face GLBs for the browser tests: the generated faces when present, else fixture faces. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FACES_DIR } from '../../../src/player/routes.js';
import { fixtureFaceGlb } from './fixture-face.js';

/** A directory with face01.glb and face02.glb (at least). */
export async function facesDir(): Promise<{ dir: string; generated: boolean }> {
  if (['face01', 'face02'].every((id) => fs.existsSync(path.join(FACES_DIR, `${id}.glb`)))) return { dir: FACES_DIR, generated: true };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'presence-faces-'));
  fs.writeFileSync(path.join(dir, 'face01.glb'), await fixtureFaceGlb('#d9a98a'));
  fs.writeFileSync(path.join(dir, 'face02.glb'), await fixtureFaceGlb('#7a4a31'));
  return { dir, generated: false };
}
