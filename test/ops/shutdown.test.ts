/**
 * Graceful shutdown of the real server process: on SIGTERM it stops taking connections, lets an
 * in-flight request finish, closes idle keep-alive connections, exits 0 and releases DATA_DIR.
 * The in-flight request is held open by sending its body slowly over a raw socket.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { bannerKeys, cleanup, freshPostgres, startServer, migratedDataDir, tempDataDir, type ServerProcess } from '../cli/support/process.js';

after(cleanup);

function connect(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port }, () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Collects everything the socket receives until the server closes it. */
function collect(socket: net.Socket): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (d) => (text += d));
    socket.on('close', () => resolve(text));
    socket.on('error', () => resolve(text));
  });
}

async function waitFor(what: string, check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

function alive(server: ServerProcess): boolean {
  return server.child.exitCode === null && server.child.signalCode === null;
}

describe('graceful shutdown [embedded database]', () => {
  test('SIGTERM lets the in-flight request finish, then exits 0 and releases DATA_DIR', async () => {
    const server = await startServer({ DATA_DIR: await migratedDataDir('shutdown') });
    const [key] = bannerKeys(server);
    const lockFile = path.join(server.dataDir, 'presence.lock');
    assert.ok(fs.existsSync(lockFile));

    // An idle keep-alive connection: must not hold the shutdown up.
    const idle = await connect(server.port);
    const idleText = collect(idle);
    idle.write(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n`);
    await waitFor('the idle connection to be answered', () => idle.bytesRead > 0);

    // The slow request: headers and half of the body now, the rest after SIGTERM.
    const body = JSON.stringify({ name: 'Finished during shutdown', system_prompt: 'x'.repeat(40_000) });
    const slow = await connect(server.port);
    const slowText = collect(slow);
    slow.write(
      `POST /v1/agent/create HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: slow-1\r\n\r\n`,
    );
    slow.write(body.slice(0, 1000));
    await waitFor('the server to start the slow request', () => server.logs().some((l) => l.reqId === 'slow-1' && l.msg === 'incoming request'));

    const exitedAt = server.exited.then((result) => ({ ...result, at: Date.now() }));
    server.child.kill('SIGTERM');
    await waitFor('the shutdown to begin', () => server.logs().some((l) => /shutting down/.test(l.msg)));

    // Draining: no new connections, the idle one is closed, the process waits for the request.
    const refused = async () =>
      connect(server.port).then(
        (socket) => (socket.destroy(), false),
        () => true,
      );
    let closed = false;
    for (const deadline = Date.now() + 5_000; !closed && Date.now() < deadline; ) {
      closed = await refused();
      if (!closed) await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(closed, 'new connections are refused while draining');
    await Promise.race([idleText, new Promise((_, reject) => setTimeout(() => reject(new Error('idle connection not closed')), 5_000))]);
    await new Promise((r) => setTimeout(r, 1_000));
    assert.ok(alive(server), 'the process waits for the in-flight request');
    assert.ok(fs.existsSync(lockFile), 'DATA_DIR is held until the request is done');

    const sentAt = Date.now();
    slow.write(body.slice(1000));
    const response = await slowText;
    const [head, payload] = response.split('\r\n\r\n');
    assert.match(head, /^HTTP\/1\.1 200 /, `the in-flight request completes: ${head}`);
    assert.match(head, /x-request-id: slow-1/i);
    const agent = JSON.parse(payload.includes('{') ? payload.slice(payload.indexOf('{'), payload.lastIndexOf('}') + 1) : '{}');
    assert.equal(agent.name, 'Finished during shutdown');

    const exit = await exitedAt;
    assert.equal(exit.code, 0, `exit code; output:\n${server.stdout().slice(-3000)}\n${server.stderr()}`);
    assert.equal(exit.signal, null);
    assert.ok(exit.at >= sentAt, 'exited only after the request finished');
    assert.ok(exit.at - sentAt < 10_000, `exited promptly after the request (${exit.at - sentAt} ms)`);
    assert.ok(!fs.existsSync(lockFile), 'DATA_DIR lock released');
    assert.ok(!fs.existsSync(path.join(server.dataDir, 'admin.json')), 'admin.json removed');

    // The agent made during shutdown was stored: a new server on the same DATA_DIR has it.
    const next = await startServer({ DATA_DIR: server.dataDir });
    try {
      const got = await next.request('GET', `/v1/agent/${agent.id}`, { key });
      assert.equal(got.status, 200);
      assert.equal(got.body.name, 'Finished during shutdown');
    } finally {
      assert.equal((await next.stop()).code, 0);
    }
  });

  test('SIGINT with nothing in flight exits 0 at once', async () => {
    const server = await startServer({ DATA_DIR: await migratedDataDir('sigint') });
    const started = Date.now();
    server.child.kill('SIGINT');
    const exit = await server.exited;
    assert.equal(exit.code, 0);
    assert.ok(Date.now() - started < 10_000);
    assert.ok(!fs.existsSync(path.join(server.dataDir, 'presence.lock')));
  });
});

// The moment the port answers, the server may still be finishing its start (on PostgreSQL it
// registers its node): a SIGTERM then is still a graceful shutdown, not Node's default death.
for (const engine of [
  { name: 'embedded database', skip: false as string | false, env: async () => ({ DATA_DIR: await migratedDataDir('sigterm-at-once') }) },
  {
    name: 'PostgreSQL',
    skip: process.env.TEST_DATABASE_URL ? (false as const) : 'TEST_DATABASE_URL is not set',
    env: async () => ({ DATABASE_URL: await freshPostgres(), DATA_DIR: tempDataDir('sigterm-at-once-pg') }),
  },
]) {
  test(`SIGTERM the moment /healthz first answers exits 0 [${engine.name}]`, { skip: engine.skip }, async () => {
    for (let round = 0; round < 5; round++) {
      const server = await startServer(await engine.env(), { pollMs: 2 });
      server.child.kill('SIGTERM');
      const exit = await server.exited;
      assert.deepEqual(exit, { code: 0, signal: null }, `round ${round}: ${server.stderr().slice(-2000)}`);
      assert.ok(
        server.logs().some((l) => /shutting down/.test(l.msg)),
        'the shutdown was the graceful one',
      );
    }
  });
}
