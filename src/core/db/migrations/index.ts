/** Ordered list of migrations. Append only: a released migration is never edited. */
import type { Migration } from 'kysely';
import * as m0001 from './0001_accounts_agents.js';
import * as m0002 from './0002_sessions.js';
import * as m0003 from './0003_custom_faces.js';
import * as m0004 from './0004_conversations.js';
import * as m0005 from './0005_knowledge.js';
import * as m0006 from './0006_handoff_delivery.js';
import * as m0007 from './0007_billing.js';
import * as m0012 from './0012_notifications.js';
import * as m0013 from './0013_session_visitor.js';
import * as m0014 from './0014_reports.js';
import * as m0015 from './0015_conversation_days.js';
import * as m0024 from './0024_console.js';
import * as m0025 from './0025_knowledge_v2.js';
import * as m0026 from './0026_liveavatar.js';
import * as m0027faces from './0027_faces_per_account.js';
import * as m0029 from './0029_answer_quality.js';
import * as m0036 from './0036_nodes.js';
import * as m0037 from './0037_delivery_channels.js';

export const migrations: Record<string, Migration> = {
  '0001_accounts_agents': m0001,
  '0002_sessions': m0002,
  '0003_custom_faces': m0003,
  '0004_conversations': m0004,
  '0005_knowledge': m0005,
  '0006_handoff_delivery': m0006,
  '0007_billing': m0007,
  '0012_notifications': m0012,
  '0013_session_visitor': m0013,
  '0014_reports': m0014,
  '0015_conversation_days': m0015,
  '0024_console': m0024,
  '0025_knowledge_v2': m0025,
  '0026_liveavatar': m0026,
  '0027_faces_per_account': m0027faces,
  '0029_answer_quality': m0029,
  '0036_nodes': m0036,
  '0037_delivery_channels': m0037,
};
