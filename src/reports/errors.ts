/** The errors the reports capability answers with (code, HTTP status, message); see `errorCatalogue`. */
import { errorCatalogue } from '../core/errors.js';

export const reportsErrors = errorCatalogue('reports', {
  conversation_not_found: { status: 404, summary: 'No conversation … in this account' },
});
