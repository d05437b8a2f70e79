/**
 * The console's own routes: signing in and out (`/console/session`), and the single-page app
 * itself (`/console/…`, `/` redirects there) with its hashed, immutable assets under a strict CSP.
 * Everything else the console shows it reads through the documented /v1 API with its cookie.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Principal } from '../core/auth.js';
import { readCookie, sessionCookie, SESSION_COOKIE, type ConsoleSignIns } from './signin.js';
import { ensureConsoleBuild, type ConsoleBuild } from './build.js';
import { consoleErrors } from './errors.js';

export interface ConsoleHooks {
  signIns: ConsoleSignIns;
  /** The API's own key check: a pasted key is exchanged only if the API would take it. */
  authenticateKey: (authorization: string) => Promise<Principal>;
  account: (accountId: number) => Promise<{ id: number; name: string; plan: string }>;
  publicUrl: () => string;
  /** SESSION_CAPACITY: what the Overview shows live sessions against. */
  sessionCapacity: number;
  /** Where the built app lives (tests may build elsewhere). */
  buildDir?: string;
}

const SignInRequest = z.union([z.object({ token: z.string().min(1).max(200) }).strict(), z.object({ key: z.string().min(1).max(200) }).strict()]);
const SignedIn = z.object({
  account_id: z.number().int(),
  account_name: z.string(),
  plan: z.string(),
  permissions: z.array(z.string()),
  expires_at: z.string(),
  via: z.enum(['link', 'key']),
  session_capacity: z.number().int().describe('SESSION_CAPACITY: running sessions this deployment takes at once'),
});

/** A strict policy: scripts and styles from this origin only, nothing inline; frames (the agent's preview) from here too. */
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "media-src 'self' blob:",
  "connect-src 'self'",
  "frame-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "object-src 'none'",
].join('; ');

export function consoleRoutes(server: FastifyInstance, hooks: ConsoleHooks): void {
  const app = server.withTypeProvider<ZodTypeProvider>();
  const { signIns } = hooks;
  const hide = { hide: true } as const;

  const describe = async (signIn: { accountId: number; permissions: string[]; expiresAt: Date; keyId: number | null }) => {
    const account = await hooks.account(signIn.accountId);
    return {
      account_id: account.id,
      account_name: account.name,
      plan: account.plan,
      permissions: signIn.permissions,
      expires_at: signIn.expiresAt.toISOString(),
      via: signIn.keyId === null ? ('link' as const) : ('key' as const),
      session_capacity: hooks.sessionCapacity,
    };
  };

  // Signing in: a link's token or an API key, once, for a session cookie. Only from the console's
  // own page (its Origin), so another site cannot sign a visitor into an account of its choosing.
  app.post('/console/session', { schema: { ...hide, body: SignInRequest, response: { 200: SignedIn } } }, async (request, reply) => {
    signIns.requireOwnOrigin(request);
    const body = request.body;
    const opened =
      'token' in body ? await signIns.signInWithLink(body.token) : await signIns.signInWithKey(await hooks.authenticateKey(`Bearer ${body.key.trim()}`));
    reply.header('set-cookie', sessionCookie(opened.token, hooks.publicUrl())).header('cache-control', 'no-store');
    return describe(opened.signIn);
  });

  app.get('/console/session', { schema: { ...hide, response: { 200: SignedIn } } }, async (request, reply) => {
    const signIn = await signIns.find(readCookie(request.headers.cookie, SESSION_COOKIE));
    if (!signIn) throw consoleErrors.not_signed_in();
    reply.header('cache-control', 'no-store');
    return describe(signIn);
  });

  app.delete('/console/session', { schema: hide }, async (request, reply) => {
    signIns.requireOwnOrigin(request);
    await signIns.end(readCookie(request.headers.cookie, SESSION_COOKIE));
    return reply
      .header('set-cookie', sessionCookie('', hooks.publicUrl(), 0))
      .code(204)
      .send();
  });

  registerConsolePages(server, hooks);
}

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.map': 'application/json',
};

/** The app: one HTML shell for every console path (the client router picks the view), and its assets. */
function registerConsolePages(app: FastifyInstance, hooks: ConsoleHooks): void {
  let built: Promise<ConsoleBuild> | undefined;
  // Built at `npm install`; a checkout without it is built at the first request (and at start, see app.ts).
  const ready = () => {
    built ??= ensureConsoleBuild(hooks.buildDir ? { outDir: hooks.buildDir } : {}).catch((error) => {
      built = undefined;
      throw error;
    });
    return built;
  };
  void ready().catch((error) => app.log.error({ err: error }, 'console build failed'));

  const shell = async (_request: FastifyRequest, reply: FastifyReply) => {
    const build = await ready();
    reply
      .header('content-security-policy', CSP)
      .header('cache-control', 'no-store')
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .type('text/html; charset=utf-8');
    return reply.send(build.html);
  };

  app.get('/', { schema: { hide: true } }, async (_request, reply) => reply.redirect('/console/', 302));
  app.get('/console', { schema: { hide: true } }, shell);
  app.get('/console/*', { schema: { hide: true } }, shell);
  app.get<{ Params: { file: string } }>('/console/assets/:file', { schema: { hide: true } }, async (request, reply) => {
    const build = await ready();
    const file = request.params.file;
    if (!Object.hasOwn(build.files, file)) return reply.code(404).send({ detail: 'Not Found' });
    const body = fs.readFileSync(path.join(build.dir, file));
    return reply
      .type(TYPES[path.extname(file)] ?? 'application/octet-stream')
      .header('cache-control', file === 'licenses.txt' ? 'public, max-age=300' : 'public, max-age=31536000, immutable')
      .header('x-content-type-options', 'nosniff')
      .send(body);
  });
}
