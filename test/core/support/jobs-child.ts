/** A process that starts a job and is killed (-9) while the job runs: see jobs.test.ts. */
import { openDatabase } from '../../../src/core/db/database.js';
import { Jobs } from '../../../src/core/jobs.js';

const quiet = { info() {}, warn() {}, error() {} };
const database = await openDatabase({ dataDir: process.argv[2] });
const jobs = await Jobs.start(database, quiet);
await jobs.work<{ tag: string }>('test.durable', { retryLimit: 2, retryDelay: 0 }, async (data) => {
  if (data.tag === 'running') {
    process.stdout.write('running\n');
    await new Promise(() => {}); // never finishes: the process is killed here
  }
});
await jobs.send('test.durable', { tag: 'queued' }, { startAfter: 3 });
await jobs.send('test.durable', { tag: 'running' });
