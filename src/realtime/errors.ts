/** The errors the realtime capability answers with (code, HTTP status, message); see `errorCatalogue`. */
import { errorCatalogue } from '../core/errors.js';

export const realtimeErrors = errorCatalogue('realtime', {
  session_ended: { status: 409, summary: 'Session … has ended (…)' },
  wrong_mode: { status: 422, message: 'visitor.message is for conversation-mode sessions; in render mode your own agent answers the visitor' },
});
