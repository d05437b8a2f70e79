/**
 * A process that stops its job queue while a worker's poll waits for the embedded database's one
 * connection, then closes the database: it must then exit on its own (see jobs.test.ts).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { openDatabase } from '../../../src/core/db/database.js';
import { Jobs } from '../../../src/core/jobs.js';

const quiet = { info() {}, warn() {}, error() {} };
const database = await openDatabase({ dataDir: process.argv[2] });
const jobs = await Jobs.start(database, quiet);
await jobs.work('test.idle', {}, async () => {});
let release!: () => void;
const held = database.db.connection().execute(() => new Promise<void>((resolve) => (release = resolve)));
await sleep(1_500); // the worker's next poll (every 0.5 s) now waits for the connection
await jobs.stop();
// The embedded database closes under the waiting poll (as at the end of a shutdown).
const closing = database.pglite!.close();
await sleep(100);
release();
await held;
await closing;
process.stdout.write('closed\n');
