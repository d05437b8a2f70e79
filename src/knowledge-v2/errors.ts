/** The errors the knowledge-v2 capability answers with (code, HTTP status, message); see `errorCatalogue`. */
import { errorCatalogue } from '../core/errors.js';

export const knowledgeV2Errors = errorCatalogue('knowledge-v2', {
  fact_limit: { status: 422, summary: 'An agent holds at most … facts; remove or consolidate some first' },
  preview_not_found: { status: 404, summary: 'No correction preview … to apply (unknown, already applied or expired)' },
  question_not_found: { status: 404, summary: 'No question with id … for this agent' },
  review_not_found: { status: 404, summary: 'No review item with id … for this agent' },
});
