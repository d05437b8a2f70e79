/**
 * Three `presence serve` nodes on one PostgreSQL behind a plain round-robin TCP proxy that knows
 * nothing about sessions (issue 29): a render session started through one node plays with its
 * render socket on a second node and its page on a third (both forwarded to the owner); HTTP
 * commands reach the owner from any node; a conversation's page on another node is answered by
 * the owner; SESSION_CAPACITY counts the whole deployment; a node killed with SIGKILL has its
 * sessions ended `node_lost` by the others within the lease bound, billed and recorded, while every
 * other request keeps working; a node that starts joins; a node stopped with SIGTERM has its
 * sessions carried on by the node their reconnecting sockets reach.
 */
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { bannerKeys, cleanup, freshPostgres, startServer, type ServerProcess } from '../cli/support/process.js';
import { PlayerClient, RenderClient, pieces, voiced } from '../support/render-client.js';
import { until } from '../support/until.js';
import { startRoundRobin, type RoundRobin } from './support/round-robin.js';
import { SHOP_PROMPT } from '../conversation/support.js';

const RATE = 24000;
/** Short leases so a lost node is noticed in seconds: bound = lease + a third of it (one check). */
const LEASE_SECONDS = 3;
const LOST_BOUND_MS = (LEASE_SECONDS + LEASE_SECONDS / 3) * 1000 + 3000;

async function reachable(url: string | undefined): Promise<boolean> {
  if (!url) return false;
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

const skip = !process.env.TEST_DATABASE_URL
  ? 'set TEST_DATABASE_URL to run three nodes on PostgreSQL'
  : !(await reachable(process.env.TEST_DATABASE_URL))
    ? `PostgreSQL at TEST_DATABASE_URL is not reachable`
    : false;

/** One request on a new connection (no keep-alive), so every call is a fresh pick of the balancer. */
function call(base: string, method: string, path: string, options: { key?: string; body?: unknown } = {}): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
    const request = http.request(
      base + path,
      {
        method,
        agent: false,
        headers: {
          ...(options.key && { authorization: `Bearer ${options.key}` }),
          ...(payload && { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) }),
        },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8').on('data', (d) => (text += d));
        response.on('end', () => {
          let body: any = text;
          try {
            body = text ? JSON.parse(text) : null;
          } catch {
            /* not JSON */
          }
          resolve({ status: response.statusCode ?? 0, body });
        });
      },
    );
    request.on('error', reject);
    request.end(payload);
  });
}

describe('three nodes behind a round-robin balancer [postgres]', { skip }, () => {
  let lb: RoundRobin;
  let db: pg.Pool;
  let key: string;
  let agentId: number;
  let databaseUrl: string;
  const nodes: ServerProcess[] = [];

  before(async () => {
    databaseUrl = await freshPostgres();
    lb = await startRoundRobin();
    const env = { DATABASE_URL: databaseUrl, PUBLIC_URL: lb.url, NODE_LEASE_SECONDS: String(LEASE_SECONDS), SESSION_CAPACITY: '3', LOG_LEVEL: 'info' };
    // The first node migrates and prints the first key; the others join the running deployment.
    nodes.push(await startServer(env));
    [key] = bannerKeys(nodes[0]!);
    assert.ok(key, nodes[0]!.stdout());
    nodes.push(...(await Promise.all([startServer(env), startServer(env)])));
    lb.backends.push(...nodes.map((n) => n.port));
    db = new pg.Pool({ connectionString: databaseUrl, max: 2 });
    await until(async () => (await db.query('SELECT count(*)::int AS n FROM nodes')).rows[0].n === 3, 20_000, 'three nodes registered');
    const agent = await call(lb.url, 'POST', '/v1/agent/create', { key, body: { name: 'Spread', concurrency_limit: 10 } });
    assert.equal(agent.status, 200, JSON.stringify(agent.body));
    agentId = agent.body.id;
  });
  after(async () => {
    await db?.end().catch(() => {});
    await lb?.close();
    await cleanup();
  });

  /** The node (its port) that owns a session, from its record and the node table. */
  async function ownerPort(sessionId: string): Promise<number> {
    const { rows } = await db.query('SELECT n.url FROM sessions s JOIN nodes n ON n.id = s.node_id WHERE s.id = $1', [sessionId]);
    assert.equal(rows.length, 1, 'the session records a registered owner node');
    return Number(new URL(rows[0].url).port);
  }
  const others = (port: number) => lb.backends.filter((p) => p !== port);
  /** A node's count of sockets and commands it forwarded to their owner (its /metrics, read directly). */
  async function forwarded(port: number): Promise<number> {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith('presence_node_forwarded_total '));
    assert.ok(line, 'the node reports forwarding on /metrics');
    return Number(line.split(' ')[1]);
  }

  async function startRender(): Promise<any> {
    const started = await call(lb.url, 'POST', '/v1/sessions', { key, body: { agent_id: agentId, mode: 'render' } });
    assert.equal(started.status, 201, JSON.stringify(started.body));
    return started.body;
  }

  /** Opens the render socket and the page through the balancer, each pinned to a node other than the owner. */
  async function connectElsewhere(session: any): Promise<{ owner: number; client: RenderClient; player: PlayerClient; via: number[] }> {
    const owner = await ownerPort(session.session_id);
    const [renderNode, pageNode = renderNode] = others(owner);
    lb.pinNext(renderNode!);
    const client = await RenderClient.open(session.ws_url);
    assert.equal(client.closeCode, undefined, `render socket closed ${client.closeCode} ${client.closeReason}`);
    lb.pinNext(pageNode!);
    const player = await PlayerClient.open(session.player_url);
    return { owner, client, player, via: [renderNode!, pageNode!] };
  }

  test('a render session started on one node plays with its render socket on a second and its page on a third', async () => {
    const session = await startRender();
    const routedBefore = lb.routed.length;
    const before = await Promise.all(lb.backends.map(forwarded));
    const { owner, client, player, via } = await connectElsewhere(session);
    const after = await Promise.all(lb.backends.map(forwarded));
    assert.deepEqual(
      lb.backends.map((port, i) => after[i]! - before[i]!),
      lb.backends.map((port) => (via.includes(port) ? 1 : 0)),
      'each socket was forwarded once, by the node it reached',
    );
    assert.deepEqual(lb.routed.slice(routedBefore), via, 'the balancer put the sockets on the two other nodes');
    assert.ok(!via.includes(owner));
    const state = client.of('session.state_updated')[0]!.event;
    assert.deepEqual([state.state, state.session_id], ['connected', session.session_id]);
    assert.equal(player.of('hello')[0].session.session_id, session.session_id);

    const audio = voiced(0.6, RATE);
    for (const piece of pieces(audio, 0.05)) client.speak(piece, { event_id: 'evt_spread' });
    client.send({ type: 'agent.speak_end' });
    await client.waitForType('agent.speak_ended');
    await until(() => player.sampleCount >= audio.length, 10_000, `the page hears all ${audio.length} samples (has ${player.sampleCount})`);
    assert.deepEqual(player.heard().subarray(0, audio.length), audio, 'the page plays exactly what the render socket sent');
    assert.ok(player.of('lipsync').length + player.of('visemes').length + player.frames.length > 0);

    // An HTTP command reaching a node that does not carry the session is carried out by the owner.
    const other = others(owner);
    lb.pinNext(other[0]!);
    const command = await call(lb.url, 'POST', `/v1/sessions/${session.session_id}/commands`, {
      key,
      body: { type: 'stage.camera', camera: 'close', event_id: 'evt_cam' },
    });
    assert.equal(command.status, 202, JSON.stringify(command.body));
    assert.equal(command.body.event_id, 'evt_cam');
    await client.waitFor(() => client.events.some((e) => e.event.type === 'stage.updated' && e.event.source_event_id === 'evt_cam'), 10_000);

    // A stop reaching another node closes the sockets on the owner too.
    lb.pinNext(other[1]!);
    const stopped = await call(lb.url, 'POST', `/v1/sessions/${session.session_id}/stop`, { key });
    assert.equal(stopped.status, 200, JSON.stringify(stopped.body));
    assert.equal(stopped.body.end_reason, 'stopped');
    await client.waitClose(10_000);
    client.close();
    player.close();
  });

  test("SESSION_CAPACITY counts the sessions of every node, not each node's", async () => {
    const live = [await startRender(), await startRender(), await startRender()];
    const owners = new Set(await Promise.all(live.map((s) => ownerPort(s.session_id))));
    assert.ok(owners.size >= 2, 'round robin spread the starts over several nodes');
    for (const port of lb.backends) {
      lb.pinNext(port);
      const refused = await call(lb.url, 'POST', '/v1/sessions', { key, body: { agent_id: agentId, mode: 'render' } });
      assert.equal(refused.status, 503, `node ${port}: ${JSON.stringify(refused.body)}`);
      assert.equal(refused.body.detail.code, 'no_capacity');
    }
    for (const s of live) assert.equal((await call(lb.url, 'POST', `/v1/sessions/${s.session_id}/stop`, { key })).status, 200);
  });

  test('a conversation session: its page on another node is heard and answered by the owner, and visitor.message from a third node too', async () => {
    await Promise.all(nodes.map((n) => n.waitForReady(120_000)));
    const created = await call(lb.url, 'POST', '/v1/agent/create', { key, body: { name: 'Ava', system_prompt: SHOP_PROMPT, concurrency_limit: 5 } });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const patched = await call(lb.url, 'PATCH', `/v1/agent/${created.body.id}`, { key, body: { welcome_message: 'Hello, I am Ava from Rosa Bakery.' } });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    const started = await call(lb.url, 'POST', '/v1/sessions', { key, body: { agent_id: created.body.id } });
    assert.equal(started.status, 201, JSON.stringify(started.body));
    const id = started.body.session_id;
    const owner = await ownerPort(id);
    const [pageNode, commandNode = pageNode] = others(owner);
    const forwardedBefore = await forwarded(pageNode!);
    lb.pinNext(pageNode!);
    const page = await PlayerClient.open(started.body.player_url);
    assert.equal(await forwarded(pageNode!), forwardedBefore + 1, "the page's socket went on to the owner");
    const turns = async () =>
      (await db.query("SELECT role, text, details->>'source' AS source FROM conversation_turns WHERE conversation_id = $1 ORDER BY id", [id])).rows as Array<{
        role: string;
        text: string;
        source: string | null;
      }>;
    page.socket.send(JSON.stringify({ type: 'visitor_text', text: 'What is your phone number?' }));
    await until(async () => (await turns()).some((turn) => turn.role === 'agent' && /555/.test(turn.text)), 60_000, "the answer to the page's question");
    await until(() => page.frames.length > 0, 30_000, 'the page hears the agent');
    lb.pinNext(commandNode!);
    const sent = await call(lb.url, 'POST', `/v1/sessions/${id}/commands`, { key, body: { type: 'visitor.message', text: 'When are you open?' } });
    assert.equal(sent.status, 202, JSON.stringify(sent.body));
    await until(async () => (await turns()).filter((turn) => turn.role === 'visitor').length >= 2, 60_000, 'the forwarded visitor.message is a turn');
    const all = await turns();
    assert.equal(
      all.filter((turn) => turn.role === 'agent' && turn.source === 'welcome').length,
      1,
      `one welcome: only the owner runs the conversation ${JSON.stringify(all)}`,
    );
    assert.equal((await call(lb.url, 'POST', `/v1/sessions/${id}/stop`, { key })).status, 200);
    page.close();
  });

  test('a node killed with SIGKILL: its sessions end node_lost within the bound, billed and recorded; the rest keeps working', async () => {
    const session = await startRender();
    const { owner, client, player } = await connectElsewhere(session);
    const victim = nodes.find((n) => n.port === owner)!;
    // A second session on a node that stays.
    lb.pinNext(others(owner)[0]!);
    const kept = await startRender();
    assert.notEqual(await ownerPort(kept.session_id), owner);

    const killedAt = Date.now();
    victim.child.kill('SIGKILL');
    await victim.exited;
    // The sockets that went through other nodes to the dead owner are closed by those nodes.
    await client.waitClose(10_000);

    let record: any;
    await until(
      async () => {
        record = (await call(lb.url, 'GET', `/v1/sessions/${session.session_id}`, { key })).body;
        return record.status === 'ended';
      },
      LOST_BOUND_MS + 10_000,
      "the lost node's session ends",
    );
    const took = Date.now() - killedAt;
    assert.equal(record.end_reason, 'node_lost');
    assert.ok(took <= LOST_BOUND_MS, `ended ${took} ms after the kill (bound ${LOST_BOUND_MS} ms)`);
    assert.equal(typeof record.duration_seconds, 'number');

    // Settled through the normal end: metered seconds, the conversation record and its ended job.
    const usage = await db.query('SELECT seconds FROM usage_records WHERE session_id = $1', [session.session_id]);
    assert.equal(usage.rows.length, 1, "the session's seconds are metered");
    await until(
      async () =>
        (await db.query('SELECT end_reason FROM conversations WHERE id = $1 AND ended_at IS NOT NULL', [session.session_id])).rows[0]?.end_reason ===
        'node_lost',
      10_000,
      'the conversation record ends node_lost',
    );
    const dead = await db.query('SELECT count(*)::int AS n FROM nodes WHERE url = $1', [`http://127.0.0.1:${owner}`]);
    assert.equal(dead.rows[0].n, 0, 'the lost node left the node table');

    // A page opening now, on any node, is told the session ended.
    const late = await PlayerClient.open(session.player_url).catch(() => undefined);
    if (late) {
      await until(() => late.of('ended').length > 0 || late.closeCode !== undefined, 5000, 'the late page is told');
      late.close();
    }
    player.close();

    // Every request keeps working through the balancer, which still lists the dead node and skips
    // it when it refuses connections (as any balancer's passive health check does).
    assert.equal((await call(lb.url, 'GET', `/v1/sessions/${kept.session_id}`, { key })).body.status, 'active', "the other node's session runs on");
    for (let i = 0; i < 6; i++) assert.equal((await call(lb.url, 'GET', '/v1/sessions?limit=5', { key })).status, 200);
    lb.backends.splice(lb.backends.indexOf(owner), 1);
    const fresh = await startRender();
    const again = await connectElsewhere(fresh);
    const audio = voiced(0.3, RATE);
    for (const piece of pieces(audio, 0.05)) again.client.speak(piece, { event_id: 'evt_after' });
    again.client.send({ type: 'agent.speak_end' });
    await again.client.waitForType('agent.speak_ended');
    await until(() => again.player.sampleCount >= audio.length, 10_000, 'a new session plays after the loss');
    again.client.close();
    again.player.close();
    for (const s of [kept, fresh]) assert.equal((await call(lb.url, 'POST', `/v1/sessions/${s.session_id}/stop`, { key })).status, 200);
  });

  test('a node that starts joins the running deployment without a restart of the others', async () => {
    const joined = await startServer({ DATABASE_URL: databaseUrl, PUBLIC_URL: lb.url, NODE_LEASE_SECONDS: String(LEASE_SECONDS), SESSION_CAPACITY: '3' });
    nodes.push(joined);
    await until(
      async () => (await db.query('SELECT count(*)::int AS n FROM nodes WHERE url = $1', [`http://127.0.0.1:${joined.port}`])).rows[0].n === 1,
      10_000,
      'the new node registers',
    );
    lb.backends.push(joined.port);
    lb.pinNext(joined.port);
    const session = await startRender();
    assert.equal(await ownerPort(session.session_id), joined.port, 'the new node takes sessions');
    const { client, player } = await connectElsewhere(session);
    assert.equal(player.of('hello')[0].session.session_id, session.session_id);
    client.close();
    player.close();
    assert.equal((await call(lb.url, 'POST', `/v1/sessions/${session.session_id}/stop`, { key })).status, 200);
  });
  test("a node stopped with SIGTERM: its sessions' sockets reconnect through the balancer and another node carries them on", async () => {
    const session = await startRender();
    const { owner, client, player } = await connectElsewhere(session);
    const leaving = nodes.find((n) => n.port === owner)!;
    const stopped = await leaving.stop();
    assert.equal(stopped.code, 0, leaving.stderr());
    assert.equal(await client.waitClose(10_000), 1012, 'the render socket is told to reconnect');
    lb.backends.splice(lb.backends.indexOf(owner), 1);
    player.close();

    const again = await RenderClient.open(session.ws_url);
    assert.equal(again.closeCode, undefined, `reconnected render socket closed ${again.closeCode} ${again.closeReason}`);
    assert.equal(again.of('session.state_updated')[0]!.event.state, 'connected');
    const carrier = await ownerPort(session.session_id);
    assert.notEqual(carrier, owner, 'another node took the session over');
    const page = await PlayerClient.open(session.player_url);
    const audio = voiced(0.3, RATE);
    for (const piece of pieces(audio, 0.05)) again.speak(piece, { event_id: 'evt_moved' });
    again.send({ type: 'agent.speak_end' });
    await again.waitForType('agent.speak_ended');
    await until(() => page.sampleCount >= audio.length, 10_000, 'the moved session plays');
    assert.equal((await call(lb.url, 'GET', `/v1/sessions/${session.session_id}`, { key })).body.status, 'active');
    again.close();
    page.close();
  });
});
