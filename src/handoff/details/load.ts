/**
 * The detail parsers (chrono for dates, libphonenumber for phone numbers: some 25 MB) are loaded by
 * the first conversation whose agent has rules, not when the server starts.
 */
import { once } from '../../core/once.js';

export const detailParsers = once(async () => {
  const [offline, kinds] = await Promise.all([import('./offline.js'), import('./kinds.js')]);
  return { extractOffline: offline.extractOffline, normaliseValue: kinds.normaliseValue, unverifiedDetails: kinds.unverifiedDetails };
});
