/**
 * API-key authentication and the contract's permission map, enforced on every /v1 route before
 * validation runs (so a caller without rights learns nothing about the route's body).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from './errors.js';
import { sha256Hex } from './secrets.js';
import { RateLimiter } from './rate-limit.js';

export const PERMISSIONS = ['read', 'setup', 'sessions', 'delete'] as const;
export type Permission = (typeof PERMISSIONS)[number];

export const API_KEY_PREFIX = 'sk_live_';
const KEY_SHAPE = /^sk_live_[A-Za-z0-9_-]{16,128}$/;

export interface Principal {
  keyId: number;
  accountId: number;
  permissions: ReadonlySet<Permission>;
}

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
  }
}

export interface KeyLookup {
  /** The live key with this hash, or undefined. */
  findByHash(hash: string): Promise<{ id: number; accountId: number; permissions: Permission[] } | undefined>;
}

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

const invalidKey = () => new ApiError(401, 'invalid_api_key', 'Missing or invalid API key. Send "Authorization: Bearer sk_live_...".', { 'WWW-Authenticate': 'Bearer' });

/**
 * Keys are looked up by hash; a short-lived in-process cache keeps the database off the hot path
 * (revocation takes effect within `cacheMs`).
 */
export class ApiKeyAuthenticator {
  private cache = new Map<string, { principal: Principal | null; expires: number }>();

  constructor(private readonly keys: KeyLookup, private readonly cacheMs = 10_000) {}

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
    return principal;
  }

  forget(): void {
    this.cache.clear();
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

export function registerApiAuth(app: FastifyInstance, authenticator: ApiKeyAuthenticator, limiter: RateLimiter): void {
  app.decorateRequest('principal', null as unknown as Principal);
  app.addHook('onRequest', async (request: FastifyRequest) => {
    const path = routedPath(request);
    if (!path.startsWith('/v1/') || request.routeOptions.config?.public) return;
    const principal = await authenticator.authenticate(request.headers.authorization);
    const wait = limiter.take(principal.keyId);
    if (wait > 0) {
      throw new ApiError(429, 'rate_limited', 'Too many requests for this API key; retry later.', { 'Retry-After': String(Math.ceil(wait)) });
    }
    const needed = requiredPermission(request.method, path);
    if (!principal.permissions.has(needed)) {
      throw new ApiError(403, 'missing_permission', `This API key lacks the "${needed}" permission needed for ${request.method} ${path}.`);
    }
    if (SECRET_ROUTES.has(path) && !canSeeSecrets(principal)) {
      throw new ApiError(403, 'missing_permission', `This API key lacks the "setup" permission needed to see secrets (${request.method} ${path}).`);
    }
    if (request.method === 'DELETE' && (request.query as Record<string, unknown>)?.confirm !== 'true') {
      throw new ApiError(400, 'confirmation_required', 'DELETE cannot be undone; repeat the call with the query confirm=true.');
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
