/**
 * Console sign-in (contract.md "Console"): one-time links made by `presence console-link` (and at
 * first start), and the sessions a link or a pasted API key is exchanged for. The browser holds
 * only the session's token, in an HttpOnly SameSite=Strict cookie; the server keeps its hash and
 * the permissions of what it came from. A cookie-authenticated request that changes something must
 * come from the console's own origin.
 */
import type { FastifyRequest } from 'fastify';
import type { Db } from '../core/db/database.js';
import { PERMISSIONS, type Permission, type Principal } from '../core/auth.js';
import { randomToken, sha256Hex } from '../core/secrets.js';
import { consoleErrors } from './errors.js';

export const SESSION_COOKIE = 'presence_console';
/** A sign-in lasts a working day; signing out ends it sooner. */
export const SESSION_SECONDS = 12 * 60 * 60;
export const DEFAULT_LINK_SECONDS = 600;
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{20,100}$/;

export interface ConsoleLink {
  url: string;
  account_id: number;
  expires_at: string;
}

export interface ConsoleSignIn {
  id: number;
  accountId: number;
  permissions: Permission[];
  keyId: number | null;
  expiresAt: Date;
}

const CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export class ConsoleSignIns {
  constructor(
    private readonly db: Db,
    private readonly publicUrl: () => string,
  ) {}

  /** The console's origin: a cookie-authenticated change must come with exactly this `Origin`. */
  origin(): string {
    return new URL(this.publicUrl()).origin;
  }

  /** A link that signs its opener in once, within `ttlSeconds`. */
  async createLink(accountId: number, ttlSeconds = DEFAULT_LINK_SECONDS): Promise<ConsoleLink> {
    const token = randomToken('', 32);
    const expires = new Date(Date.now() + ttlSeconds * 1000);
    await this.db
      .insertInto('console_links')
      .values({ account_id: accountId, token_hash: sha256Hex(token), expires_at: expires, used_at: null })
      .execute();
    return { url: `${this.publicUrl()}/console/login?token=${token}`, account_id: accountId, expires_at: expires.toISOString() };
  }

  /** Uses a link (once): a new sign-in with all four permissions. Unknown, used or expired: 401. */
  async signInWithLink(token: string): Promise<{ token: string; signIn: ConsoleSignIn }> {
    const used = TOKEN_SHAPE.test(token)
      ? await this.db
          .updateTable('console_links')
          .set({ used_at: new Date() })
          .where('token_hash', '=', sha256Hex(token))
          .where('used_at', 'is', null)
          .where('expires_at', '>', new Date())
          .returning('account_id')
          .executeTakeFirst()
      : undefined;
    if (!used) throw consoleErrors.invalid_link();
    return this.open(used.account_id, [...PERMISSIONS], null);
  }

  /** A sign-in with a key's permissions (the key was checked by the API's authenticator). */
  signInWithKey(principal: Principal): Promise<{ token: string; signIn: ConsoleSignIn }> {
    return this.open(
      principal.accountId,
      PERMISSIONS.filter((p) => principal.permissions.has(p)),
      principal.keyId,
    );
  }

  private async open(accountId: number, permissions: Permission[], keyId: number | null): Promise<{ token: string; signIn: ConsoleSignIn }> {
    const token = randomToken('', 32);
    const expiresAt = new Date(Date.now() + SESSION_SECONDS * 1000);
    const row = await this.db
      .insertInto('console_sessions')
      .values({ account_id: accountId, token_hash: sha256Hex(token), permissions, key_id: keyId, expires_at: expiresAt, ended_at: null })
      .returning('id')
      .executeTakeFirstOrThrow();
    return { token, signIn: { id: row.id, accountId, permissions, keyId, expiresAt } };
  }

  /** The live sign-in a cookie names, or undefined. */
  async find(token: string | undefined): Promise<ConsoleSignIn | undefined> {
    if (!token || !TOKEN_SHAPE.test(token)) return undefined;
    const row = await this.db
      .selectFrom('console_sessions')
      .select(['id', 'account_id', 'permissions', 'key_id', 'expires_at'])
      .where('token_hash', '=', sha256Hex(token))
      .where('ended_at', 'is', null)
      .where('expires_at', '>', new Date())
      .executeTakeFirst();
    return row
      ? { id: row.id, accountId: row.account_id, permissions: row.permissions as Permission[], keyId: row.key_id, expiresAt: new Date(row.expires_at) }
      : undefined;
  }

  /** Signing out: the session ends on the server (the cookie alone is worth nothing from now on). */
  async end(token: string | undefined): Promise<void> {
    if (!token || !TOKEN_SHAPE.test(token)) return;
    await this.db
      .updateTable('console_sessions')
      .set({ ended_at: new Date() })
      .where('token_hash', '=', sha256Hex(token))
      .where('ended_at', 'is', null)
      .execute();
  }

  /** A revoked key's sign-ins end with it. */
  async endForKey(keyId: number): Promise<void> {
    await this.db.updateTable('console_sessions').set({ ended_at: new Date() }).where('key_id', '=', keyId).where('ended_at', 'is', null).execute();
  }

  /**
   * The API's cookie authentication: no cookie, no principal (the Bearer check answers 401); a
   * cookie that is not a live sign-in: 401; a change from another origin: 403.
   */
  readonly authenticate = async (request: FastifyRequest): Promise<Principal | undefined> => {
    const token = readCookie(request.headers.cookie, SESSION_COOKIE);
    if (token === undefined) return undefined;
    const signIn = await this.find(token);
    if (!signIn) throw consoleErrors.invalid_api_key();
    if (CHANGING.has(request.method)) this.requireOwnOrigin(request);
    return { keyId: signIn.keyId, accountId: signIn.accountId, permissions: new Set(signIn.permissions), consoleSessionId: signIn.id };
  };

  /** 403 unless the request's Origin is the console's (a page elsewhere cannot act with the cookie). */
  requireOwnOrigin(request: FastifyRequest): void {
    if (request.headers.origin !== this.origin()) {
      throw consoleErrors.origin_not_allowed(`A signed-in console request that changes something must come from ${this.origin()}.`);
    }
  }
}

/** One cookie's value from a Cookie header. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** The Set-Cookie value for a sign-in (`Secure` when the console is served over https). */
export function sessionCookie(token: string, publicUrl: string, maxAgeSeconds = SESSION_SECONDS): string {
  const secure = publicUrl.startsWith('https:') ? '; Secure' : '';
  return `${SESSION_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure}`;
}
