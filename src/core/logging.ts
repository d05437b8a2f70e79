/**
 * Structured JSON logs (pino) with the request id on every line. Secrets never reach the log:
 * Authorization headers are redacted and tokens in URLs (player and render-socket links) masked.
 */
import type { FastifyRequest } from 'fastify';

const SECRET_QUERY = /([?&](?:token|key|secret|api_key)=)[^&]*/gi;

export function maskUrl(url: string): string {
  return url.replace(SECRET_QUERY, '$1***').replace(/\/p\/[A-Za-z0-9_-]{8,}/, '/p/***');
}

export function loggerOptions(level: string) {
  return {
    level,
    redact: { paths: ['req.headers.authorization', 'req.headers["x-admin-token"]', 'headers.authorization'], censor: '***' },
    serializers: {
      req(request: FastifyRequest) {
        return { method: request.method, url: maskUrl(request.url), remoteAddress: request.ip };
      },
    },
  };
}
