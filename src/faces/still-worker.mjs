// Renders one uploaded face's still picture off the server's main thread (stills.ts,
// renderCustomStill): a fraction of a second of rasterising that would otherwise hold up live sessions.
import { parentPort, workerData } from 'node:worker_threads';
import { importSource } from '../core/import-source.mjs';

try {
  const { renderStill } = await importSource(import.meta.url, './still.ts');
  const still = await renderStill(new Uint8Array(workerData.glb));
  parentPort.postMessage({ still });
} catch (error) {
  parentPort.postMessage({ error: error instanceof Error ? error.message : String(error) });
}
