/** GET /docs/render-protocol (the render socket for people) and GET /asyncapi.json (for tools). */
import type { FastifyInstance } from 'fastify';
import { renderAsyncApi, renderProtocolPage } from './render-protocol.js';

export function referenceRoutes(app: FastifyInstance, publicUrl: () => string): void {
  let page: string | undefined;
  app.get('/docs/render-protocol', { schema: { hide: true } }, async (_request, reply) => {
    page ??= renderProtocolPage();
    return reply.type('text/html; charset=utf-8').send(page);
  });
  app.get('/asyncapi.json', { schema: { hide: true } }, async () => renderAsyncApi(publicUrl()));
}
