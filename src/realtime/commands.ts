/** Applies one render-protocol command to a live session (from the render socket or the HTTP commands route). */
import type { RealtimeSession } from './session.js';
import type { RenderCommand } from './protocol.js';

export interface DispatchContext {
  hasBackdrop: (id: string) => boolean;
}

export function dispatch(session: RealtimeSession, command: RenderCommand, eventId: string, context: DispatchContext): void {
  switch (command.type) {
    case 'agent.speak':
      session.audio(decodeBase64(command.audio), eventId, command.text);
      return;
    case 'agent.speak_end':
      if (command.audio) session.audio(decodeBase64(command.audio), eventId);
      session.speakEnd();
      return;
    case 'agent.speak_text':
      session.speak({ text: command.text, eventId, cue: command.cue });
      return;
    case 'agent.interrupt':
      session.interrupt(eventId);
      return;
    case 'agent.start_listening':
      session.startListening();
      return;
    case 'agent.stop_listening':
      session.stopListening();
      return;
    case 'agent.cue':
      session.action(
        { kind: 'cue', atSeconds: command.at_seconds ?? 0, payload: { name: command.cue, intensity: command.intensity ?? 0.8 }, eventId },
        command.at_seconds,
      );
      return;
    case 'stage.camera':
      if (command.camera !== 'auto' && !session.stage.cameras.includes(command.camera)) {
        session.error('stage_error', `camera "${command.camera}" is not enabled for this session (cameras: ${session.stage.cameras.join(', ')})`, eventId);
        return;
      }
      session.action(
        { kind: 'camera', atSeconds: command.at_seconds ?? 0, payload: { camera: command.camera, hold: command.hold ?? false }, eventId },
        command.at_seconds,
      );
      return;
    case 'stage.backdrop':
      if (command.backdrop !== null && !context.hasBackdrop(command.backdrop)) {
        session.error('stage_error', `no backdrop "${command.backdrop}"; GET /v1/backdrops lists them`, eventId);
        return;
      }
      session.action({ kind: 'backdrop', atSeconds: command.at_seconds ?? 0, payload: { backdrop: command.backdrop }, eventId }, command.at_seconds);
      return;
    case 'stage.get':
      session.emit({ type: 'stage.updated', event_id: `evt_${crypto.randomUUID()}`, source_event_id: eventId, stage: session.stageView() });
      return;
    case 'session.keep_alive':
      return;
    case 'session.configure':
      // Handled by the socket (it may close with 4000); never reaches here.
      return;
  }
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

export class AudioDecodeError extends Error {}

function decodeBase64(text: string): Uint8Array {
  if (text.length % 4 === 1 || !BASE64.test(text)) throw new AudioDecodeError('audio is not valid base64');
  return Buffer.from(text, 'base64');
}
