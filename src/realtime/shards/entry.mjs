// A shard process's entry (forked by pool.ts): the TypeScript sources run through tsx's loader,
// as bin/presence.js runs the main process.
import { register } from 'tsx/esm/api';

register();
await import('./shard.ts');
