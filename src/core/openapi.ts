/** OpenAPI 3.1 at /openapi.json, generated from the route schemas, and a reference page at /docs. */
import type { FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { tidyOpenApi } from './openapi-examples.js';
import type { CatalogueEntry } from './errors.js';

export async function registerOpenApi(app: FastifyInstance, publicUrl: string): Promise<void> {
  const routeErrors = new Map<string, CatalogueEntry[]>();
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Presence API',
        version: '1',
        description:
          'Live, talking 3D avatar agents for any website. Every call carries `Authorization: Bearer sk_live_…`. The render-mode WebSocket is documented at [/docs/render-protocol](/docs/render-protocol) (AsyncAPI 3: [/asyncapi.json](/asyncapi.json)).',
      },
      servers: [{ url: publicUrl }],
      components: { securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'API key, sk_live_…' } } },
      security: [{ apiKey: [] }],
    },
    // Public routes (the embed's start, Stripe's webhook) take no API key: say so in the document.
    transform: (input) => {
      const out = jsonSchemaTransform(input);
      const config = (input.route as { config?: { public?: boolean; errors?: CatalogueEntry[] } }).config;
      if (config?.public && out.schema && !('security' in out.schema)) {
        out.schema = { ...out.schema, security: [] };
      }
      // The catalogued errors a route answers with, written into its responses by tidyOpenApi.
      if (config?.errors?.length) {
        const path = input.url.replace(/:(\w+)/g, '{$1}');
        for (const method of [input.route.method].flat()) routeErrors.set(`${String(method).toLowerCase()} ${path}`, config.errors);
      }
      return out;
    },
    transformObject: jsonSchemaTransformObject,
  });
  // Built once, on first use (every route is registered by then), and shared by /openapi.json and /docs.
  let document: Record<string, any> | undefined;
  const tidied = () =>
    (document ??= tidyOpenApi(structuredClone(app.swagger() as Record<string, any>), (method, path) => routeErrors.get(`${method} ${path}`) ?? []));
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { docExpansion: 'list', deepLinking: true },
    transformSpecification: () => tidied(),
    transformSpecificationClone: false,
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => tidied());
}
