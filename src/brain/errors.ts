/** The errors the brain capability answers with (code, HTTP status, message); see `errorCatalogue`. */
import { errorCatalogue } from '../core/errors.js';

export const brainErrors = errorCatalogue('brain', {
  gap_not_found: { status: 404, summary: 'No knowledge gap with id … for this agent' },
});
