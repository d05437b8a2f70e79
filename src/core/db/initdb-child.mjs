/**
 * Creates a new embedded data folder (PostgreSQL's initdb) in a short-lived child process:
 * `node initdb-child.mjs <pgdata> <start params as JSON>`. PGlite keeps the initdb step's
 * WebAssembly memory (some 450 MB) alive as long as the instance that ran it, and even a worker
 * thread's exit leaves much of it in the process's allocator; a child process returns all of it,
 * and the server then opens the ready folder with only what a running database needs.
 */
import { PGlite } from '@electric-sql/pglite';

const [pgdata, startParams] = process.argv.slice(2);
const pglite = new PGlite(pgdata, { startParams: JSON.parse(startParams) });
await pglite.waitReady;
await pglite.close();
