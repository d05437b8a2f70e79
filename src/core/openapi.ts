/** OpenAPI 3.1 at /openapi.json, generated from the route schemas, and a reference page at /docs. */
import type { FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';

export async function registerOpenApi(app: FastifyInstance, publicUrl: string): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Presence API',
        version: '1',
        description: 'Live, talking 3D avatar agents for any website. Every call carries `Authorization: Bearer sk_live_…`.',
      },
      servers: [{ url: publicUrl }],
      components: { securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'API key, sk_live_…' } } },
      security: [{ apiKey: [] }],
    },
    transform: jsonSchemaTransform,
    transformObject: jsonSchemaTransformObject,
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true } });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
