/** The errors the catalog capability answers with (code, HTTP status, message); see `errorCatalogue`. */
import { errorCatalogue } from '../core/errors.js';

export const catalogErrors = errorCatalogue('catalog', {
  account_not_found: { status: 404, summary: 'No account with id …' },
  avatar_exists: { status: 409, summary: "A face with this avatar_id exists (built-in, operator or the account's own); choose another" },
  avatar_in_use: { status: 409, summary: 'The face is used by an agent or on stage in a session' },
  avatar_not_found: { status: 404, summary: 'No face "…" of this account; built-in and operator faces cannot be deleted through the API' },
  invalid_avatar_id: { status: 422, summary: 'avatar_id "…" must match …' },
  invalid_face: { status: 422, summary: 'The face file cannot be used: …' },
  unknown_voice: { status: 422, summary: 'No kokoro voice "…"; a face\'s default_voice_id is a kokoro voice (GET /v1/voices/kokoro)' },
  unsupported_media_type: { status: 415, summary: 'Send the GLB/VRM file itself as the body with a GLB or VRM Content-Type' },
  voice_face_mismatch: { status: 422, summary: 'Voice "…" does not suit a face of gender "…"; pass … kokoro voice' },
});
