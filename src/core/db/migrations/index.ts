/** Ordered list of migrations. Append only: a released migration is never edited. */
import type { Migration } from 'kysely';
import * as m0001 from './0001_accounts_agents.js';
import * as m0002 from './0002_sessions.js';
import * as m0003 from './0003_custom_faces.js';
import * as m0004 from './0004_conversations.js';
import * as m0005 from './0005_knowledge.js';

export const migrations: Record<string, Migration> = {
  '0001_accounts_agents': m0001,
  '0002_sessions': m0002,
  '0003_custom_faces': m0003,
  '0004_conversations': m0004,
  '0005_knowledge': m0005,
};
