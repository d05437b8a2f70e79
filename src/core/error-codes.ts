/** The errors the core capability answers with (code, HTTP status, message); see `errorCatalogue`. */
import { errorCatalogue } from './errors.js';

export const coreErrors = errorCatalogue('core', {
  confirmation_required: { status: 400, message: 'DELETE cannot be undone; repeat the call with the query confirm=true.' },
  invalid_api_key: { status: 401, message: 'Missing or invalid API key. Send "Authorization: Bearer sk_live_...".' },
  missing_permission: { status: 403, summary: 'This API key lacks the permission this call needs' },
  rate_limited: { status: 429, message: 'Too many requests for this API key; retry later.' },
});
