// Renders one uploaded face's still picture off the server's main thread (stills.ts,
// renderCustomStill): a fraction of a second of rasterising that would otherwise hold up live sessions.
import { parentPort, workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
try {
  const { renderStill } = await import('./still.ts');
  const still = await renderStill(new Uint8Array(workerData.glb));
  parentPort.postMessage({ still });
} catch (error) {
  parentPort.postMessage({ error: error instanceof Error ? error.message : String(error) });
}
