/**
 * Sessions: starting one (every rule of the interface's session error table, in a documented
 * order), its lifecycle (stop, max duration, player never opened), and metering its seconds.
 * The live audio side of a session is the realtime capability's; this module owns the record.
 */
import crypto from 'node:crypto';
import { sql } from 'kysely';
import type { z } from 'zod';
import type { Db } from '../core/db/database.js';
import type { Config } from '../core/config.js';
import { randomToken, sha256Hex } from '../core/secrets.js';
import type { AccountStore } from '../accounts/accounts.js';
import type { AgentService } from '../agents/service.js';
import type { SessionsTable } from '../core/db/schema.js';
import type { SessionCreateRequest, SessionListQuery } from './schemas.js';
import { sessionsErrors } from './errors.js';

/** Serialises session starts deployment-wide so limits are counted without races. */
const START_LOCK = 7_143_001;

/** What a player key can look like (randomToken's base64url), with room to spare. */
const PLAYER_KEY = /^[A-Za-z0-9_-]{1,128}$/;

export type SessionRow = Omit<SessionsTable, 'look' | 'created_at' | 'visitor_id' | 'visitor' | 'idle_seconds' | 'last_active_at' | 'node_id'> & {
  look: SessionLook;
  created_at: Date;
  visitor_id: string | null;
  visitor: Record<string, string>;
  idle_seconds: number | null;
  last_active_at: Date | null;
  /** The node that carries the session (several nodes on PostgreSQL), else null. */
  node_id: string | null;
};
export interface SessionLook {
  backdrop: string | null;
  cameras: Array<'far' | 'mid' | 'close'>;
  camera: 'far' | 'mid' | 'close' | 'auto';
  face_light: number;
}

/** Who a session talks to, when the start knows (the public embed start). */
export interface SessionVisitor {
  /** A stable anonymous id per browser and site, or the site's own. */
  id: string | null;
  /** Verified visitor values (`{{visitor.<name>}}`). */
  values: Record<string, string>;
}

/** How a session started by a caller other than POST /v1/sessions differs (the LiveAvatar routes). */
export interface SessionStartOptions {
  /** The session's id, already handed out (a LiveAvatar token carries it). */
  id?: string;
  /** End after this many seconds without activity (`touch`) instead of the player-open timeout. */
  idleSeconds?: number;
  /** A shorter max duration than the plan's (never longer). */
  maxSessionSeconds?: number;
  /** The player key, already handed out (a LiveAvatar token's player_url). */
  playerKey?: string;
}

/** How often an active session's `last_active_at` is written at most (the in-process timer is exact). */
const ACTIVITY_WRITE_MS = 5_000;

export interface SessionHooks {
  /** The live side of a new session (realtime hub). */
  opened(session: SessionRow): void;
  /** The session ended: close its sockets. */
  ended(session: SessionRow, reason: string): void;
  /**
   * About to end the session, before its end time is taken; `notEnded` follows when it was not
   * active after all. Billing stops counting running seconds in between, so a charging step cannot
   * count time past the end the session records.
   */
  ending?(sessionId: string): void;
  notEnded?(sessionId: string): void;
  /** Whether the agent's knowledge is being built (conversation starts answer 409 agent_building). */
  building(agentId: number): Promise<boolean>;
}

export class SessionService {
  private timers = new Map<string, NodeJS.Timeout[]>();
  /** Idle-lifetime sessions watched here: when each was last active, and when that was last written. */
  private readonly activity = new Map<string, { at: number; written: number; idleMs: number }>();
  private sweeper?: NodeJS.Timeout;
  hooks: SessionHooks = { opened: () => {}, ended: () => {}, building: async () => false };
  /**
   * A draining node (SIGUSR2, before an upgrade) starts no new sessions while its live ones finish;
   * the balancer sees /readyz answer 503 and sends new requests to the other nodes.
   */
  draining = false;
  /** This node's id when several nodes share PostgreSQL (nodes.ts): recorded as each session's owner. */
  nodeId: string | null = null;
  /** Sessions being ended here right now (their live side closes through `end`, not `settleEndedElsewhere`). */
  private readonly endingHere = new Set<string>();

  constructor(
    private readonly db: Db,
    private readonly config: Config,
    private readonly accounts: AccountStore,
    private readonly agents: AgentService,
  ) {}

  /**
   * Starts a session. Checks run in this order (docs/decisions.md, "Session start checks"):
   * agent_not_found, agent_inactive, unknown_avatar, paid_feature, unknown_voice,
   * voice_face_mismatch, invalid_look, insufficient_balance / free_minutes_exhausted,
   * agent_building, no_capacity (a draining node), then under a lock: free_concurrency,
   * concurrency_limit, no_capacity.
   */
  async start(
    accountId: number,
    input: z.output<typeof SessionCreateRequest>,
    visitor?: SessionVisitor,
    options: SessionStartOptions = {},
  ): Promise<{ row: SessionRow; token: string }> {
    const agent = await this.agents.get(accountId, input.agent_id);
    if (agent.status !== 'active') throw sessionsErrors.agent_inactive(`Agent ${agent.id} is inactive; PATCH its status to active to start sessions`);
    const account = await this.accounts.require(accountId);
    const avatarId = input.avatar_id ?? agent.avatar_id;
    const voiceId = input.voice_id ?? agent.voice_id;
    await this.agents.syncFace(avatarId);
    const voice = this.agents.checkVoiceAndFace(account, agent.tts_primary, voiceId, avatarId, true);
    const look = {
      backdrop: input.look?.backdrop !== undefined ? input.look.backdrop : agent.studio.backdrop,
      cameras: input.look?.cameras ?? agent.studio.cameras,
      camera: input.look?.camera ?? 'auto',
      face_light: input.look?.face_light ?? agent.studio.face_light,
    };
    // Names are checked here (422 invalid_look), so the narrower SessionLook type holds after it.
    this.agents.checkLook(look);

    if (account.plan === 'paid') {
      if (Number(account.balance) <= 0) throw sessionsErrors.insufficient_balance();
    } else if ((await this.secondsUsedThisMonth(accountId)) >= this.config.freeMonthlySeconds) {
      throw sessionsErrors.free_minutes_exhausted(
        `The free plan's ${Math.round(this.config.freeMonthlySeconds / 60)} session minutes for this month are used up`,
      );
    }
    if (input.mode === 'conversation' && (await this.hooks.building(agent.id))) {
      throw sessionsErrors.agent_building();
    }

    if (this.draining) {
      throw sessionsErrors.no_capacity('This node is draining for maintenance; try again shortly', { 'Retry-After': '5' });
    }
    const token = randomToken('st_', 32);
    const id = options.id ?? crypto.randomUUID();
    const planMax = account.plan === 'free' ? this.config.freeSessionSeconds : null;
    const maxSeconds =
      options.maxSessionSeconds === undefined ? planMax : planMax === null ? options.maxSessionSeconds : Math.min(planMax, options.maxSessionSeconds);
    const row = await this.db.transaction().execute(async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(${START_LOCK})`.execute(trx);
      const counts = await trx
        .selectFrom('sessions')
        .select([
          sql<number>`count(*)`.as('total'),
          sql<number>`count(*) FILTER (WHERE agent_id = ${agent.id})`.as('agent'),
          sql<number>`count(*) FILTER (WHERE account_id = ${accountId})`.as('account'),
        ])
        .where('status', '=', 'active')
        .executeTakeFirstOrThrow();
      if (account.plan === 'free' && Number(counts.account) >= 1) {
        throw sessionsErrors.free_concurrency();
      }
      if (Number(counts.agent) >= agent.concurrency_limit) {
        throw sessionsErrors.concurrency_limit(`Agent ${agent.id} already has ${agent.concurrency_limit} session(s) running (its concurrency_limit)`);
      }
      if (Number(counts.total) >= this.config.sessionCapacity) {
        throw sessionsErrors.no_capacity('Every avatar is busy; try again shortly', { 'Retry-After': '5' });
      }
      return trx
        .insertInto('sessions')
        .values({
          id,
          account_id: accountId,
          agent_id: agent.id,
          mode: input.mode,
          status: 'active',
          avatar_id: avatarId,
          voice_id: voice.voice_id,
          voice_provider: voice.provider,
          look: JSON.stringify(look),
          player_key: options.playerKey ?? randomToken('', 24),
          token_hash: sha256Hex(token),
          max_session_seconds: maxSeconds,
          idle_seconds: options.idleSeconds ?? null,
          last_active_at: options.idleSeconds ? new Date() : null,
          created_at: new Date(),
          visitor_id: visitor?.id ?? null,
          visitor: JSON.stringify(visitor?.values ?? {}),
          node_id: this.nodeId,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
    });
    const session = row as unknown as SessionRow;
    this.watch(session);
    this.hooks.opened(session);
    return { row: session, token };
  }

  /** Timers that end the session at max_session_seconds and if its player is never opened. */
  private watch(session: SessionRow): void {
    const timers: NodeJS.Timeout[] = [];
    const age = Date.now() - new Date(session.created_at).getTime();
    if (session.max_session_seconds !== null) {
      timers.push(setTimeout(() => void this.end(session.id, 'max_duration'), Math.max(0, session.max_session_seconds * 1000 - age)));
    }
    if (session.idle_seconds) {
      const idleMs = session.idle_seconds * 1000;
      this.activity.set(session.id, { at: Date.now(), written: Date.now(), idleMs });
      timers.push(setTimeout(() => void this.endIfIdle(session.id), idleMs));
    } else if (!session.player_opened_at) {
      timers.push(setTimeout(() => void this.endIfPlayerNeverOpened(session.id), Math.max(0, this.config.playerOpenSeconds * 1000 - age)));
    }
    for (const t of timers) t.unref();
    this.timers.set(session.id, timers);
  }

  private async endIfPlayerNeverOpened(id: string): Promise<void> {
    const row = await this.db.selectFrom('sessions').select(['player_opened_at', 'status']).where('id', '=', id).executeTakeFirst();
    if (row && row.status === 'active' && !row.player_opened_at) await this.end(id, 'player_timeout');
  }

  /**
   * An idle-lifetime session was used (a socket command, a keep-alive): its idle clock starts
   * again. Cheap enough per message: a map write, and a database write every few seconds at most.
   */
  touch(id: string): void {
    const entry = this.activity.get(id);
    if (!entry) {
      // Watched by another node (or before a restart): its sweep reads the time written here.
      void this.db
        .updateTable('sessions')
        .set({ last_active_at: new Date() })
        .where('id', '=', id)
        .where('status', '=', 'active')
        .where('idle_seconds', 'is not', null)
        .execute()
        .catch(() => {});
      return;
    }
    const now = Date.now();
    entry.at = now;
    if (now - entry.written < ACTIVITY_WRITE_MS) return;
    entry.written = now;
    void this.db
      .updateTable('sessions')
      .set({ last_active_at: new Date(now) })
      .where('id', '=', id)
      .where('status', '=', 'active')
      .execute()
      .catch(() => {});
  }

  /** Whether this node watches the session's idle clock (it started it here). */
  watchesActivity(id: string): boolean {
    return this.activity.has(id);
  }

  /** The idle timer fired: end the session, or wait for the rest of its idle time. */
  private async endIfIdle(id: string): Promise<void> {
    const entry = this.activity.get(id);
    if (!entry) return;
    const left = entry.at + entry.idleMs - Date.now();
    if (left > 0) {
      const timer = setTimeout(() => void this.endIfIdle(id), left);
      timer.unref();
      this.timers.get(id)?.push(timer);
      return;
    }
    await this.end(id, 'idle_timeout');
  }

  async markPlayerOpened(id: string): Promise<void> {
    await this.db.updateTable('sessions').set({ player_opened_at: new Date() }).where('id', '=', id).where('player_opened_at', 'is', null).execute();
  }

  /** Ends an active session (idempotent), records its duration and metered seconds. */
  async end(id: string, reason: string): Promise<SessionRow | undefined> {
    this.hooks.ending?.(id);
    this.endingHere.add(id);
    let row: Awaited<ReturnType<typeof this.endRow>>;
    try {
      row = await this.endRow(id, reason);
    } finally {
      this.endingHere.delete(id);
      if (!row) this.hooks.notEnded?.(id);
    }
    for (const t of this.timers.get(id) ?? []) clearTimeout(t);
    this.timers.delete(id);
    this.activity.delete(id);
    if (row) this.hooks.ended(row as unknown as SessionRow, reason);
    return row as unknown as SessionRow | undefined;
  }

  private endRow(id: string, reason: string) {
    return this.db.transaction().execute(async (trx) => {
      const ended = await trx
        .updateTable('sessions')
        .set({
          status: 'ended',
          ended_at: sql`now()`,
          end_reason: reason,
          duration_seconds: sql`GREATEST(0, EXTRACT(EPOCH FROM (now() - created_at)))::double precision`,
        })
        .where('id', '=', id)
        .where('status', '=', 'active')
        .returningAll()
        .executeTakeFirst();
      if (ended) {
        await trx
          .insertInto('usage_records')
          .values({
            account_id: ended.account_id,
            agent_id: ended.agent_id,
            session_id: ended.id,
            voice_provider: ended.voice_provider,
            seconds: Number(ended.duration_seconds ?? 0),
            month: new Date(ended.created_at).toISOString().slice(0, 7),
          })
          .execute();
      }
      return ended;
    });
  }

  async secondsUsedThisMonth(accountId: number): Promise<number> {
    const month = new Date().toISOString().slice(0, 7);
    const ended = await this.db
      .selectFrom('usage_records')
      .select(sql<number>`COALESCE(SUM(seconds), 0)`.as('s'))
      .where('account_id', '=', accountId)
      .where('month', '=', month)
      .executeTakeFirstOrThrow();
    const running = await this.db
      .selectFrom('sessions')
      .select(sql<number>`COALESCE(SUM(EXTRACT(EPOCH FROM (now() - created_at))), 0)`.as('s'))
      .where('account_id', '=', accountId)
      .where('status', '=', 'active')
      .executeTakeFirstOrThrow();
    return Number(ended.s) + Number(running.s);
  }

  async get(accountId: number, id: string): Promise<SessionRow> {
    const row = await this.db.selectFrom('sessions').selectAll().where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
    if (!row) throw sessionsErrors.session_not_found(`No session ${id} in this account`);
    return row as unknown as SessionRow;
  }

  async list(accountId: number, query: z.output<typeof SessionListQuery>): Promise<SessionRow[]> {
    let q = this.db.selectFrom('sessions').selectAll().where('account_id', '=', accountId);
    if (query.status) q = q.where('status', '=', query.status);
    if (query.agent_id) q = q.where('agent_id', '=', query.agent_id);
    const rows = await q.orderBy('created_at', 'desc').orderBy('id').limit(query.limit).offset(query.offset).execute();
    return rows as unknown as SessionRow[];
  }

  async stop(accountId: number, id: string): Promise<SessionRow> {
    await this.get(accountId, id);
    await this.end(id, 'stopped');
    return this.get(accountId, id);
  }

  /** The active session a render token opens, if the token is right. */
  async byToken(id: string, token: string): Promise<SessionRow | undefined> {
    const row = await this.db
      .selectFrom('sessions')
      .selectAll()
      .where('id', '=', id)
      .where('token_hash', '=', sha256Hex(token))
      .where('status', '=', 'active')
      .executeTakeFirst();
    return row as unknown as SessionRow | undefined;
  }

  async byPlayerKey(playerKey: string): Promise<SessionRow | undefined> {
    // Keys are base64url (randomToken): anything else is no link, and NUL bytes never reach SQL.
    if (!PLAYER_KEY.test(playerKey)) return undefined;
    const row = await this.db.selectFrom('sessions').selectAll().where('player_key', '=', playerKey).executeTakeFirst();
    return row as unknown as SessionRow | undefined;
  }

  /** Of these session ids, the ended ones (for records that follow sessions, after a restart). */
  async endedRecords(ids: string[]): Promise<SessionRow[]> {
    if (!ids.length) return [];
    const rows = await this.db.selectFrom('sessions').selectAll().where('id', 'in', ids).where('status', '=', 'ended').execute();
    return rows as unknown as SessionRow[];
  }

  async endAllForAgent(agentId: number, reason: string): Promise<void> {
    const rows = await this.db.selectFrom('sessions').select('id').where('agent_id', '=', agentId).where('status', '=', 'active').execute();
    for (const r of rows) await this.end(r.id, reason);
  }

  /**
   * Start-up and periodic sweep: sessions whose deadline passed while no timer watched them
   * (e.g. across a restart) are ended. With the embedded database this node is the only one, so
   * sessions left active by a previous run have lost their sockets and end at once.
   */
  async recover(singleNode: boolean): Promise<void> {
    if (singleNode) {
      const stale = await this.db.selectFrom('sessions').select('id').where('status', '=', 'active').execute();
      for (const s of stale) await this.end(s.id, 'server_restart');
    }
    const sweep = async () => {
      const overdue = await this.db
        .selectFrom('sessions')
        .select(['id', 'player_opened_at', 'idle_seconds', 'max_session_seconds', 'created_at'])
        .where('status', '=', 'active')
        .where((eb) =>
          eb.or([
            eb.and([eb('max_session_seconds', 'is not', null), sql<boolean>`created_at + make_interval(secs => max_session_seconds) < now()`]),
            eb.and([
              eb('idle_seconds', 'is', null),
              eb('player_opened_at', 'is', null),
              sql<boolean>`created_at + make_interval(secs => ${this.config.playerOpenSeconds}) < now()`,
            ]),
            // Idle sessions this node does not watch (started before a restart, or on another node).
            eb.and([
              eb('idle_seconds', 'is not', null),
              sql<boolean>`COALESCE(last_active_at, created_at) + make_interval(secs => idle_seconds + ${ACTIVITY_WRITE_MS / 1000}) < now()`,
            ]),
          ]),
        )
        .execute();
      for (const s of overdue) {
        if (s.idle_seconds !== null && this.activity.has(s.id)) continue; // its own timer decides
        const pastMax = s.max_session_seconds !== null && new Date(s.created_at).getTime() + s.max_session_seconds * 1000 < Date.now();
        await this.end(s.id, pastMax ? 'max_duration' : s.idle_seconds !== null ? 'idle_timeout' : s.player_opened_at ? 'max_duration' : 'player_timeout');
      }
    };
    await sweep();
    this.sweeper = setInterval(() => void sweep().catch(() => {}), 10_000);
    this.sweeper.unref();
  }

  /**
   * A session this node took over from a node that stopped (nodes.ts `claim`): its timers run here
   * from now on, as if it had started here.
   */
  async adoptById(id: string): Promise<SessionRow | undefined> {
    const row = (await this.db.selectFrom('sessions').selectAll().where('id', '=', id).where('status', '=', 'active').executeTakeFirst()) as unknown as
      | SessionRow
      | undefined;
    if (row && !this.timers.has(row.id)) this.watch(row);
    return row;
  }

  /**
   * Several nodes: sessions carried here that another node ended (a stop or a billing end that
   * reached another node, or this node was taken for lost) close their live side here; the records
   * were settled by the node that ended them, and settling again is a no-op.
   */
  async settleEndedElsewhere(): Promise<void> {
    const ids = [...this.timers.keys()].filter((id) => !this.endingHere.has(id));
    if (!ids.length) return;
    const ended = await this.db.selectFrom('sessions').selectAll().where('id', 'in', ids).where('status', '=', 'ended').execute();
    for (const row of ended) {
      if (this.endingHere.has(row.id) || !this.timers.has(row.id)) continue;
      for (const t of this.timers.get(row.id) ?? []) clearTimeout(t);
      this.timers.delete(row.id);
      this.activity.delete(row.id);
      this.hooks.ended(row as unknown as SessionRow, row.end_reason ?? 'ended');
    }
  }

  /** Sessions this process started (or recovered) that have not ended: what a draining node waits for. */
  liveHere(): number {
    return this.timers.size;
  }

  stopTimers(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    for (const timers of this.timers.values()) for (const t of timers) clearTimeout(t);
    this.timers.clear();
  }
}
