/**
 * At most `limit` jobs at once, the rest wait in order: a node with hundreds of sessions must not
 * start hundreds of decoders on two cores. A waiting job whose signal aborts leaves the line.
 */
export class Gate {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly limit: number) {}

  async run<T>(job: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (this.running >= this.limit) {
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
}
