/** GET /v1/avatars and GET /v1/backdrops. */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { StudioCatalog } from './catalog.js';

const FaceSchema = z.object({
  avatar_id: z.string(),
  name: z.string(),
  gender: z.enum(['f', 'm']),
  description: z.string(),
  default_voice_id: z.string(),
  model_url: z.string().describe('URL path of the GLB with viseme_* and ARKit morph targets'),
  look: z.record(z.string(), z.unknown()),
  source: z.enum(['builtin', 'custom']),
}).meta({ id: 'Avatar' });

const BackdropSchema = z.object({
  backdrop_id: z.string(),
  name: z.string(),
  description: z.string(),
  kind: z.enum(['gradient', 'room', 'bokeh']),
  colors: z.object({ top: z.string(), bottom: z.string(), accent: z.string() }),
  blur: z.number(),
}).meta({ id: 'Backdrop' });

export function catalogRoutes(app: FastifyInstance, catalog: StudioCatalog): void {
  app.get('/v1/avatars', { schema: { tags: ['Catalogs'], summary: 'List faces', response: { 200: z.array(FaceSchema) } } }, async () => catalog.listFaces());
  app.get('/v1/backdrops', { schema: { tags: ['Catalogs'], summary: 'List studio backdrops', response: { 200: z.array(BackdropSchema) } } }, async () => catalog.listBackdrops());
}
