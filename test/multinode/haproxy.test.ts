/**
 * The reference deployment's balancer, for real: Debian's HAProxy runs `deploy/haproxy.cfg` (only
 * its addresses changed: 127.0.0.1 ports instead of the compose services' names, and no Docker DNS)
 * in front of three `presence serve` nodes on one PostgreSQL. What docs/scaling.md promises of it:
 * a render session plays through it with no affinity; a node drained with SIGUSR2 is taken out by
 * the /readyz health check while its session goes on; a node killed with SIGKILL costs no request
 * (the config's retries and redispatch); all of it with the file an operator deploys.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { parse as parseYaml } from 'yaml';
import { bannerKeys, cleanup, freePort, freshPostgres, ROOT, startServer, type ServerProcess } from '../cli/support/process.js';
import { PlayerClient, RenderClient, pieces, voiced } from '../support/render-client.js';
import { until } from '../support/until.js';

const RATE = 24000;
const CONFIG = fs.readFileSync(path.join(ROOT, 'deploy', 'haproxy.cfg'), 'utf8');
const COMPOSE = parseYaml(fs.readFileSync(path.join(ROOT, 'deploy', 'compose.yaml'), 'utf8'), { merge: true });
const haproxyInstalled = spawnSync('haproxy', ['-v']).status === 0;
const skip = !process.env.TEST_DATABASE_URL
  ? 'set TEST_DATABASE_URL to run three nodes behind HAProxy on PostgreSQL'
  : !haproxyInstalled
    ? 'HAProxy is not installed (apt-get install haproxy; .ci/run installs it)'
    : false;

/** The server names of the config's backend, in order. */
const configServers = [...CONFIG.matchAll(/^\s*server\s+(\S+)\s+(\S+)/gm)].map((m) => ({ name: m[1]!, address: m[2]! }));

test('deploy/: every node of compose.yaml is a server of haproxy.cfg, with its NODE_URL its address there', () => {
  const services = COMPOSE.services as Record<string, any>;
  const nodes = Object.entries(services).filter(([, s]) => s.environment?.DATABASE_URL);
  assert.equal(nodes.length, 3, 'three Presence nodes');
  assert.deepEqual(
    configServers,
    nodes.map(([name, s]) => ({ name, address: new URL(s.environment.NODE_URL).host })),
    'the balancer sends to each node at the address the node announces to the others',
  );
  for (const [, s] of nodes) {
    assert.equal(new URL(s.environment.DATABASE_URL).hostname, 'db', 'every node uses the one PostgreSQL service');
    assert.match(s.healthcheck.test.join(' '), /\/healthz/);
  }
  assert.deepEqual(
    services.balancer.depends_on,
    nodes.map(([name]) => name),
  );
  assert.match(CONFIG, /option httpchk GET \/readyz/, 'the balancer asks /readyz, which says 503 while a node starts or drains');
});

/** deploy/haproxy.cfg with the compose addresses replaced by local ones; nothing else changed. */
function localConfig(listen: number, ports: number[], statsSocket: string): string {
  let text = CONFIG.replace(/^resolvers docker\n(?:[ \t]+.*\n)*/m, '')
    .replace(/ resolvers docker init-addr \S+/, '')
    .replace(/^(\s*)bind :8080$/m, `$1bind 127.0.0.1:${listen}`)
    .replace(/^global\n/m, `global\n  stats socket ${statsSocket} level admin\n`);
  configServers.forEach((server, i) => {
    text = text.replace(`server ${server.name} ${server.address}`, `server ${server.name} 127.0.0.1:${ports[i]}`);
  });
  assert.doesNotMatch(text, /node\d:8080|resolvers/, 'every compose address was replaced');
  return text;
}

/** One line of HAProxy's runtime API over its stats socket. */
function haproxyCommand(socket: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const connection = net.createConnection(socket);
    let text = '';
    connection.on('connect', () => connection.end(`${command}\n`));
    connection.on('data', (d) => (text += d));
    connection.on('end', () => resolve(text));
    connection.on('error', reject);
  });
}

/** The balancer's view of each server: name → UP / DOWN / MAINT… */
async function serverStates(socket: string): Promise<Record<string, string>> {
  const csv = await haproxyCommand(socket, 'show stat');
  const [header, ...rows] = csv.trim().split('\n');
  const columns = header!.replace(/^# /, '').split(',');
  const states: Record<string, string> = {};
  for (const row of rows) {
    const cells = row.split(',');
    const get = (name: string) => cells[columns.indexOf(name)]!;
    if (get('pxname') === 'presence' && !['FRONTEND', 'BACKEND'].includes(get('svname'))) states[get('svname')] = get('status');
  }
  return states;
}

async function call(base: string, method: string, route: string, key?: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(base + route, {
    method,
    headers: { ...(key && { authorization: `Bearer ${key}` }), ...(body !== undefined && { 'content-type': 'application/json' }), connection: 'close' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

describe('three nodes behind HAProxy with deploy/haproxy.cfg [postgres]', { skip }, () => {
  const nodes: ServerProcess[] = [];
  let balancer: ChildProcess;
  let balancerLog = '';
  let base: string;
  let socket: string;
  let dir: string;
  let key: string;
  let agentId: number;
  let db: pg.Pool;
  /** The nodes HAProxy should be sending to, with their server names in the config. */
  let inRotation: Array<{ node: ServerProcess; name: string }>;

  before(async () => {
    const databaseUrl = await freshPostgres();
    db = new pg.Pool({ connectionString: databaseUrl, max: 2 });
    const listen = await freePort();
    base = `http://127.0.0.1:${listen}`;
    const env = { DATABASE_URL: databaseUrl, PUBLIC_URL: base, NODE_LEASE_SECONDS: '3' };
    nodes.push(await startServer(env));
    [key] = bannerKeys(nodes[0]!);
    assert.ok(key, nodes[0]!.stdout());
    nodes.push(...(await Promise.all([startServer(env), startServer(env)])));
    await Promise.all(nodes.map((n) => n.waitForReady(120_000)));
    inRotation = nodes.map((node, i) => ({ node, name: configServers[i]!.name }));

    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'presence-haproxy-'));
    socket = path.join(dir, 'admin.sock');
    const file = path.join(dir, 'haproxy.cfg');
    fs.writeFileSync(
      file,
      localConfig(
        listen,
        nodes.map((n) => n.port),
        socket,
      ),
    );
    const check = spawnSync('haproxy', ['-c', '-f', file], { encoding: 'utf8' });
    assert.equal(check.status, 0, `haproxy -c refuses the config:\n${check.stdout}${check.stderr}`);
    balancer = spawn('haproxy', ['-db', '-f', file], { stdio: ['ignore', 'pipe', 'pipe'] });
    balancer.stdout!.on('data', (d) => (balancerLog = (balancerLog + d).slice(-20_000)));
    balancer.stderr!.on('data', (d) => (balancerLog = (balancerLog + d).slice(-20_000)));
    await until(
      async () => fs.existsSync(socket) && Object.values(await serverStates(socket)).filter((s) => s === 'UP').length === 3,
      30_000,
      'HAProxy sees three nodes up',
    );
    const agent = await call(base, 'POST', '/v1/agent/create', key, { name: 'Balanced', concurrency_limit: 10 });
    assert.equal(agent.status, 200, JSON.stringify(agent.body));
    agentId = agent.body.id;
  });
  after(async () => {
    balancer?.kill('SIGTERM');
    await db?.end().catch(() => {});
    await cleanup();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  test('a render session plays through the balancer with no affinity: what the render socket sends, the page plays', async () => {
    const session = await startRender();
    assert.ok(session.ws_url.startsWith(base.replace('http', 'ws')), 'the session is addressed through the balancer');
    await plays(session);
    assert.equal((await call(base, 'POST', `/v1/sessions/${session.session_id}/stop`, key)).status, 200);
  });

  async function startRender(): Promise<any> {
    const started = await call(base, 'POST', '/v1/sessions', key, { agent_id: agentId, mode: 'render' });
    assert.equal(started.status, 201, JSON.stringify(started.body));
    return started.body;
  }

  /** Streams half a second through the balancer and checks that the page plays all of it. */
  async function plays(session: any): Promise<void> {
    const client = await RenderClient.open(session.ws_url);
    assert.equal(client.closeCode, undefined, `render socket closed ${client.closeCode} ${client.closeReason}`);
    const player = await PlayerClient.open(session.player_url);
    const audio = voiced(0.5, RATE);
    for (const piece of pieces(audio, 0.05)) client.speak(piece, { event_id: 'evt_lb' });
    client.send({ type: 'agent.speak_end' });
    await client.waitForType('agent.speak_ended');
    await until(() => player.sampleCount >= audio.length, 10_000, `the page hears all ${audio.length} samples (has ${player.sampleCount})`);
    assert.deepEqual(player.heard().subarray(0, audio.length), audio, 'the page plays exactly what the render socket sent');
    client.close();
    player.close();
  }

  test("an agent's concurrency_limit holds for the deployment: nine starts at once over three nodes, exactly the limit succeed", async () => {
    const agent = await call(base, 'POST', '/v1/agent/create', key, { name: 'Limited', concurrency_limit: 2 });
    assert.equal(agent.status, 200, JSON.stringify(agent.body));
    const starts = await Promise.all(Array.from({ length: 9 }, () => call(base, 'POST', '/v1/sessions', key, { agent_id: agent.body.id, mode: 'render' })));
    const statuses = starts.map((s) => s.status).sort();
    assert.deepEqual(statuses, [201, 201, ...Array(7).fill(409)], JSON.stringify(starts.map((s) => s.body)));
    const started = starts.filter((s) => s.status === 201).map((s) => s.body.session_id);
    for (const id of started) assert.equal((await call(base, 'POST', `/v1/sessions/${id}/stop`, key)).status, 200);
  });

  test('a node drained with SIGUSR2 leaves the rotation by its /readyz; its session plays on, and every new one starts elsewhere', async () => {
    const kept = await startRender();
    const { rows } = await db.query('SELECT n.url FROM sessions s JOIN nodes n ON n.id = s.node_id WHERE s.id = $1', [kept.session_id]);
    const index = nodes.findIndex((n) => n.port === Number(new URL(rows[0].url).port));
    assert.ok(index >= 0, 'the session belongs to one of the three nodes');
    const [drained, name] = [nodes[index]!, configServers[index]!.name];
    drained.child.kill('SIGUSR2');
    await until(async () => (await serverStates(socket))[name]?.startsWith('DOWN'), 15_000, `HAProxy takes ${name} out`);
    const states = await serverStates(socket);
    assert.equal(Object.values(states).filter((s) => s === 'UP').length, 2, JSON.stringify(states));
    // Its sockets, arriving at the nodes still in rotation, reach it: the session finishes there.
    await plays(kept);
    // A drained node refuses new sessions (503 no_capacity): through the balancer none reaches it.
    const starts = await Promise.all(Array.from({ length: 6 }, () => call(base, 'POST', '/v1/sessions', key, { agent_id: agentId, mode: 'render' })));
    assert.deepEqual(
      starts.map((s) => s.status),
      Array(6).fill(201),
      JSON.stringify(starts.map((s) => s.body)),
    );
    for (const s of [kept, ...starts.map((s) => s.body)]) assert.equal((await call(base, 'POST', `/v1/sessions/${s.session_id}/stop`, key)).status, 200);
    // The drained node is done with; the next test kills one of the two still in rotation.
    drained.child.kill('SIGTERM');
    inRotation.splice(index, 1);
  });

  test('a node killed with SIGKILL costs no request: the config retries on another node', async () => {
    const { node: victim, name } = inRotation[1]!;
    victim.child.kill('SIGKILL');
    await new Promise((resolve) => victim.child.once('exit', resolve));
    // Before the health check notices (fall 2 × inter 2 s), half the picks go to the dead node.
    const replies = [];
    for (let i = 0; i < 9; i++) replies.push(await call(base, 'GET', `/v1/agent/${agentId}`, key));
    assert.deepEqual(
      replies.map((r) => r.status),
      Array(9).fill(200),
      balancerLog,
    );
    await until(async () => (await serverStates(socket))[name]?.startsWith('DOWN'), 15_000, 'HAProxy marks the dead node down');
  });
});
