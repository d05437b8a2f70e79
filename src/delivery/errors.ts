/** The errors the delivery capability answers with (code, HTTP status, message); see `errorCatalogue`. */
import { errorCatalogue } from '../core/errors.js';

export const deliveryErrors = errorCatalogue('delivery', {
  invalid_url: { status: 422, summary: 'The webhook URL is not an http(s) URL, or carries credentials' },
  private_address: { status: 422, summary: '… is a loopback or private-network address (…); webhooks must be on the public internet' },
});
