/** The errors the handoff capability answers with (code, HTTP status, message); see `errorCatalogue`. */
import { errorCatalogue } from '../core/errors.js';

export const handoffErrors = errorCatalogue('handoff', {
  delivery_not_failed: { status: 409, message: 'Only a failed delivery can be replayed' },
  delivery_not_found: { status: 404, message: 'Delivery not found' },
  destination_unavailable: { status: 422, message: 'The chat-messenger (Telegram) destination is not available on this deployment yet' },
  rule_limit: { status: 422, summary: 'An agent has at most … handoff rules' },
  rule_not_found: { status: 404, message: 'Rule not found' },
});
