/** The errors the sessions capability answers with (code, HTTP status, message); see `errorCatalogue`. */
import { errorCatalogue, type CatalogueEntry } from '../core/errors.js';
import { agentsErrors } from '../agents/errors.js';

export const sessionsErrors = errorCatalogue('sessions', {
  agent_building: { status: 409, message: "The agent's knowledge is being built; try again when brain-status is complete" },
  agent_inactive: { status: 409, summary: 'Agent … is inactive; PATCH its status to active to start sessions' },
  concurrency_limit: { status: 409, summary: 'Agent … already has … session(s) running (its concurrency_limit)' },
  free_concurrency: { status: 402, message: 'The free plan runs one session at a time; stop the running one first' },
  free_minutes_exhausted: { status: 402, summary: "The free plan's … session minutes for this month are used up" },
  insufficient_balance: { status: 402, message: 'The wallet balance is used up; top up to start sessions' },
  no_capacity: { status: 503, summary: 'No avatar is free, or this node is draining; try again shortly (Retry-After)' },
  session_not_found: { status: 404, summary: 'No session … in this account' },
});

/**
 * What a session start can answer, in the order it checks (docs/decisions.md, "Session start
 * checks"): listed by every route that starts one (POST /v1/sessions, the embed's and LiveAvatar's).
 */
export const SESSION_START_ERRORS: readonly CatalogueEntry[] = [
  agentsErrors.agent_not_found,
  sessionsErrors.agent_inactive,
  agentsErrors.unknown_avatar,
  agentsErrors.paid_feature,
  agentsErrors.unknown_voice,
  agentsErrors.voice_face_mismatch,
  agentsErrors.invalid_look,
  sessionsErrors.insufficient_balance,
  sessionsErrors.free_minutes_exhausted,
  sessionsErrors.agent_building,
  sessionsErrors.free_concurrency,
  sessionsErrors.concurrency_limit,
  sessionsErrors.no_capacity,
];
