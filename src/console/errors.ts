/** The errors the console capability answers with (code, HTTP status, message); see `errorCatalogue`. */
import { errorCatalogue } from '../core/errors.js';

export const consoleErrors = errorCatalogue('console', {
  invalid_api_key: { status: 401, message: 'Your console sign-in has ended; sign in again.' },
  invalid_link: {
    status: 401,
    message: 'This sign-in link has already been used or has expired. Run "npx presence console-link" for a new one, or sign in with an API key.',
  },
  not_signed_in: { status: 401, message: 'Not signed in.' },
  origin_not_allowed: { status: 403, summary: 'A signed-in console request that changes something must come from ….' },
});
