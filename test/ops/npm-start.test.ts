/**
 * Issue 15, item 3: `npm start` is what the README runs and what a container runtime or process
 * manager signals. SIGTERM or SIGINT sent to the `npm start` process must shut the server down
 * gracefully (it used to leave the node server running, orphaned, still answering).
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { cleanup, freePort, ROOT, tempDataDir } from '../cli/support/process.js';

const started: ChildProcess[] = [];
after(async () => {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await cleanup();
});

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function answers(url: string): Promise<boolean> {
  try {
    return (await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) })).ok;
  } catch {
    return false;
  }
}

const launchers = [
  { name: 'npm start', args: ['start', '--silent'], signal: 'SIGTERM' },
  { name: 'npm start', args: ['start', '--silent'], signal: 'SIGINT' },
  { name: 'npx presence serve', args: ['exec', '--offline', '--', 'presence', 'serve'], signal: 'SIGTERM' },
] as const;

for (const { name, args, signal } of launchers) {
  test(`${signal} to the ${name} process shuts the server down gracefully`, async () => {
    const dataDir = tempDataDir('npmstart');
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', PUBLIC_URL: url };
    for (const name of ['DATABASE_URL', 'NODE_OPTIONS', 'NODE_TEST_CONTEXT', 'LOG_LEVEL']) delete env[name];
    const npm = spawn('npm', [...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    started.push(npm);
    let output = '';
    npm.stdout!.setEncoding('utf8').on('data', (d) => (output += d));
    npm.stderr!.setEncoding('utf8').on('data', (d) => (output += d));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      npm.on('close', (code, sig) => resolve({ code, signal: sig })),
    );

    const deadline = Date.now() + 120_000;
    while (!(await answers(url))) {
      assert.ok(Date.now() < deadline, `npm start did not answer in time\n${output}`);
      assert.equal(npm.exitCode, null, `npm start exited early\n${output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const serverPid = JSON.parse(fs.readFileSync(path.join(dataDir, 'admin.json'), 'utf8')).pid as number;
    assert.notEqual(serverPid, npm.pid, 'the server is a child of npm');

    npm.kill(signal);
    const result = await exited;
    // npm start waits for the server and exits with its status; npm exec ends at once (its shell
    // dies with it), and the server notices its launcher is gone. ('close' waits for the server
    // too: it writes into the same pipes.)
    if (name === 'npm start') assert.equal(result.code, 0, `npm start exits 0 after the graceful shutdown\n${output}`);
    const gone = Date.now() + 20_000;
    while (Date.now() < gone && isRunning(serverPid)) await new Promise((r) => setTimeout(r, 100));
    if (name === 'npm start') assert.match(output, new RegExp(`"signal":"${signal}".*shutting down`), 'the server itself received the signal');
    else assert.match(output, /"signal":"launcher exited".*shutting down/, 'the server shut down gracefully');
    assert.equal(await answers(url), false, 'the server no longer answers');
    assert.throws(() => process.kill(serverPid, 0), /ESRCH/, 'the server process is gone, not orphaned');
    assert.equal(fs.existsSync(path.join(dataDir, 'presence.lock')), false, 'DATA_DIR released');
    assert.equal(fs.existsSync(path.join(dataDir, 'admin.json')), false);
  });
}
