/** The errors the knowledge capability answers with (code, HTTP status, message); see `errorCatalogue`. */
import { errorCatalogue } from '../core/errors.js';

export const knowledgeErrors = errorCatalogue('knowledge', {
  build_in_progress: { status: 409, message: 'A build of this agent is already running; poll brain-status until it is complete or failed' },
  invalid_url: { status: 422, message: 'url must be an http(s) URL of a web page' },
  no_website: { status: 422, summary: 'The agent has no website_url to read' },
  page_limit: { status: 422, summary: 'An agent holds at most … pages; delete some first' },
  page_not_found: { status: 404, summary: 'No page with id … for this agent' },
  private_address: { status: 422, summary: 'private address' },
  section_exists: { status: 409, summary: 'A section with topic "…" exists; update it with PATCH …/kb-sections/…' },
  section_limit: { status: 422, summary: 'An agent holds at most … knowledge-base sections' },
  section_not_found: { status: 404, summary: 'No knowledge-base section "…" for this agent' },
  too_many_pages: { status: 422, summary: 'A build reads at most … pages (CRAWL_MAX_PAGES); … were given' },
  website_unreachable: { status: 422, summary: 'The website … could not be read: …' },
});
