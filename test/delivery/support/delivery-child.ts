/**
 * A server process that enqueues one delivery, sees its first attempt fail and its retry
 * scheduled, says so, and is then killed (-9) by durability.test.ts while it waits.
 * Arguments: <dataDir or postgres URL> <receiver URL>.
 */
import { openDatabase } from '../../../src/core/db/database.js';
import { Jobs } from '../../../src/core/jobs.js';
import { DeliveryEngine } from '../../../src/delivery/engine.js';

const [where, receiverUrl] = process.argv.slice(2) as [string, string];
const quiet = { info() {}, warn() {}, error() {} };
const database = await openDatabase(where.startsWith('postgres') ? { databaseUrl: where } : { dataDir: where });
const jobs = await Jobs.start(database, quiet);
const deliveries = new DeliveryEngine(database.db, jobs, quiet, { retryDelays: [3, 3, 3, 3], timeoutSeconds: 8, allowPrivate: true });
await deliveries.start();
const account = await database.db.insertInto('accounts').values({ name: 'acme', plan: 'paid', balance_cents: 0 }).returning('id').executeTakeFirstOrThrow();
const { deliveryId } = await deliveries.enqueue({
  accountId: account.id,
  owner: { kind: 'test', id: 'rule-1' },
  url: receiverUrl,
  method: 'POST',
  payload: '{"email":"ann@example.com"}',
  secret: 'whsec_durable',
});
for (;;) {
  const row = await database.db.selectFrom('deliveries').select('status').where('id', '=', deliveryId).executeTakeFirstOrThrow();
  if (row.status === 'retrying') break;
  await new Promise((r) => setTimeout(r, 50));
}
process.stdout.write(`scheduled ${deliveryId}\n`);
await new Promise(() => {}); // killed here, its retry due in 3 s
