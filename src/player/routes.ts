/**
 * The player's HTTP side: the page at GET /p/:player_key, its bundled scripts at
 * /assets/player/*, and face GLBs at /assets/faces/:id.glb. The player channel socket
 * (/p/:player_key/ws) is mounted by the realtime side, not here.
 *
 * Mount: `await playerRoutes(app, { resolve })` (or `app.register(playerRoutes, { resolve })`).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { BUILTIN_FACES } from '../faces/builtin.js';
import { ensureFacesInBackground } from '../faces/background.js';
import { ensurePlayerBuild, LICENSES_FILE, PLAYER_BUILD_DIR, REPO_ROOT, type PlayerBuild } from './build.js';
import { invalidPage, playerPage } from './page.js';
import { CUSTOM_FACE_FILE, CUSTOM_STILLS_DIR, Stills } from '../faces/stills.js';

/** What the page needs to know about a player link. */
export interface PlayerLink {
  /** `valid`: show the player; `expired`/`invalid`: the friendly 404 page; `ended`: the ended page (410). */
  status: 'valid' | 'expired' | 'invalid' | 'ended';
  /** The face's GLB path, so the page can preload it before the socket's hello. */
  faceUrl?: string | null;
  /** Page title (e.g. the agent's name). */
  title?: string;
}

export interface PlayerRouteDeps {
  /** Whether a player key is valid; null/undefined means unknown. */
  resolve(playerKey: string): Promise<PlayerLink | null | undefined> | PlayerLink | null | undefined;
  /** Where the face GLBs are (default build/faces under the repository). */
  facesDir?: string;
  /**
   * Custom (uploaded) faces: the GLB bytes and their SHA-256 by avatar id, or undefined
   * (e.g. `customFaceAsset` from src/catalog/custom-faces.ts). Asked when no file matches.
   */
  customFace?: (avatarId: string) => Promise<{ bytes: Buffer | Uint8Array; sha256: string } | undefined>;
  /** Where the built player bundle goes (default build/player). */
  buildDir?: string;
  /** Agent preview links (`/preview/:token`): the face to preload and a title, or null when invalid or expired. */
  preview?(token: string): Promise<{ faceUrl: string | null; title: string } | null>;
}

export const FACES_DIR = path.join(REPO_ROOT, 'build', 'faces');

/** Headers that let the page live in a frame on any site. */
const FRAME_HEADERS = {
  // No X-Frame-Options: any site may frame the player (that is its purpose).
  'content-security-policy': 'frame-ancestors *',
  // The framing site delegates with <iframe allow="microphone; autoplay">; the page allows itself.
  'permissions-policy': 'microphone=(self), autoplay=(self)',
  // The player key is in the URL: never leak it to third parties.
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
};

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.glb': 'model/gltf-binary',
  '.txt': 'text/plain; charset=utf-8',
  '.png': 'image/png',
};

function sendFile(reply: FastifyReply, file: string, immutable: boolean) {
  const stat = fs.statSync(file, { throwIfNoEntry: false });
  if (!stat?.isFile()) return reply.code(404).type('text/plain').send('not found');
  const etag = `"${stat.size.toString(16)}-${Math.floor(stat.mtimeMs).toString(16)}"`;
  reply.header('etag', etag);
  reply.header('cache-control', immutable ? 'public, max-age=31536000, immutable' : 'public, max-age=300');
  reply.header('access-control-allow-origin', '*');
  reply.header('cross-origin-resource-policy', 'cross-origin');
  reply.header('x-content-type-options', 'nosniff');
  reply.type(TYPES[path.extname(file)] ?? 'application/octet-stream');
  if (reply.request.headers['if-none-match'] === etag) return reply.code(304).send();
  reply.header('content-length', stat.size);
  return reply.send(fs.createReadStream(file));
}

export async function playerRoutes(app: FastifyInstance, deps: PlayerRouteDeps): Promise<void> {
  const buildDir = deps.buildDir ?? PLAYER_BUILD_DIR;
  const facesDir = deps.facesDir ?? FACES_DIR;
  let built: Promise<PlayerBuild> | null = null;
  const bundle = () => {
    built ??= ensurePlayerBuild(buildDir === PLAYER_BUILD_DIR ? {} : { outDir: buildDir }).catch((e) => {
      built = null;
      throw e;
    });
    return built;
  };
  // Build now (in the background) so the first visitor does not wait.
  bundle().catch((error) => app.log.error({ err: error }, 'player bundle build failed'));
  const isBuiltin = (id: string) => BUILTIN_FACES.some((f) => f.avatar_id === id);
  const stills = new Stills(facesDir, CUSTOM_STILLS_DIR);
  /** The face's still for the page; an uploaded face without one (another node took the upload, or it predates stills) gets it rendered for later pages. */
  const stillFor = (faceUrl: string | null | undefined) => {
    const still = stills.forFace(faceUrl, isBuiltin);
    const id = faceUrl ? /^\/assets\/faces\/([\w-]{1,64})\.glb$/.exec(faceUrl)?.[1] : undefined;
    if (!still && id && !isBuiltin(id) && deps.customFace) {
      const load = deps.customFace;
      stills.ensureCustom(id, () => load(id)).catch((error) => app.log.warn({ err: error, avatar_id: id }, 'still picture not rendered'));
    }
    return still;
  };

  app.get<{ Params: { player_key: string } }>('/p/:player_key', { schema: { hide: true } }, async (request, reply) => {
    reply.headers(FRAME_HEADERS);
    const key = request.params.player_key;
    const link = /^[\w-]{8,200}$/.test(key) ? await deps.resolve(key) : null;
    if (!link || link.status === 'invalid' || link.status === 'expired') {
      return reply.code(404).type('text/html; charset=utf-8').send(invalidPage());
    }
    if (link.status === 'ended') {
      return reply.code(410).type('text/html; charset=utf-8').send(invalidPage('The conversation has ended.', 'Thanks for talking with us.'));
    }
    const { version } = await bundle();
    return reply.type('text/html; charset=utf-8').send(
      playerPage({
        wsPath: `/p/${encodeURIComponent(key)}/ws`,
        scriptUrl: `/assets/player/main.js?v=${version}`,
        workletUrl: `/assets/player/audio-worklet.js?v=${version}`,
        faceUrl: link.faceUrl ?? null,
        still: stillFor(link.faceUrl),
        title: link.title,
      }),
    );
  });

  // The same page for an agent's preview link; its channel is /preview/:token/ws (realtime/agent-preview.ts).
  app.get<{ Params: { token: string } }>('/preview/:token', { schema: { hide: true } }, async (request, reply) => {
    reply.headers(FRAME_HEADERS);
    const found = deps.preview ? await deps.preview(request.params.token) : null;
    if (!found)
      return reply
        .code(404)
        .type('text/html; charset=utf-8')
        .send(invalidPage('This preview link is invalid or has expired.', 'Ask for a new one from the console or the API.'));
    const { version } = await bundle();
    return reply.type('text/html; charset=utf-8').send(
      playerPage({
        wsPath: `/preview/${encodeURIComponent(request.params.token)}/ws`,
        scriptUrl: `/assets/player/main.js?v=${version}`,
        workletUrl: `/assets/player/audio-worklet.js?v=${version}`,
        faceUrl: found.faceUrl,
        still: stillFor(found.faceUrl),
        title: found.title,
      }),
    );
  });

  app.get<{ Params: { file: string }; Querystring: { v?: string } }>('/assets/player/:file', { schema: { hide: true } }, async (request, reply) => {
    const { file } = request.params;
    if (!/^[\w-]+\.js$/.test(file) && file !== LICENSES_FILE) return reply.code(404).type('text/plain').send('not found');
    const { version } = await bundle();
    return sendFile(reply, path.join(buildDir, file), request.query.v === version);
  });

  app.get<{ Params: { file: string } }>('/assets/faces/:file', { schema: { hide: true } }, async (request, reply) => {
    const still = /^([\w-]{1,64})\.still\.png$/.exec(request.params.file);
    if (still) {
      const builtin = isBuiltin(still[1]);
      if (!builtin && !CUSTOM_FACE_FILE.test(still[1])) return reply.code(404).type('text/plain').send('not found');
      if (builtin) await builtFirst(still[1], request.log);
      return sendFile(reply, stills.files(still[1], builtin).png, false);
    }
    const match = /^([\w-]{1,64})\.glb$/.exec(request.params.file);
    if (!match) return reply.code(404).type('text/plain').send('not found');
    const id = match[1];
    const file = path.join(facesDir, `${id}.glb`);
    const builtin = BUILTIN_FACES.some((f) => f.avatar_id === id);
    if (!builtin && !fs.existsSync(file) && deps.customFace) {
      const custom = await deps.customFace(id);
      if (!custom) return reply.code(404).type('text/plain').send('not found');
      const etag = `"${custom.sha256.slice(0, 32)}"`;
      reply.header('etag', etag).header('cache-control', 'public, max-age=300').header('access-control-allow-origin', '*');
      reply.header('cross-origin-resource-policy', 'cross-origin').header('x-content-type-options', 'nosniff').type('model/gltf-binary');
      if (request.headers['if-none-match'] === etag) return reply.code(304).send();
      return reply.send(Buffer.from(custom.bytes.buffer, custom.bytes.byteOffset, custom.bytes.byteLength));
    }
    // Only built-in faces are generated on demand; anything else is served if present.
    if (builtin) await builtFirst(id, request.log);
    return sendFile(reply, file, false);
  });

  /** A built-in face not built yet (the first minutes after an install) is built now, before the others waiting. */
  async function builtFirst(id: string, log: { error(object: object, message: string): void }): Promise<void> {
    if (fs.existsSync(path.join(facesDir, `${id}.glb`)) && fs.existsSync(stills.files(id, true).png)) return;
    try {
      await ensureFacesInBackground(facesDir, [id]);
    } catch (error) {
      log.error({ err: error, avatar_id: id }, 'face generation failed');
    }
  }
}
