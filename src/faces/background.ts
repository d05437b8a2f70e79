/**
 * Brings the built-in faces up to date off the main thread, one face at a time, in one worker per
 * directory and process. `npm install` builds only the default face; the server builds the rest at
 * its first start, here, with one core (the other stays with live sessions), and the player
 * routes ask for the face a page needs, which then goes first. What is current is checked on this
 * thread (fs and crypto, a few milliseconds): the worker, which loads the whole generator, starts
 * only when a face is missing or outdated, and ends when the queue is empty.
 */
import { Worker } from 'node:worker_threads';
import { BUILTIN_FACES } from './builtin.js';
import { facesAreCurrent } from './freshness.js';

interface Waiting {
  promise: Promise<void>;
  resolve: () => void;
  reject: (error: Error) => void;
}

class FaceBuilder {
  /** Face ids to build, the next first. Bounded by the built-in list (each id at most once). */
  private readonly queue: string[] = [];
  private readonly waiting = new Map<string, Waiting>();
  private worker: Worker | undefined;
  private building: string | undefined;

  constructor(private readonly outDir: string) {}

  /** Resolves once each of `ids` is current; `first` puts them ahead of faces already waiting. */
  async ensure(ids: string[], first: boolean): Promise<void> {
    const todo: string[] = [];
    for (const id of ids) {
      const face = BUILTIN_FACES.find((f) => f.avatar_id === id);
      if (!face) continue;
      if (!this.waiting.has(id) && (await facesAreCurrent(this.outDir, [face]))) continue;
      todo.push(id);
    }
    const promises = todo.map((id) => this.enqueue(id, first));
    this.next();
    await Promise.all(promises);
  }

  private enqueue(id: string, first: boolean): Promise<void> {
    let entry = this.waiting.get(id);
    if (!entry) {
      let resolve!: () => void;
      let reject!: (error: Error) => void;
      const promise = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
      promise.catch(() => undefined);
      entry = { promise, resolve, reject };
      this.waiting.set(id, entry);
      this.queue.push(id);
    }
    if (first && this.building !== id) {
      const at = this.queue.indexOf(id);
      if (at > 0) this.queue.unshift(...this.queue.splice(at, 1));
    }
    return entry.promise;
  }

  private next(): void {
    if (this.building) return;
    const id = this.queue.shift();
    if (!id) {
      // Nothing left: the worker (and the generator it loaded) goes.
      void this.worker?.terminate();
      this.worker = undefined;
      return;
    }
    this.building = id;
    this.startWorker().postMessage({ id });
  }

  private startWorker(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(new URL('./generate-worker.mjs', import.meta.url), { workerData: { outDir: this.outDir } });
    worker.on('message', (message: { id: string; error?: string }) => this.finished(message.id, message.error ? new Error(message.error) : undefined));
    const lost = (error: Error) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      if (this.building) this.finished(this.building, error);
    };
    worker.once('error', lost);
    worker.once('exit', (code) => lost(new Error(`face generation stopped (exit ${code})`)));
    this.worker = worker;
    return worker;
  }

  private finished(id: string, error?: Error): void {
    if (this.building !== id) return;
    this.building = undefined;
    const entry = this.waiting.get(id);
    this.waiting.delete(id);
    if (error) entry?.reject(error);
    else entry?.resolve();
    this.next();
  }
}

const builders = new Map<string, FaceBuilder>();

/**
 * Makes the given built-in faces current (by default all of them), in the background. A caller
 * that names faces (`only`) is waiting for them: they go before the rest (`first`, by default
 * when named). A failed face is tried again by the next caller.
 */
export function ensureFacesInBackground(outDir: string, only?: string[], options: { first?: boolean } = {}): Promise<void> {
  let builder = builders.get(outDir);
  if (!builder) builders.set(outDir, (builder = new FaceBuilder(outDir)));
  return builder.ensure(only ?? BUILTIN_FACES.map((f) => f.avatar_id), options.first ?? only !== undefined);
}
