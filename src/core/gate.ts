/**
 * The one async limiter: at most `limit` jobs at once, the rest wait in order, at most
 * `maxWaiting` of them (past that `run` throws GateFullError rather than queue without end).
 * A node with hundreds of sessions must not start hundreds of decoders on two cores; a crawler must
 * not ask one site more than a few things at once. A waiting job whose signal aborts leaves the line.
 */
export class GateFullError extends Error {
  constructor(readonly waiting: number) {
    super(`${waiting} jobs are already waiting`);
  }
}

export class Gate {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    private readonly limit: number,
    private readonly maxWaiting = Number.POSITIVE_INFINITY,
  ) {}

  async run<T>(job: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (this.running >= this.limit) {
      if (this.waiting.length >= this.maxWaiting) throw new GateFullError(this.waiting.length);
      await new Promise<void>((resolve, reject) => {
        const start = () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        };
        const onAbort = () => {
          const i = this.waiting.indexOf(start);
          if (i >= 0) this.waiting.splice(i, 1);
          reject(signal!.reason ?? new Error('aborted'));
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        this.waiting.push(start);
      });
      // The finishing job handed its slot over: `running` already counts this one.
    } else {
      if (signal?.aborted) throw signal.reason ?? new Error('aborted');
      this.running++;
    }
    try {
      return await job();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }

  /**
   * Takes a slot only if one is free now, for work that holds it for a while (a live decoder
   * listening to a visitor): answers its release, or undefined when every slot is taken.
   */
  tryEnter(): (() => void) | undefined {
    if (this.running >= this.limit) return undefined;
    this.running++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    };
  }

  get queued(): number {
    return this.waiting.length;
  }

  /** Nothing running and nobody waiting: a keyed owner may forget this gate. */
  get idle(): boolean {
    return this.running === 0 && this.waiting.length === 0;
  }
}
