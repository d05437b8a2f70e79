// Generates built-in faces off the main thread (see background.ts), one per message: building a
// face paints its skin texture and packs its morphs for seconds of CPU, which on the server's
// event loop would stall every live session and even the handling of SIGTERM. One face at a time,
// in this thread only, so the server keeps a core for its sessions.
import { parentPort, workerData } from 'node:worker_threads';
import { importSource } from '../core/import-source.mjs';

const { ensureFaces } = await importSource(import.meta.url, './index.ts');
parentPort?.on('message', async ({ id }) => {
  try {
    await ensureFaces(workerData.outDir, [id], { workers: 1 });
    parentPort?.postMessage({ id });
  } catch (error) {
    parentPort?.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
  }
});
