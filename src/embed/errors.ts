/** The errors the embed capability answers with (code, HTTP status, message); see `errorCatalogue`. */
import { errorCatalogue } from '../core/errors.js';

export const embedErrors = errorCatalogue('embed', {
  embed_key_not_found: { status: 404, message: 'No agent has this embed key (it may have been regenerated)' },
  invalid_visitor_values: { status: 422, summary: 'Visitor values refused, or values the agent needs are missing' },
  origin_not_allowed: { status: 403, summary: "The page's origin is not one of this agent's allowed origins" },
  rate_limited: { status: 429, message: 'Too many conversations started; try again shortly' },
});
