/**
 * A small read-through cache for hot records (agents, accounts) on the embedded database, where
 * this process is the only writer so invalidating on write keeps it exact. On PostgreSQL, where
 * other nodes write too, it is disabled and every read goes to the database.
 */
import { LRUCache } from 'lru-cache';

export class ReadCache<K extends {}, V extends {}> {
  private readonly entries: LRUCache<K, V>;

  constructor(
    readonly enabled: boolean,
    maxEntries = 10_000,
  ) {
    this.entries = new LRUCache({ max: maxEntries });
  }

  get(key: K): V | undefined {
    return this.enabled ? this.entries.get(key) : undefined;
  }

  set(key: K, value: V): V {
    if (!this.enabled) return value;
    this.entries.set(key, value);
    return value;
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }
}
