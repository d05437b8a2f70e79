/**
 * `presence serve`: opens the database (taking DATA_DIR's lock when embedded), runs migrations,
 * creates the first-start account and key, listens, and shuts down gracefully on SIGTERM/SIGINT.
 */
import fs from 'node:fs';
import { loadConfig, type Config } from './core/config.js';
import { openDatabase } from './core/db/database.js';
import { randomToken } from './core/secrets.js';
import { buildApp } from './app.js';

type Built = Awaited<ReturnType<typeof buildApp>>;
import { bootstrap } from './accounts/accounts.js';
import { adminFile } from './accounts/admin.js';
import { ensureFacesInBackground } from './faces/background.js';
import { facesAreCurrent } from './faces/freshness.js';
import { BUILTIN_FACES } from './faces/builtin.js';
import { FACES_DIR } from './player/routes.js';
import { defaultNodeUrl } from './sessions/nodes.js';

export async function serve(config: Config = loadConfig()): Promise<void> {
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  const adminToken = randomToken('', 32);
  const { app, context } = await buildApp({ config, database, adminToken });

  // Signals are handled from here on, before the port answers: a SIGTERM sent the moment /healthz
  // answers (an orchestrator, a test, an impatient operator) still shuts down gracefully and exits 0,
  // where it used to meet Node's default and kill the process while it registered its node. A
  // signal during start-up waits for start-up to finish, then shuts down.
  let startedUp!: () => void;
  const startUp = new Promise<void>((resolve) => (startedUp = resolve));
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down: finishing in-flight requests');
    const force = setTimeout(() => {
      app.log.error('shutdown took over 15 s; exiting');
      process.exit(1);
    }, 15_000);
    force.unref();
    await startUp;
    // app.close() closes the connections that are idle when it starts; a keep-alive connection
    // whose in-flight request finishes afterwards would hold the close open until its keep-alive
    // timeout (72 s), past the 15 s limit. Close each one as soon as it goes idle.
    const sweep = setInterval(() => app.server.closeIdleConnections(), 100);
    sweep.unref();
    try {
      await app.close();
      await database.close();
      if (!config.databaseUrl) fs.rmSync(adminFile(config), { force: true });
    } finally {
      clearInterval(sweep);
      clearTimeout(force);
      process.exit(0);
    }
  };
  // Draining before an upgrade: no new sessions here, /readyz answers 503 "draining" so the balancer
  // sends new requests elsewhere, and live sessions run on; SIGTERM once /readyz shows none live.
  process.on('SIGUSR2', () => {
    context.sessions.draining = true;
    app.log.info({ live_sessions: context.sessions.liveHere() }, 'draining: this node starts no new sessions');
  });
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  // Under npm (`npx presence serve`, or `npm start` without its exec) a shell sits between npm and
  // this process and does not pass npm's signals on; it just ends. When the launcher goes away,
  // shut down as on SIGTERM rather than run on orphaned.
  if (process.env.npm_lifecycle_event) {
    const launcher = process.ppid;
    const watch = setInterval(() => {
      if (process.ppid !== launcher) void shutdown('launcher exited');
    }, 250);
    watch.unref();
  }

  try {
    await startServing(config, app, context, adminToken, database.engine);
  } finally {
    startedUp();
  }
}

/** Recovers what a previous run left, makes the first-start account, listens and joins the nodes. */
async function startServing(config: Config, app: Built['app'], context: Built['context'], adminToken: string, engine: string): Promise<void> {
  // Sessions left active by a previous run (or overdue while nobody watched) end now.
  await context.sessions.recover(!config.databaseUrl);
  await context.conversations.recover();

  const first = await bootstrap(context.accounts);
  if (first) {
    app.log.info({ account_id: first.account.id }, 'first start: created account "default" (paid, balance 100.00) and an API key with all permissions');
    // The key is printed once, on stdout, never logged; beside it a one-time link into the console.
    const link = await context.consoleSignIns.createLink(first.account.id);
    process.stdout.write(
      `\nPresence API key (shown once, keep it safe):\n  ${first.key}\n\nOpen the console (this link signs you in once, for ten minutes; later: npx presence console-link):\n  ${link.url}\n\n`,
    );
  }

  // The built-in faces `npm install` did not build (all but the default one) are built now, once
  // (cached in build/faces), in a worker thread so the port answers and sessions run meanwhile.
  void buildMissingFaces(app.log);
  // Says which speech engine speaks, and warms it, without holding up the port.
  void context.speech.start().catch((error) => app.log.error({ err: error }, 'speech engine failed to start'));
  await app.listen({ port: config.port, host: config.host });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  // Several nodes on PostgreSQL: this one joins (its lease, its address for forwarded sockets); the
  // sessions it starts from now on are its own.
  if (context.nodes) {
    await context.nodes.start(config.nodeUrl ?? defaultNodeUrl(config.host, port));
    context.sessions.nodeId = context.nodes.id;
  }
  if (!config.databaseUrl) {
    fs.writeFileSync(adminFile(config), JSON.stringify({ pid: process.pid, port, token: adminToken }), { mode: 0o600 });
  }
  app.log.info(
    { url: `http://${config.host === '0.0.0.0' ? 'localhost' : config.host}:${port}`, database: engine, docs: `${config.publicUrl}/docs` },
    'Presence is listening',
  );
}

async function buildMissingFaces(log: { info(o: object, m: string): void; error(o: object, m: string): void }): Promise<void> {
  try {
    if (await facesAreCurrent(FACES_DIR, BUILTIN_FACES)) return;
    const started = performance.now();
    log.info(
      { faces: BUILTIN_FACES.length },
      'built-in faces: building those not built yet, in the background on one core (a page asking for one gets it first)',
    );
    await ensureFacesInBackground(FACES_DIR);
    log.info({ seconds: Math.round((performance.now() - started) / 100) / 10 }, 'built-in faces: all ready');
  } catch (error) {
    log.error({ err: error }, 'face generation failed');
  }
}
