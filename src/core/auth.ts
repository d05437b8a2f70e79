/**
 * API-key authentication and the contract's permission map, enforced on every /v1 route before
 * validation runs (so a caller without rights learns nothing about the route's body).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { sha256Hex } from './secrets.js';
import type { RateLimiter } from './rate-limit.js';
import { coreErrors } from './error-codes.js';

export const PERMISSIONS = ['read', 'setup', 'sessions', 'delete'] as const;
export type Permission = (typeof PERMISSIONS)[number];

export const API_KEY_PREFIX = 'sk_live_';
const KEY_SHAPE = /^sk_live_[A-Za-z0-9_-]{16,128}$/;

export interface Principal {
  /** The API key behind the request (a console sign-in made with a key carries it too); null for a sign-in link's. */
  keyId: number | null;
  accountId: number;
  permissions: ReadonlySet<Permission>;
  /** Set when the request came with the console's session cookie rather than a Bearer key. */
  consoleSessionId?: number;
}

/** The console's cookie sign-in (src/console): the principal of a request without a Bearer key, if its cookie is a live session. */
export type CookieAuthenticator = (request: FastifyRequest) => Promise<Principal | undefined>;

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
  }
}

export interface KeyLookup {
  /** The live key with this hash, or undefined. */
  findByHash(hash: string): Promise<{ id: number; accountId: number; permissions: Permission[] } | undefined>;
  /** Records a key's use (GET /v1/keys shows `last_used_at`). */
  touchKey?(keyId: number): Promise<void>;
}

/** How often a key's `last_used_at` is written at most: once a minute keeps writes off the hot path. */
const TOUCH_INTERVAL_MS = 60_000;

/** Which permission a /v1 route needs (contract.md, Permissions). */
export function requiredPermission(method: string, path: string): Permission {
  if (path === '/v1/sessions' || path.startsWith('/v1/sessions/') || path.startsWith('/v1/sessions?')) return 'sessions';
  if (method === 'DELETE') return 'delete';
  if (method === 'GET' || method === 'HEAD') return 'read';
  return 'setup';
}

/** Routes whose answer is a secret: `setup`'s to see, as well as the method's own permission (contract.md). */
const SECRET_ROUTES = new Set(['/v1/agent/:agent_id/visitor-values/secret']);

/** Whether a principal may see secrets in answers (a webhook's whsec_…): keys with `setup` only; others get them masked. */
export function canSeeSecrets(principal: Principal | undefined): boolean {
  return principal?.permissions.has('setup') ?? false;
}

const invalidKey = () => coreErrors.invalid_api_key({ 'WWW-Authenticate': 'Bearer' });

/**
 * Keys are looked up by hash; a short-lived in-process cache keeps the database off the hot path
 * (revocation takes effect within `cacheMs`).
 */
export class ApiKeyAuthenticator {
  private cache = new Map<string, { principal: Principal | null; expires: number }>();
  private touched = new Map<number, number>();

  constructor(
    private readonly keys: KeyLookup,
    private readonly cacheMs = 10_000,
  ) {}

  async authenticate(header: string | undefined): Promise<Principal> {
    const match = header?.match(/^Bearer\s+(\S+)\s*$/i);
    const key = match?.[1];
    if (!key || !KEY_SHAPE.test(key)) throw invalidKey();
    const hash = sha256Hex(key);
    const now = Date.now();
    const cached = this.cache.get(hash);
    let principal: Principal | null;
    if (cached && cached.expires > now) {
      principal = cached.principal;
    } else {
      const found = await this.keys.findByHash(hash);
      principal = found ? { keyId: found.id, accountId: found.accountId, permissions: new Set(found.permissions) } : null;
      if (this.cache.size > 10_000) this.cache.clear();
      this.cache.set(hash, { principal, expires: now + this.cacheMs });
    }
    if (!principal) throw invalidKey();
    await this.touch(principal.keyId!, now);
    return principal;
  }

  /**
   * Writes `last_used_at` when this key's last write here is over a minute old (awaited, so the
   * next read shows it; one write a minute per key); a failed write is tried again at the next use.
   */
  async touch(keyId: number, now = Date.now()): Promise<void> {
    if (!this.keys.touchKey || (this.touched.get(keyId) ?? 0) > now - TOUCH_INTERVAL_MS) return;
    if (this.touched.size > 10_000) this.touched.clear();
    this.touched.set(keyId, now);
    await this.keys.touchKey(keyId).catch(() => this.touched.delete(keyId));
  }

  forget(): void {
    this.cache.clear();
  }

  /** A revoked key answers 401 from now on in this process (not after the cache's lifetime). */
  forgetKey(keyId: number): void {
    for (const [hash, entry] of this.cache) if (entry.principal?.keyId === keyId) this.cache.delete(hash);
  }
}

/**
 * The path as the router understood it: the matched route's pattern, else the percent-decoded
 * path. The raw URL is not enough: the router decodes `%73essions` to `sessions`, so a check on
 * the raw text could be passed by spelling a path differently.
 */
function routedPath(request: FastifyRequest): string {
  const pattern = request.routeOptions.url;
  if (pattern) return pattern;
  const raw = request.url.split('?')[0];
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

export function registerApiAuth(app: FastifyInstance, authenticator: ApiKeyAuthenticator, limiter: RateLimiter, cookie?: CookieAuthenticator): void {
  app.decorateRequest('principal', null as unknown as Principal);
  app.addHook('onRequest', async (request: FastifyRequest) => {
    const path = routedPath(request);
    if (!path.startsWith('/v1/') || request.routeOptions.config?.public) return;
    // A Bearer key wins; without one, the console's session cookie (which checks the Origin itself).
    const fromCookie = request.headers.authorization === undefined && cookie ? await cookie(request) : undefined;
    const principal = fromCookie ?? (await authenticator.authenticate(request.headers.authorization));
    // Sign-ins share their key's budget; a link's sign-in has its own (negative ids never meet key ids).
    const wait = limiter.take(principal.keyId ?? -(principal.consoleSessionId ?? 0));
    if (wait > 0) {
      throw coreErrors.rate_limited({ 'Retry-After': String(Math.ceil(wait)) });
    }
    const needed = requiredPermission(request.method, path);
    if (!principal.permissions.has(needed)) {
      throw coreErrors.missing_permission(`This API key lacks the "${needed}" permission needed for ${request.method} ${path}.`);
    }
    if (SECRET_ROUTES.has(path) && !canSeeSecrets(principal)) {
      throw coreErrors.missing_permission(`This API key lacks the "setup" permission needed to see secrets (${request.method} ${path}).`);
    }
    if (request.method === 'DELETE' && (request.query as Record<string, unknown>)?.confirm !== 'true') {
      throw coreErrors.confirmation_required();
    }
    request.principal = principal;
  });
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Routes under /v1 that need no API key (e.g. the public embed start). */
    public?: boolean;
  }
}
