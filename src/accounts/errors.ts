/** The errors the accounts capability answers with (code, HTTP status, message); see `errorCatalogue`. */
import { errorCatalogue } from '../core/errors.js';

export const accountsErrors = errorCatalogue('accounts', {
  account_not_found: { status: 404, summary: 'account … not found' },
  invalid_arguments: { status: 400, summary: 'invalid arguments' },
  invalid_balance: { status: 422, summary: 'balance must be a decimal amount like 25.00, got "…"' },
  invalid_permissions: { status: 422, summary: 'permissions must be a non-empty subset of …' },
  key_not_found: { status: 404, summary: 'API key … not found' },
  missing_permission: { status: 403, summary: 'A key cannot make a key with a permission it does not have itself: this one lacks "…".' },
  unavailable: { status: 500, summary: 'The admin command needs a part (console links, custom faces) this process does not have' },
  unknown_command: { status: 400, summary: 'unknown admin command "…"' },
});
