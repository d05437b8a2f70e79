/**
 * Fetches the pinned models into DATA_DIR/models in the background, one after another, and hands
 * each verified folder to whoever switches the engine to it. Never awaited by start or /readyz.
 *
 * A model is in place when its folder holds `.verified.json` naming exactly the pinned files and
 * each file has its pinned size (the sums were checked when the file arrived), so a node that has
 * the models uses them at once, offline, without hashing 160 MB again.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fetchFile, FetchError, sizeOf } from './fetcher.js';
import { totalBytes, type ModelSpec } from './manifest.js';
import { mb, ModelStatus } from './status.js';

interface Log {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface ModelDownloadsOptions {
  /** DATA_DIR/models */
  dir: string;
  specs: ModelSpec[];
  log: Log;
  connectTimeoutMs?: number;
  stallTimeoutMs?: number;
  progressEveryMs?: number;
}

const MARKER = '.verified.json';

export class ModelDownloads {
  readonly status: ModelStatus;
  private readonly controller = new AbortController();
  private running: Promise<void> | undefined;

  constructor(private readonly options: ModelDownloadsOptions) {
    this.status = new ModelStatus(options.log, options.progressEveryMs);
  }

  spec(id: ModelSpec['id']): ModelSpec | undefined {
    return this.options.specs.find((s) => s.id === id);
  }

  folderOf(spec: ModelSpec): string {
    return path.join(this.options.dir, spec.folder);
  }

  /** The model's folder when all its pinned files are in place. */
  installed(id: ModelSpec['id']): string | undefined {
    const spec = this.spec(id);
    if (!spec) return undefined;
    const folder = this.folderOf(spec);
    try {
      const marker = JSON.parse(fs.readFileSync(path.join(folder, MARKER), 'utf8')) as unknown;
      if (JSON.stringify(marker) !== JSON.stringify(spec.files)) return undefined;
    } catch {
      return undefined;
    }
    return spec.files.every((f) => sizeOf(path.join(folder, f.path)) === f.bytes) ? folder : undefined;
  }

  /**
   * Fetches the models in `wanted` that are not in place (the others are `off` with their reason)
   * and calls `use` with each verified folder. Returns at once; the work runs in the background.
   */
  start(wanted: Partial<Record<ModelSpec['id'], string | true>>, use: (spec: ModelSpec, folder: string) => Promise<void>): void {
    const queue: ModelSpec[] = [];
    for (const spec of this.options.specs) {
      const want = wanted[spec.id];
      if (want !== true) {
        this.status.set(spec.id, { state: 'off', reason: want ?? 'not wanted' });
        continue;
      }
      this.status.set(spec.id, { state: 'pending' });
      queue.push(spec);
    }
    this.running = this.run(queue, use);
  }

  /** Resolves when the background work has ended (tests; shutdown). */
  async settled(): Promise<void> {
    await this.running;
  }

  async stop(): Promise<void> {
    this.controller.abort();
    await this.running;
  }

  private async run(queue: ModelSpec[], use: (spec: ModelSpec, folder: string) => Promise<void>): Promise<void> {
    let unreachable: string | undefined;
    for (const spec of queue) {
      if (this.controller.signal.aborted) return;
      if (unreachable) {
        // Said once already: the host is out of reach, the next model would only wait for it too.
        this.status.set(spec.id, { state: 'failed', reason: unreachable });
        continue;
      }
      const folder =
        this.installed(spec.id) ??
        (await this.fetch(spec).catch((error: Error) => {
          if (this.controller.signal.aborted) return undefined;
          const reason = error.message;
          this.status.set(spec.id, { state: 'failed', reason });
          if (error instanceof FetchError && error.kind === 'unreachable') {
            unreachable = reason;
            this.options.log.warn(
              { model: spec.id, err: reason },
              `models: ${reason}; the service keeps its offline engines (flite voice; pocketsphinx or typing), and tries again at the next start (MODELS_DOWNLOAD=0 stops trying)`,
            );
          } else {
            this.options.log.error(
              { model: spec.id, err: reason },
              `models: the ${spec.title} could not be fetched: ${reason}; the service keeps its offline engines and tries again at the next start`,
            );
          }
          return undefined;
        }));
      if (!folder) continue;
      try {
        await use(spec, folder);
        this.status.set(spec.id, { state: 'ready' });
      } catch (error) {
        const reason = `verified, but could not be loaded: ${(error as Error).message}`;
        this.status.set(spec.id, { state: 'failed', reason });
        this.options.log.error({ model: spec.id, err: (error as Error).message }, `models: the ${spec.title} ${reason}`);
      }
    }
  }

  private async fetch(spec: ModelSpec): Promise<string> {
    const folder = this.folderOf(spec);
    const total = totalBytes(spec);
    const began = Date.now();
    fs.rmSync(path.join(folder, MARKER), { force: true });
    this.options.log.info({ model: spec.id, total }, `models: fetching the ${spec.title} (${mb(total)} MB) into ${folder}, in the background`);
    let done = 0;
    for (const file of spec.files) {
      const dest = path.join(folder, file.path);
      if (sizeOf(dest) !== file.bytes) {
        await fetchFile(`${spec.source}/${file.path}`, dest, file, {
          connectTimeoutMs: this.options.connectTimeoutMs ?? 5000,
          stallTimeoutMs: this.options.stallTimeoutMs ?? 30_000,
          signal: this.controller.signal,
          onBytes: (bytes) => this.status.progress(spec.id, spec.title, done + bytes, total),
        });
      }
      done += file.bytes;
    }
    fs.writeFileSync(path.join(folder, MARKER), JSON.stringify(spec.files));
    this.options.log.info({ model: spec.id, ms: Date.now() - began }, `models: the ${spec.title} is verified (${mb(total)} MB, pinned SHA-256)`);
    return folder;
  }
}
