/**
 * The LiveAvatar-compatible session lifecycle (contract.md, "LiveAvatar-compatible session
 * routes"): a business's server mints a session token with its API key; HeyGen's web SDK starts,
 * keeps alive and stops the session with it. A start makes a render-mode session exactly as
 * POST /v1/sessions does (through `hooks.startSession`), under the token's session id, with an idle
 * lifetime instead of the player-open timeout. This room owns only its token table.
 */
import crypto from 'node:crypto';
import type { Db } from '../core/db/database.js';
import { randomToken } from '../core/secrets.js';
import { SessionTokens, type StartSessionData } from './tokens.js';
import { liveavatarErrors } from './errors.js';

export interface LiveAvatarHooks {
  /** The account's agent named by `avatar_id` (its id as digits, or its liveavatar_avatar_id). */
  agentFor(accountId: number, avatarId: string): Promise<{ id: number } | undefined>;
  /** Starts the render-mode session (every check of POST /v1/sessions applies). */
  startSession(
    accountId: number,
    agentId: number,
    options: { id: string; idleSeconds: number; maxSessionSeconds?: number; playerKey: string },
  ): Promise<{ renderToken: string; maxSessionSeconds: number | null }>;
  /** A session's state, if it exists in the account. */
  session(accountId: number, sessionId: string): Promise<{ status: 'active' | 'ended' } | undefined>;
  endSession(sessionId: string, reason: string): Promise<void>;
  /** The session was used: its idle clock starts again. */
  touch(sessionId: string): void;
}

export interface LiveAvatarSettings {
  /** PUBLIC_URL, read when an answer is made. */
  publicUrl: () => string;
  tokenSeconds: number;
  idleSeconds: number;
}

/** What a player key can look like (randomToken's base64url). */
const PLAYER_KEY = /^[A-Za-z0-9_-]{1,128}$/;

/** Fields of LiveAvatar's token body that Presence reads; others are named in `warnings`. */
const READ_FIELDS = new Set(['mode', 'avatar_id', 'max_session_duration']);
/** Tokens kept after their start window (for stop and keep-alive of their sessions' lifetime). */
const TOKEN_ROWS_KEPT_DAYS = 30;

export const FULL_MODE_MESSAGE =
  'Presence serves LiveAvatar LITE; for a managed conversation start a conversation-mode session (POST /v1/sessions) and show its player_url.';

/** Who calls keep-alive or stop: the session token's holder, or an API key naming the session. */
export type Caller = { kind: 'token'; token: string } | { kind: 'key'; accountId: number; sessionId: string };

export class LiveAvatarService {
  private readonly tokens: SessionTokens;

  constructor(
    private readonly db: Db,
    secret: string,
    private readonly hooks: LiveAvatarHooks,
    private readonly settings: LiveAvatarSettings,
  ) {
    this.tokens = new SessionTokens(secret);
  }

  private playerUrl(playerKey: string): string {
    return `${this.settings.publicUrl()}/p/${playerKey}`;
  }

  /** POST /v1/sessions/token. */
  async mint(
    accountId: number,
    body: Record<string, unknown>,
  ): Promise<{ session_id: string; session_token: string; player_url: string; warnings?: string[] }> {
    if (body.mode !== 'LITE') throw liveavatarErrors.mode_not_supported(FULL_MODE_MESSAGE);
    const avatarId = String(body.avatar_id);
    const agent = await this.hooks.agentFor(accountId, avatarId);
    if (!agent) throw liveavatarErrors.agent_not_found(`No agent with id or liveavatar_avatar_id ${JSON.stringify(avatarId.slice(0, 100))} in this account`);
    const maxSeconds = typeof body.max_session_duration === 'number' ? body.max_session_duration : undefined;
    const sessionId = crypto.randomUUID();
    const playerKey = randomToken('', 24);
    await this.db
      .insertInto('liveavatar_tokens')
      .values({ session_id: sessionId, account_id: accountId, agent_id: agent.id, player_key: playerKey, max_session_seconds: maxSeconds ?? null })
      .execute();
    await this.forgetOld();
    const data: StartSessionData = { mode: 'LITE', avatar_id: avatarId, ...(maxSeconds !== undefined && { max_session_duration: maxSeconds }) };
    const token = await this.tokens.mint({ session_id: sessionId, start_session_data: data });
    const ignored = Object.keys(body).filter((k) => !READ_FIELDS.has(k));
    return {
      session_id: sessionId,
      session_token: token,
      player_url: this.playerUrl(playerKey),
      ...(ignored.length && { warnings: ignored.slice(0, 20).map((k) => `${k.slice(0, 60)} is not used by Presence`) }),
    };
  }

  /** POST /v1/sessions/start. */
  async start(token: string): Promise<{ session_id: string; ws_url: string; max_session_duration: number | null; player_url: string }> {
    const row = await this.tokenRow(token);
    if (row.stopped_at) throw sessionEnded();
    if (row.started_at) {
      const state = await this.hooks.session(row.account_id, row.session_id);
      throw state?.status === 'active' ? liveavatarErrors.session_already_started() : sessionEnded();
    }
    if (new Date(row.created_at).getTime() + this.settings.tokenSeconds * 1000 < Date.now()) {
      throw liveavatarErrors.token_expired(`A session token starts its session within ${this.settings.tokenSeconds} seconds of being made; make a new one`);
    }
    // Claimed before the session starts, so two starts at once cannot both start it.
    const claimed = await this.db
      .updateTable('liveavatar_tokens')
      .set({ started_at: new Date() })
      .where('session_id', '=', row.session_id)
      .where('started_at', 'is', null)
      .where('stopped_at', 'is', null)
      .returning('session_id')
      .executeTakeFirst();
    if (!claimed) throw liveavatarErrors.session_already_started();
    let started: { renderToken: string; maxSessionSeconds: number | null };
    try {
      started = await this.hooks.startSession(row.account_id, row.agent_id, {
        id: row.session_id,
        idleSeconds: this.settings.idleSeconds,
        ...(row.max_session_seconds !== null && { maxSessionSeconds: row.max_session_seconds }),
        playerKey: row.player_key,
      });
    } catch (error) {
      // Refused (no capacity, balance, …): the token may try again.
      await this.db.updateTable('liveavatar_tokens').set({ started_at: null }).where('session_id', '=', row.session_id).execute();
      throw error;
    }
    const wsBase = this.settings.publicUrl().replace(/^http/, 'ws');
    return {
      session_id: row.session_id,
      ws_url: `${wsBase}/v1/sessions/${row.session_id}/render?token=${started.renderToken}`,
      max_session_duration: started.maxSessionSeconds,
      player_url: this.playerUrl(row.player_key),
    };
  }

  /** POST /v1/sessions/keep-alive. */
  async keepAlive(caller: Caller): Promise<void> {
    const { accountId, sessionId, started } = await this.target(caller);
    if (!started) throw liveavatarErrors.session_not_started();
    const state = await this.hooks.session(accountId, sessionId);
    if (state?.status !== 'active') throw sessionEnded();
    this.hooks.touch(sessionId);
  }

  /** POST /v1/sessions/stop and DELETE /v1/sessions: idempotent. The session ends `stopped`, as every stop does. */
  async stop(caller: Caller): Promise<void> {
    const { accountId, sessionId, started } = await this.target(caller);
    if (!started) {
      await this.db
        .updateTable('liveavatar_tokens')
        .set({ stopped_at: new Date() })
        .where('session_id', '=', sessionId)
        .where('stopped_at', 'is', null)
        .execute();
      return;
    }
    const state = await this.hooks.session(accountId, sessionId);
    if (state?.status === 'active') await this.hooks.endSession(sessionId, 'stopped');
  }

  /** A player key handed out with a token whose session has not started: its page waits. */
  async pendingPlayer(playerKey: string): Promise<{ agentId: number; accountId: number } | undefined> {
    // Keys are randomToken's base64url: anything else is no link (and never reaches SQL).
    if (!PLAYER_KEY.test(playerKey)) return undefined;
    const row = await this.db
      .selectFrom('liveavatar_tokens')
      .select(['agent_id', 'account_id', 'created_at', 'started_at', 'stopped_at'])
      .where('player_key', '=', playerKey)
      .executeTakeFirst();
    // Claimed (started_at) but its session not written yet still counts: the claim commits first,
    // and a page reading in between would otherwise be refused (4004) on a busy server.
    if (!row || row.stopped_at) return undefined;
    if (new Date(row.created_at).getTime() + this.settings.tokenSeconds * 1000 < Date.now()) return undefined;
    return { agentId: row.agent_id, accountId: row.account_id };
  }

  private async tokenRow(token: string) {
    const claims = await this.tokens.verify(token);
    const row = claims && (await this.db.selectFrom('liveavatar_tokens').selectAll().where('session_id', '=', claims.session_id).executeTakeFirst());
    if (!row) throw invalidToken();
    return row;
  }

  private async target(caller: Caller): Promise<{ accountId: number; sessionId: string; started: boolean }> {
    if (caller.kind === 'token') {
      const row = await this.tokenRow(caller.token);
      return { accountId: row.account_id, sessionId: row.session_id, started: row.started_at !== null };
    }
    const row = await this.db
      .selectFrom('liveavatar_tokens')
      .select(['started_at'])
      .where('session_id', '=', caller.sessionId)
      .where('account_id', '=', caller.accountId)
      .executeTakeFirst();
    if (row) return { accountId: caller.accountId, sessionId: caller.sessionId, started: row.started_at !== null };
    // Any of the account's sessions may be stopped or kept alive with a key.
    if (!(await this.hooks.session(caller.accountId, caller.sessionId)))
      throw liveavatarErrors.session_not_found(`No session ${caller.sessionId} in this account`);
    return { accountId: caller.accountId, sessionId: caller.sessionId, started: true };
  }

  /** Token rows go a while after their start window (their sessions have their own records). */
  private async forgetOld(): Promise<void> {
    if (Math.random() > 0.01) return;
    await this.db
      .deleteFrom('liveavatar_tokens')
      .where('created_at', '<', new Date(Date.now() - TOKEN_ROWS_KEPT_DAYS * 86_400_000))
      .execute();
  }
}

const invalidToken = () =>
  liveavatarErrors.invalid_session_token('Missing or invalid session token. Send "Authorization: Bearer <session_token>" from POST /v1/sessions/token.', {
    'WWW-Authenticate': 'Bearer',
  });
const sessionEnded = () => liveavatarErrors.session_ended();
