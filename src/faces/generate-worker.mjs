// Generates the built-in faces off the main thread (see background.ts): building one face paints
// its skin texture and packs its morphs for seconds of CPU, which on the server's event loop would
// stall every live session and even the handling of SIGTERM.
import { parentPort, workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
const { ensureFaces } = await import('./index.ts');
await ensureFaces(workerData.outDir, workerData.only);
parentPort?.postMessage({ done: true });
