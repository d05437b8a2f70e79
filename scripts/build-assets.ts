/**
 * Builds what the player serves, once: the player bundle, the console and the server compiled to
 * JavaScript (bin/compile-server.js; each only when its sources changed) and the default face (only when missing or outdated). Runs after `npm install`,
 * so the first `npm start` finds them ready. The other built-in faces are built by the server at
 * its first start, in the background on one core, a face a page asks for first (faces/background.ts):
 * that keeps the install short. `--all` builds every face now (the test runner does, so no test
 * server builds faces).
 */
import { ensureFaces } from '../src/faces/index.js';
import { DEFAULT_FACE_ID } from '../src/faces/builtin.js';
import { FACES_DIR } from '../src/player/routes.js';
import { ensurePlayerBuild } from '../src/player/build.js';
import { ensureConsoleBuild } from '../src/console/build.js';
// @ts-expect-error plain JavaScript without declarations (bin/ runs before any loader)
import { compileServer } from '../bin/compile-server.js';

const all = process.argv.includes('--all');
const started = performance.now();
await ensureFaces(FACES_DIR, all ? undefined : [DEFAULT_FACE_ID]);
await ensurePlayerBuild();
await ensureConsoleBuild();
// The server's JavaScript (build/server/), so the first `npm start` does not compile it; a start
// compiles again whatever changed since.
await compileServer();
const faces = all ? 'every face' : `the default face (the others at first start, or now with \`npm run build:assets -- --all\`)`;
console.log(`presence: ${faces}, player bundle, console and the server's JavaScript ready in ${((performance.now() - started) / 1000).toFixed(1)} s`);
