/**
 * The LiveAvatar-compatible routes: token (server to server, API key), then start, keep-alive,
 * stop and DELETE /v1/sessions (from the browser, with the session token). Every answer and error
 * is LiveAvatar's envelope: `{code: 1000, message: "success", data}`, or `{code: <status>,
 * message, data: null, detail: {code, message}}` so Presence's own clients keep reading `detail`.
 * The browser-called routes answer CORS with credentials for any origin (the SDK fetches with
 * `credentials: "include"`); the session token is their only credential, no cookie is read.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { ApiKeyAuthenticator, Principal } from '../core/auth.js';
import type { Caller, LiveAvatarService } from './service.js';
import { Envelope, KeepAliveBody, StartAnswer, StopBody, TokenAnswer, TokenRequest } from './schemas.js';
import { routeErrors, type CatalogueEntry } from '../core/errors.js';
import { coreErrors } from '../core/error-codes.js';
import { SESSION_START_ERRORS } from '../sessions/errors.js';
import { liveavatarErrors } from './errors.js';

const BROWSER_PATHS = ['/v1/sessions/start', '/v1/sessions/keep-alive', '/v1/sessions/stop', '/v1/sessions'];
const tags = ['LiveAvatar'];
const ok = <T>(data: T) => ({ code: 1000 as const, message: 'success', data });

const FRAMEWORK_CODES: Record<number, string> = {
  413: liveavatarErrors.body_too_large.code,
  415: liveavatarErrors.unsupported_media_type.code,
};

/** Presence's `{"detail": …}` error, rewritten as LiveAvatar's envelope (detail kept as {code, message}). */
function envelopeError(status: number, payload: string): string {
  let detail: unknown;
  try {
    detail = (JSON.parse(payload) as { detail?: unknown }).detail;
  } catch {
    detail = payload;
  }
  let code = 'error';
  let message = 'The request failed';
  if (typeof detail === 'string') {
    // A refusal made before the handler (a sentence in `detail`) gets its code here.
    code = FRAMEWORK_CODES[status] ?? code;
    message = detail;
  } else if (Array.isArray(detail)) {
    const first = detail[0] as { loc?: unknown[]; msg?: string } | undefined;
    code = liveavatarErrors.invalid_request.code;
    message = first ? `${(first.loc ?? []).slice(1).join('.') || 'body'}: ${first.msg}` : 'The request is not valid';
  } else if (detail && typeof detail === 'object') {
    code = String((detail as { code?: unknown }).code ?? code);
    message = String((detail as { message?: unknown }).message ?? message);
  }
  return JSON.stringify({ code: status, message, data: null, detail: { code, message } });
}

function corsHeaders(request: FastifyRequest, reply: FastifyReply): void {
  const origin = request.headers.origin;
  if (typeof origin !== 'string' || !origin) return;
  reply.header('Access-Control-Allow-Origin', origin).header('Access-Control-Allow-Credentials', 'true').header('Vary', 'Origin');
}

export async function liveAvatarRoutes(server: FastifyInstance, liveAvatar: LiveAvatarService, authenticator: ApiKeyAuthenticator): Promise<void> {
  await server.register(async (scope) => {
    const app = scope.withTypeProvider<ZodTypeProvider>();
    // Every answer of these routes (a refused key, a 422, a 404) leaves in the envelope.
    scope.addHook('onSend', async (request, reply, payload) => {
      if (BROWSER_PATHS.includes(request.routeOptions.url ?? '')) corsHeaders(request, reply);
      if (reply.statusCode < 400 || typeof payload !== 'string') return payload;
      reply.header('content-type', 'application/json; charset=utf-8');
      return envelopeError(reply.statusCode, payload);
    });

    /** The API key of X-API-KEY (LiveAvatar's header) or Authorization: Bearer, with `sessions`. */
    const keyPrincipal = async (request: FastifyRequest): Promise<Principal> => {
      const header = request.headers['x-api-key'];
      const principal = await authenticator.authenticate(typeof header === 'string' ? `Bearer ${header}` : request.headers.authorization);
      if (!principal.permissions.has('sessions')) throw liveavatarErrors.permission_denied();
      return principal;
    };

    /** The session token (Bearer), or an API key with the session_id in the body. */
    const caller = async (request: FastifyRequest, body: { session_id?: string } | undefined): Promise<Caller> => {
      const bearer = request.headers.authorization?.match(/^Bearer\s+(\S+)\s*$/i)?.[1];
      if (bearer?.startsWith('sk_live_') || (request.headers['x-api-key'] && !bearer)) {
        const principal = await keyPrincipal(request);
        if (!body?.session_id) throw liveavatarErrors.session_id_required();
        return { kind: 'key', accountId: principal.accountId, sessionId: body.session_id };
      }
      if (!bearer)
        throw liveavatarErrors.invalid_session_token('Missing session token. Send "Authorization: Bearer <session_token>" from POST /v1/sessions/token.', {
          'WWW-Authenticate': 'Bearer',
        });
      return { kind: 'token', token: bearer };
    };

    /** Start and DELETE take the session token only. */
    const sessionToken = (request: FastifyRequest): string => {
      const bearer = request.headers.authorization?.match(/^Bearer\s+(\S+)\s*$/i)?.[1];
      if (!bearer || bearer.startsWith('sk_live_'))
        throw liveavatarErrors.invalid_session_token('Send the session token from POST /v1/sessions/token: "Authorization: Bearer <session_token>"', {
          'WWW-Authenticate': 'Bearer',
        });
      return bearer;
    };

    /** No API key of the usual check (each route reads its own credential); the errors each can answer. */
    const open = (...errors: CatalogueEntry[]) => ({ config: { public: true, ...routeErrors(liveavatarErrors.invalid_request, ...errors) } });
    // The key check of the token route and of a key-holding caller (`keyPrincipal`).
    const keyErrors = [coreErrors.invalid_api_key, liveavatarErrors.permission_denied];
    // How a session token is refused (`tokenRow`, `sessionToken`, `caller`).
    const tokenErrors = [liveavatarErrors.invalid_session_token];
    // The JSON body's refusals before the handler.
    const bodyErrors = [liveavatarErrors.body_too_large, liveavatarErrors.unsupported_media_type];
    app.post(
      '/v1/sessions/token',
      {
        ...open(...bodyErrors, ...keyErrors, liveavatarErrors.mode_not_supported, liveavatarErrors.agent_not_found),
        schema: {
          tags,
          summary: 'LiveAvatar: mint a session token (API key in X-API-KEY or Bearer; LITE only)',
          body: TokenRequest,
          response: { 200: Envelope(TokenAnswer) },
        },
      },
      async (request) => {
        const principal = await keyPrincipal(request);
        return ok(await liveAvatar.mint(principal.accountId, request.body as Record<string, unknown>));
      },
    );

    app.post(
      '/v1/sessions/start',
      {
        ...open(
          ...tokenErrors,
          liveavatarErrors.session_ended,
          liveavatarErrors.session_already_started,
          liveavatarErrors.token_expired,
          ...SESSION_START_ERRORS,
        ),
        schema: { tags, summary: 'LiveAvatar: start the session of a session token (Bearer)', response: { 200: Envelope(StartAnswer) } },
      },
      async (request) => {
        return ok(await liveAvatar.start(sessionToken(request)));
      },
    );

    app.post(
      '/v1/sessions/keep-alive',
      {
        ...open(
          ...bodyErrors,
          ...tokenErrors,
          ...keyErrors,
          liveavatarErrors.session_id_required,
          liveavatarErrors.session_not_found,
          liveavatarErrors.session_not_started,
          liveavatarErrors.session_ended,
        ),
        schema: {
          tags,
          summary: 'LiveAvatar: the session is in use (restarts its idle clock)',
          body: KeepAliveBody,
          response: { 200: Envelope(z.object({})) },
        },
      },
      async (request) => {
        await liveAvatar.keepAlive(await caller(request, request.body ?? undefined));
        return ok({});
      },
    );

    app.post(
      '/v1/sessions/stop',
      {
        ...open(...bodyErrors, ...tokenErrors, ...keyErrors, liveavatarErrors.session_id_required, liveavatarErrors.session_not_found),
        schema: { tags, summary: 'LiveAvatar: stop the session (idempotent)', body: StopBody, response: { 200: Envelope(z.object({})) } },
      },
      async (request) => {
        await liveAvatar.stop(await caller(request, request.body ?? undefined));
        return ok({});
      },
    );

    app.delete(
      '/v1/sessions',
      {
        ...open(...tokenErrors),
        schema: { tags, summary: 'LiveAvatar: stop the session of a session token (the same as stop)', response: { 200: Envelope(z.object({})) } },
      },
      async (request) => {
        await liveAvatar.stop({ kind: 'token', token: sessionToken(request) });
        return ok({});
      },
    );

    // Preflights of the browser-called routes: the request's origin echoed, with credentials.
    for (const path of BROWSER_PATHS) {
      scope.options(path, { ...open(), schema: { hide: true } }, async (request, reply) => {
        corsHeaders(request, reply);
        return reply
          .header('Access-Control-Allow-Methods', 'POST, DELETE, OPTIONS')
          .header('Access-Control-Allow-Headers', 'authorization, content-type')
          .header('Access-Control-Max-Age', '600')
          .code(204)
          .send();
      });
    }
  });
}
