/**
 * Brings the built-in faces up to date in a worker thread, once per directory and process: the
 * server does it at start (faces missing or outdated, e.g. build/ removed), and the player routes
 * wait for it before serving a face. Off the main thread, so live sessions and signals are never
 * held up by it (one face is seconds of CPU).
 */
import { Worker } from 'node:worker_threads';
import { BUILTIN_FACES } from './builtin.js';
import { facesAreCurrent } from './freshness.js';

const running = new Map<string, Promise<void>>();

/** `only` limits it to some faces (tests); by default every built-in face. */
export function ensureFacesInBackground(outDir: string, only?: string[]): Promise<void> {
  let run = running.get(outDir);
  if (!run) {
    run = (async () => {
      // Checked here first (a few milliseconds of hashing): a worker loads the whole generator.
      if (await facesAreCurrent(outDir, only ? BUILTIN_FACES.filter((f) => only.includes(f.avatar_id)) : BUILTIN_FACES)) return;
      await generateInWorker(outDir, only);
    })();
    // A failed run is tried again by the next caller.
    run.catch(() => running.delete(outDir));
    running.set(outDir, run);
  }
  return run;
}

function generateInWorker(outDir: string, only?: string[]): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const worker = new Worker(new URL('./generate-worker.mjs', import.meta.url), { workerData: { outDir, only } });
    let done = false;
    worker.once('message', () => (done = true));
    worker.once('error', reject);
    worker.once('exit', (code) => (done && code === 0 ? resolve() : reject(new Error(`face generation stopped (exit ${code})`))));
  });
}
