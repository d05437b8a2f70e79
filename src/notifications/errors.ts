/** The errors the notifications capability answers with (code, HTTP status, message); see `errorCatalogue`. */
import { errorCatalogue } from '../core/errors.js';

export const notificationsErrors = errorCatalogue('notifications', {
  connect_token_not_found: { status: 404, message: 'No Telegram connect link with this token in this account' },
  conversation_not_found: { status: 404, summary: 'No ended conversation with id … in this account' },
  delivery_not_failed: { status: 409, message: 'Only a failed delivery can be replayed' },
  delivery_not_found: { status: 404, summary: 'No delivery … of this destination' },
  destination_limit: { status: 409, summary: 'An account has at most … notification destinations; delete one first' },
  destination_not_found: { status: 404, summary: 'No notification destination with id … in this account' },
  not_a_webhook: { status: 422, message: 'url, headers and rotate_secret apply to webhook destinations only' },
  rule_limit: { status: 409, summary: 'An agent has at most … alert rules; delete one first' },
  rule_not_found: { status: 404, summary: 'No alert rule with id … for this agent' },
  telegram_not_configured: { status: 503, summary: 'Telegram is not set up on this server (TELEGRAM_BOT_TOKEN)' },
  telegram_unavailable: { status: 502, summary: 'The Telegram Bot API did not answer: …' },
  telegram_webhook_set: {
    status: 409,
    message:
      'The Telegram bot delivers its updates to a webhook, so Presence cannot read the /start message: give Presence a bot of its own, or remove the webhook (deleteWebhook)',
  },
});
