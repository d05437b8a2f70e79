/**
 * Agent previews: a player page fed by a short-lived live side that is not a session (no record,
 * no metering, no limits). It shows the agent's face and studio as saved and speaks its welcome
 * message in its voice, through the same real-time path as a session.
 */
import crypto from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { AgentService } from '../agents/service.js';
import type { PreviewLinks } from '../agents/preview-links.js';
import type { StudioCatalog } from '../catalog/catalog.js';
import type { RealtimeService } from './service.js';
import { helloFor } from './attach.js';

/** A preview plays for at most this long. */
const PREVIEW_SECONDS = 120;

export function registerPreviewSocket(
  app: FastifyInstance,
  previews: PreviewLinks,
  agents: AgentService,
  realtime: RealtimeService,
  studio: StudioCatalog,
): void {
  app.get<{ Params: { token: string } }>('/preview/:token/ws', { websocket: true, schema: { hide: true } }, (socket, request) => {
    void (async () => {
      const agentId = previews.verify(request.params.token);
      const agent = agentId === undefined ? undefined : await agents.byId(agentId);
      if (!agent) {
        socket.close(4004, 'invalid or expired preview link');
        return;
      }
      const id = `preview_${crypto.randomUUID()}`;
      const look = { backdrop: agent.studio.backdrop, cameras: agent.studio.cameras, camera: 'auto' as const, face_light: agent.studio.face_light };
      const row = {
        id,
        mode: 'conversation' as const,
        status: 'active' as const,
        max_session_seconds: PREVIEW_SECONDS,
        avatar_id: agent.avatar_id,
        account_id: agent.account_id,
      };
      const session = realtime.open({ id, voice_provider: agent.tts_primary, voice_id: agent.voice_id, look });
      session.player.add(socket);
      socket.send(JSON.stringify(helloFor(session, row, studio)));
      session.speak({ text: agent.welcome_message || `Hi, I'm ${agent.name}. This is how I look and sound.`, eventId: `preview_${agent.id}` });
      const timer = setTimeout(() => realtime.end(id, 'preview_over'), PREVIEW_SECONDS * 1000);
      socket.on('close', () => {
        clearTimeout(timer);
        realtime.end(id, 'preview_closed');
      });
    })().catch((error) => {
      request.log.error({ err: error }, 'preview socket failed');
      socket.close(1011, 'internal error');
    });
  });
}
