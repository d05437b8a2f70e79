// A shard process's entry (forked by pool.ts): the server's modules run as its parent runs them,
// compiled (bin/presence.js) or through tsx's loader.
import { importSource } from '../../core/import-source.mjs';

await importSource(import.meta.url, './shard.ts');
