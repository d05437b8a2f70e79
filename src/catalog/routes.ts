/** GET/POST /v1/avatars, DELETE /v1/avatars/{avatar_id}, and GET /v1/backdrops. */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { StudioCatalog } from './catalog.js';
import { AVATAR_ID_PATTERN, type CustomFaces } from './custom-faces.js';
import { routeErrors } from '../core/errors.js';
import { catalogErrors } from './errors.js';

const FaceSchema = z
  .object({
    avatar_id: z.string(),
    name: z.string(),
    gender: z.enum(['f', 'm']),
    description: z.string(),
    default_voice_id: z.string(),
    model_url: z.string().describe('URL path of the GLB with viseme_* and ARKit morph targets'),
    look: z.record(z.string(), z.unknown()).describe('Generator parameters of a built-in face; empty for a custom face'),
    source: z.enum(['builtin', 'custom']),
    morphs: z.array(z.string()).optional().describe('Custom faces: the morph target names found in the file'),
    size_bytes: z.number().int().optional().describe('Custom faces: the size of the GLB'),
  })
  .meta({ id: 'Avatar' });

const BackdropSchema = z
  .object({
    backdrop_id: z.string(),
    name: z.string(),
    description: z.string(),
    kind: z.enum(['gradient', 'room', 'bokeh']),
    colors: z.object({ top: z.string(), bottom: z.string(), accent: z.string() }),
    blur: z.number(),
  })
  .meta({ id: 'Backdrop' });

const FaceUploadQuery = z.object({
  name: z.string().trim().min(1).max(100),
  gender: z.enum(['f', 'm']),
  avatar_id: z
    .string()
    .regex(AVATAR_ID_PATTERN, `avatar_id must match ${AVATAR_ID_PATTERN.source}`)
    .optional()
    .describe('Default: custom_ and random characters'),
  description: z.string().max(500).optional(),
  default_voice_id: z.string().optional().describe("A kokoro voice of the face's gender (default: the first such voice)"),
});

const FILE_TYPES = ['model/gltf-binary', 'application/octet-stream'];

const tooLarge = (bytes: number, maxBytes: number, atLeast = false) =>
  catalogErrors.invalid_face(`The face file cannot be used: file is ${atLeast ? 'over ' : ''}${bytes} bytes, over the ${maxBytes}-byte limit`);

/**
 * Reads the raw file body up to `maxBytes`. A larger body answers 422 invalid_face (not 413), and
 * the rest of it is read and dropped so the client gets the answer.
 */
function rawFileParser(maxBytes: number) {
  return (request: FastifyRequest, payload: NodeJS.ReadableStream, done: (err: Error | null, body?: unknown) => void) => {
    const declared = Number(request.headers['content-length']);
    if (Number.isFinite(declared) && declared > maxBytes) {
      payload.resume();
      done(tooLarge(declared, maxBytes));
      return;
    }
    const chunks: Buffer[] = [];
    let total = 0;
    let finished = false;
    payload.on('data', (chunk: Buffer) => {
      if (finished) return;
      total += chunk.length;
      if (total > maxBytes) {
        finished = true;
        chunks.length = 0;
        done(tooLarge(maxBytes, maxBytes, true));
        return;
      }
      chunks.push(chunk);
    });
    payload.on('end', () => {
      if (finished) return;
      finished = true;
      done(null, Buffer.concat(chunks, total));
    });
    payload.on('error', (error: Error) => {
      if (finished) return;
      finished = true;
      done(error);
    });
  };
}

export function catalogRoutes(server: FastifyInstance, catalog: StudioCatalog, customFaces?: CustomFaces): void {
  const app = server.withTypeProvider<ZodTypeProvider>();
  const tags = ['Catalogs'];
  app.get(
    '/v1/avatars',
    { schema: { tags, summary: "List faces (built-in, operator-added, and this account's own)", response: { 200: z.array(FaceSchema) } } },
    async (request) => {
      await customFaces?.fresh();
      return catalog.listFaces(request.principal.accountId) as Array<z.infer<typeof FaceSchema>>;
    },
  );
  app.get('/v1/backdrops', { schema: { tags, summary: 'List studio backdrops', response: { 200: z.array(BackdropSchema) } } }, async () =>
    catalog.listBackdrops(),
  );
  if (!customFaces) return;

  // The upload route lives in its own context so its raw-file body parser applies to it alone.
  void server.register(async (scope) => {
    scope.addContentTypeParser(FILE_TYPES, rawFileParser(customFaces.maxBytes));
    scope.addContentTypeParser('*', (_request, payload, done) => {
      payload.resume();
      done(catalogErrors.unsupported_media_type(`Send the GLB/VRM file itself as the body with Content-Type ${FILE_TYPES.join(' or ')}`));
    });
    scope.withTypeProvider<ZodTypeProvider>().post(
      '/v1/avatars',
      {
        config: routeErrors(
          catalogErrors.invalid_face,
          catalogErrors.unsupported_media_type,
          catalogErrors.invalid_avatar_id,
          catalogErrors.unknown_voice,
          catalogErrors.voice_face_mismatch,
          catalogErrors.avatar_exists,
        ),
        schema: {
          tags,
          summary: 'Add a face from a GLB or VRM file',
          description:
            'The body is the file itself (Content-Type model/gltf-binary or application/octet-stream, at most ' +
            `${customFaces.maxBytes} bytes). Its meshes must carry the 15 viseme_* morph targets and the key ARKit ones ` +
            '(jawOpen, eyeBlinkLeft, eyeBlinkRight, mouthSmileLeft, mouthSmileRight, browInnerUp, mouthFunnel, mouthPucker, mouthClose). ' +
            'The face belongs to this account: its agents and sessions may use it.',
          querystring: FaceUploadQuery,
          response: { 201: FaceSchema },
        },
      },
      async (request, reply) => {
        const body = request.body as unknown;
        if (body === undefined || body === null) {
          throw catalogErrors.invalid_face(
            'The face file cannot be used: the request has no body; send the GLB as the body with Content-Type model/gltf-binary',
          );
        }
        if (!Buffer.isBuffer(body)) {
          throw catalogErrors.unsupported_media_type(`Send the GLB/VRM file itself as the body with Content-Type ${FILE_TYPES.join(' or ')}`);
        }
        const q = request.query;
        const face = await customFaces.add({
          glb: body,
          name: q.name,
          gender: q.gender,
          avatarId: q.avatar_id,
          description: q.description,
          defaultVoiceId: q.default_voice_id,
          accountId: request.principal.accountId,
        });
        return reply.code(201).send(face);
      },
    );
  });

  app.delete(
    '/v1/avatars/:avatar_id',
    {
      config: routeErrors(catalogErrors.avatar_not_found, catalogErrors.avatar_in_use),
      schema: {
        tags,
        summary: "Delete one of this account's own faces",
        params: z.object({ avatar_id: z.string() }),
        querystring: z.object({ confirm: z.literal('true') }),
        response: { 204: z.null() },
      },
    },
    async (request, reply) => {
      await customFaces.delete(request.principal.accountId, request.params.avatar_id);
      return reply.code(204).send(null);
    },
  );
}
