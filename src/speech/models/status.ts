/**
 * Where each fetched model stands, for /readyz's `models` field, and its progress in the log at most
 * every few seconds.
 */
export type ModelState =
  | { state: 'pending' }
  | { state: 'downloading'; bytes: number; total: number }
  | { state: 'ready' }
  | { state: 'failed'; reason: string }
  | { state: 'off'; reason: string };

interface Log {
  info(obj: object, msg: string): void;
}

export class ModelStatus {
  private readonly states = new Map<string, ModelState>();
  private readonly loggedAt = new Map<string, number>();

  constructor(
    private readonly log: Log,
    private readonly progressEveryMs = 5000,
  ) {}

  set(id: string, state: ModelState): void {
    this.states.set(id, state);
  }

  get(id: string): ModelState | undefined {
    return this.states.get(id);
  }

  /** Bytes on disk for a model being fetched; logged at most every progressEveryMs. */
  progress(id: string, title: string, bytes: number, total: number): void {
    this.states.set(id, { state: 'downloading', bytes, total });
    if (bytes === 0) return; // the start was said already
    const now = Date.now();
    const last = this.loggedAt.get(id);
    if (last !== undefined && now - last < this.progressEveryMs) return;
    this.loggedAt.set(id, now);
    this.log.info({ model: id, bytes, total }, `models: fetching the ${title}: ${mb(bytes)} of ${mb(total)} MB`);
  }

  snapshot(): Record<string, ModelState> {
    return Object.fromEntries(this.states);
  }
}

export function mb(bytes: number): string {
  return (bytes / 1e6).toFixed(1);
}
