/**
 * Builds what the player serves, once: the built-in face GLBs (only those missing or outdated) and
 * the player bundle and the console (each only when its sources changed). Runs after `npm install`, so the first
 * `npm start` and the browser tests find them ready; the server would otherwise build them itself.
 */
import { ensureFaces } from '../src/faces/index.js';
import { FACES_DIR } from '../src/player/routes.js';
import { ensurePlayerBuild } from '../src/player/build.js';
import { ensureConsoleBuild } from '../src/console/build.js';

const started = performance.now();
await ensureFaces(FACES_DIR);
await ensurePlayerBuild();
await ensureConsoleBuild();
console.log(`presence: faces, player bundle and console ready in ${((performance.now() - started) / 1000).toFixed(1)} s`);
