/**
 * A load that runs once and is shared: callers during the load wait for the same attempt, and a
 * success is kept. A failure is never kept: the next caller starts a fresh attempt. (A rejected
 * promise cached for good once turned one early failure into a permanent outage of speech.)
 */
export interface Once<T> {
  /** The loaded value, starting (or joining) an attempt when there is none yet. */
  get(): Promise<T>;
  /** The value if a load has succeeded, without starting one. */
  peek(): T | undefined;
}

export function once<T>(load: () => Promise<T>): Once<T> {
  let done = false;
  let value: T | undefined;
  let attempt: Promise<T> | undefined;
  return {
    get() {
      if (done) return Promise.resolve(value as T);
      attempt ??= (async () => load())().then(
        (result) => {
          value = result;
          done = true;
          return result;
        },
        (error: unknown) => {
          attempt = undefined;
          throw error;
        },
      );
      return attempt;
    },
    peek: () => value,
  };
}
