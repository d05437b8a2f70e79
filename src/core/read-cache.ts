/**
 * A small read-through cache for hot records (agents, accounts) on the embedded database, where
 * this process is the only writer so invalidating on write keeps it exact. On PostgreSQL, where
 * other nodes write too, it is disabled and every read goes to the database.
 */
export class ReadCache<K, V> {
  private readonly entries = new Map<K, V>();

  constructor(readonly enabled: boolean, private readonly maxEntries = 10_000) {}

  get(key: K): V | undefined {
    return this.enabled ? this.entries.get(key) : undefined;
  }

  set(key: K, value: V): V {
    if (!this.enabled) return value;
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value as K);
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
