/** The errors the liveavatar capability answers with (code, HTTP status, message); see `errorCatalogue`. */
import { errorCatalogue } from '../core/errors.js';

export const liveavatarErrors = errorCatalogue('liveavatar', {
  agent_not_found: { status: 404, summary: 'No agent with id or liveavatar_avatar_id … in this account' },
  invalid_session_token: {
    status: 401,
    summary: 'Missing or invalid session token. Send "Authorization: Bearer <session_token>" from POST /v1/sessions/token.',
  },
  body_too_large: { status: 413, message: 'Request body is too large' },
  invalid_request: { status: 422, summary: 'The request is not valid: its first problem, as `field: message`' },
  mode_not_supported: { status: 422, summary: 'mode not supported' },
  permission_denied: { status: 403, message: 'This API key lacks the "sessions" permission' },
  session_already_started: { status: 409, message: 'This session token has already started its session' },
  session_ended: { status: 409, message: 'This session has ended; make a new session token' },
  session_id_required: { status: 422, message: 'With an API key, send {"session_id": …} in the body' },
  session_not_found: { status: 404, summary: 'No session … in this account' },
  session_not_started: { status: 409, message: 'The session has not started yet; call /v1/sessions/start first' },
  unsupported_media_type: { status: 415, message: 'Content-Type must be application/json' },
  token_expired: { status: 401, summary: 'A session token starts its session within … seconds of being made; make a new one' },
});
