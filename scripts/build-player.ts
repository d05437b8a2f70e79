/**
 * Builds the player page's JavaScript (src/player/client → build/player/) and prints the sizes.
 * Usage: npm run build:player [-- --if-missing]
 */
import zlib from 'node:zlib';
import fs from 'node:fs';
import path from 'node:path';
import { ensurePlayerBuild } from '../src/player/build.js';

const force = !process.argv.includes('--if-missing');
const started = performance.now();
const build = await ensurePlayerBuild({ force });
for (const [name, { bytes }] of Object.entries(build.files)) {
  const gz = zlib.gzipSync(fs.readFileSync(path.join(build.dir, name)), { level: 9 }).length;
  console.log(`${name.padEnd(20)} ${(bytes / 1024).toFixed(1).padStart(8)} KB  ${(gz / 1024).toFixed(1).padStart(7)} KB gzipped`);
}
console.log(`player bundle ${build.version} in ${path.relative(process.cwd(), build.dir)} (${Math.round(performance.now() - started)} ms)`);
