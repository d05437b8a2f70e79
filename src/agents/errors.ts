/** The errors the agents capability answers with (code, HTTP status, message); see `errorCatalogue`. */
import { errorCatalogue } from '../core/errors.js';

export const agentsErrors = errorCatalogue('agents', {
  agent_limit: { status: 402, message: 'The free plan holds one agent; upgrade to create more' },
  agent_not_found: { status: 404, summary: 'No agent with id … in this account' },
  invalid_look: {
    status: 422,
    summary: 'The look names a backdrop or camera that does not exist (GET /v1/backdrops lists backdrops; cameras are far, mid, close)',
  },
  liveavatar_avatar_id_taken: { status: 409, summary: 'Agent … already has this liveavatar_avatar_id; each agent of an account needs its own' },
  paid_feature: { status: 402, summary: 'The voice is premium; the free plan speaks with kokoro voices' },
  unknown_avatar: { status: 422, summary: 'No face "…"; GET /v1/avatars lists them' },
  unknown_voice: { status: 422, summary: 'No … voice "…"; GET /v1/voices/… lists them' },
  voice_face_mismatch: { status: 422, summary: 'Voice "…" does not suit face "…"; pass a voice_id with … voice (e.g. …)' },
});
