/**
 * The nodes of a deployment on one PostgreSQL (issue 29). Each `presence serve` registers itself
 * (a random id, its internal NODE_URL) with a lease it renews every third of NODE_LEASE_SECONDS.
 * Every node also looks for nodes whose lease ran out (killed, machine gone): the first to claim
 * one ends its live sessions as `node_lost` through the sessions' normal end (billing and the
 * conversation record settle as for any end). A node stopped gracefully keeps its row for a
 * restart window, during which its sessions' sockets may reconnect anywhere: the node they reach
 * takes the session over (`claim`). The embedded database runs one node and has no registry.
 */
import crypto from 'node:crypto';
import os from 'node:os';
import { sql } from 'kysely';
import type { Db } from '../core/db/database.js';

/** How long a gracefully stopped node's sessions wait for their sockets to reconnect elsewhere. */
const RESTART_WINDOW_SECONDS = 60;
/** How often sessions carried here are checked for an end recorded by another node. */
const SETTLE_MS = 1000;

/** Where a session's sockets belong. */
export interface SessionOwner {
  sessionId: string;
  /** The session is still active. */
  active: boolean;
  /** The owning node's id, or null (a single node, or a session from before nodes were recorded). */
  nodeId: string | null;
  /** Its internal address, when it is another node that is alive. */
  url: string | null;
  /** The owner is this node, or nobody alive claims it: serve the socket here. */
  here: boolean;
}

export interface NodeHooks {
  /** End a session of a lost node (the sessions' normal end). */
  endSession(id: string, reason: string): Promise<unknown>;
  /** Sessions this node carries that another node ended: close their live side here. */
  settleEndedElsewhere(): Promise<void>;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

export class NodeRegistry {
  readonly id = `node_${crypto.randomBytes(8).toString('hex')}`;
  url = '';
  private timer?: NodeJS.Timeout;
  private settler?: NodeJS.Timeout;
  private ticking = false;

  constructor(
    private readonly db: Db,
    private readonly leaseSeconds: number,
    private readonly hooks: NodeHooks,
  ) {}

  /** Registers this node (after it listens: the port is known) and starts the lease and the watch. */
  async start(url: string): Promise<void> {
    this.url = url;
    await this.register();
    this.hooks.log.info({ node_id: this.id, node_url: url, lease_seconds: this.leaseSeconds }, 'node registered');
    this.timer = setInterval(() => void this.tick(), Math.max(500, (this.leaseSeconds * 1000) / 3));
    this.timer.unref();
    // A stop (or billing end) that reached another node closes this node's sockets within a second.
    this.settler = setInterval(() => void this.hooks.settleEndedElsewhere().catch(() => {}), SETTLE_MS);
    this.settler.unref();
  }

  private async register(): Promise<void> {
    await this.db
      .insertInto('nodes')
      .values({ id: this.id, url: this.url, lease_until: sql<Date>`now() + make_interval(secs => ${this.leaseSeconds})` })
      .onConflict((oc) =>
        oc.column('id').doUpdateSet({ url: this.url, lease_until: sql<Date>`now() + make_interval(secs => ${this.leaseSeconds})`, stopped_at: null }),
      )
      .execute();
  }

  /** Renews the lease and ends lost nodes' sessions. */
  async tick(): Promise<void> {
    if (this.ticking) return;
    this.ticking = true;
    try {
      const renewed = await this.db
        .updateTable('nodes')
        .set({ lease_until: sql<Date>`now() + make_interval(secs => ${this.leaseSeconds})` })
        .where('id', '=', this.id)
        .executeTakeFirst();
      if (Number(renewed.numUpdatedRows) === 0) {
        // Taken for dead (paused, or cut off from the database past the lease): its sessions were
        // ended by the others (the check below closes their sockets here); it joins again.
        this.hooks.log.warn({ node_id: this.id }, "this node's lease had run out; registering again");
        await this.register();
      }
      await this.reapLost();
    } catch (error) {
      this.hooks.log.error({ err: error }, 'node lease or lost-node check failed; the next one tries again');
    } finally {
      this.ticking = false;
    }
  }

  /** Nodes whose lease ran out: the first node to delete one's row ends its live sessions. */
  async reapLost(): Promise<number> {
    const lost = await this.db
      .deleteFrom('nodes')
      .where('lease_until', '<', sql<Date>`now()`)
      .where('id', '!=', this.id)
      .returning(['id', 'url', 'stopped_at'])
      .execute();
    let ended = 0;
    for (const node of lost) {
      const live = await this.db.selectFrom('sessions').select('id').where('node_id', '=', node.id).where('status', '=', 'active').execute();
      this.hooks.log.warn(
        { node_id: node.id, node_url: node.url, stopped: !!node.stopped_at, sessions: live.length },
        'a node was lost: ending its sessions as node_lost',
      );
      for (const s of live) {
        await this.hooks.endSession(s.id, 'node_lost');
        ended++;
      }
    }
    return ended;
  }

  /** Where a session's sockets go: the owner's address when another node alive owns it. */
  async ownerOf(where: { sessionId: string } | { playerKey: string }): Promise<SessionOwner | undefined> {
    let q = this.db
      .selectFrom('sessions')
      .leftJoin('nodes', 'nodes.id', 'sessions.node_id')
      .select([
        'sessions.id',
        'sessions.node_id',
        'sessions.status',
        'nodes.url',
        sql<boolean>`nodes.lease_until > now() AND nodes.stopped_at IS NULL`.as('alive'),
      ]);
    q = 'sessionId' in where ? q.where('sessions.id', '=', where.sessionId) : q.where('sessions.player_key', '=', where.playerKey);
    const row = await q.executeTakeFirst();
    if (!row) return undefined;
    const mine = row.node_id === null || row.node_id === this.id;
    if (mine || row.status !== 'active') return { sessionId: row.id, active: row.status === 'active', nodeId: row.node_id, url: null, here: true };
    if (row.alive && row.url) return { sessionId: row.id, active: row.status === 'active', nodeId: row.node_id, url: row.url, here: false };
    return { sessionId: row.id, active: row.status === 'active', nodeId: row.node_id, url: null, here: true };
  }

  /**
   * Takes over an active session whose owner stopped gracefully (its restart window): true when
   * this node now owns it. A session of a node that died is not taken over: it ends `node_lost`.
   */
  async claim(sessionId: string, from: string | null): Promise<boolean> {
    if (from === null || from === this.id) return true;
    const claimed = await this.db
      .updateTable('sessions')
      .set({ node_id: this.id })
      .where('id', '=', sessionId)
      .where('status', '=', 'active')
      .where('node_id', '=', from)
      .where(({ exists, selectFrom }) => exists(selectFrom('nodes').select('id').where('id', '=', from).where('stopped_at', 'is not', null)))
      .executeTakeFirst();
    return Number(claimed.numUpdatedRows) > 0;
  }

  /** Graceful stop: the lease becomes a restart window in which other nodes may take its sessions over. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    if (this.settler) clearInterval(this.settler);
    this.timer = this.settler = undefined;
    await this.db
      .updateTable('nodes')
      .set({ stopped_at: sql<Date>`now()`, lease_until: sql<Date>`now() + make_interval(secs => ${RESTART_WINDOW_SECONDS})` })
      .where('id', '=', this.id)
      .execute()
      .catch(() => {});
  }
}

/**
 * NODE_URL's default: http://<HOST>:<port>, where a wildcard HOST (0.0.0.0, ::) becomes this
 * machine's first non-internal IPv4 address (a container's or pod's address), else 127.0.0.1.
 */
export function defaultNodeUrl(host: string, port: number): string {
  let address = host;
  if (host === '0.0.0.0' || host === '::' || host === '') {
    address = '127.0.0.1';
    for (const list of Object.values(os.networkInterfaces())) {
      const found = list?.find((a) => a.family === 'IPv4' && !a.internal);
      if (found) {
        address = found.address;
        break;
      }
    }
  }
  return `http://${address.includes(':') ? `[${address}]` : address}:${port}`;
}
