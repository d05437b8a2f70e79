/** A tiny typed event emitter that runs in browsers and Node alike (no node:events). */
export type Listener<T> = (value: T) => void;

/** Typed events: on(type, listener) returns the function that removes the listener. */
export class Emitter<Events extends Record<string, unknown>> {
  private readonly listeners = new Map<keyof Events, Set<Listener<any>>>();

  /** Calls `listener` for every `type`; returns a function that removes it. */
  on<K extends keyof Events>(type: K, listener: Listener<Events[K]>): () => void {
    let set = this.listeners.get(type);
    if (!set) this.listeners.set(type, (set = new Set()));
    set.add(listener);
    return () => this.off(type, listener);
  }

  /** Calls `listener` for the next `type` only. */
  once<K extends keyof Events>(type: K, listener: Listener<Events[K]>): () => void {
    const off = this.on(type, (value) => {
      off();
      listener(value);
    });
    return off;
  }

  off<K extends keyof Events>(type: K, listener: Listener<Events[K]>): void {
    this.listeners.get(type)?.delete(listener);
  }

  protected emit<K extends keyof Events>(type: K, value: Events[K]): void {
    for (const listener of [...(this.listeners.get(type) ?? [])]) {
      try {
        listener(value);
      } catch (error) {
        // A listener's bug must not break the socket's bookkeeping; report it asynchronously.
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }
}
