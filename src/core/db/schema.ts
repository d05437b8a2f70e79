/** Row types of every table, for Kysely's type checking. Kept in step with migrations/. */
import type { ColumnType, Generated } from 'kysely';

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type Json<T> = ColumnType<T, string, string>;

export interface AccountsTable {
  id: Generated<number>;
  name: string;
  plan: 'free' | 'paid';
  balance_cents: ColumnType<number, number | undefined, number>;
  default_agent_id: number | null;
  created_at: Generated<Date>;
}

export interface ApiKeysTable {
  id: Generated<number>;
  account_id: number;
  key_hash: string;
  key_hint: string;
  permissions: string[];
  created_at: Generated<Date>;
  revoked_at: Date | null;
}

export interface Languages {
  main: string;
  also: string[];
}
export interface Studio {
  backdrop: string | null;
  cameras: Array<'far' | 'mid' | 'close'>;
  face_light: number;
}

export interface AgentsTable {
  id: Generated<number>;
  account_id: number;
  name: string;
  avatar_id: string;
  voice_id: string;
  tts_primary: string;
  languages: Json<Languages>;
  studio: Json<Studio>;
  website_url: string | null;
  system_prompt: string | null;
  concurrency_limit: number;
  welcome_message: string | null;
  fillers_enabled: boolean;
  status: string;
  embed: Json<Record<string, unknown>>;
  visitor_values: Json<Record<string, unknown>>;
  visitor_secret: string;
  visitor_secret_rotated_at: Timestamp;
  created_at: Generated<Date>;
  updated_at: Timestamp;
}

export interface SessionsTable {
  id: string;
  account_id: number;
  agent_id: number;
  mode: 'conversation' | 'render';
  status: 'active' | 'ended';
  avatar_id: string;
  voice_id: string;
  voice_provider: string;
  look: Json<Record<string, unknown>>;
  player_key: string;
  token_hash: string;
  max_session_seconds: number | null;
  created_at: Timestamp;
  player_opened_at: Date | null;
  ended_at: Date | null;
  end_reason: string | null;
  duration_seconds: number | null;
}

export interface UsageRecordsTable {
  id: Generated<number>;
  account_id: number;
  agent_id: number;
  session_id: string;
  voice_provider: string;
  seconds: number;
  month: string;
  recorded_at: Generated<Date>;
}

export interface CustomFacesTable {
  avatar_id: string;
  /** NULL: added by an operator, every account sees it. */
  account_id: number | null;
  name: string;
  gender: 'f' | 'm';
  description: string;
  default_voice_id: string;
  morphs: string[];
  size_bytes: number;
  sha256: string;
  glb: Uint8Array;
  created_at: Generated<Date>;
}

export interface ConversationsTable {
  id: string;
  account_id: number;
  agent_id: number;
  agent_name: string;
  mode: 'conversation' | 'render';
  visitor_id: string | null;
  visitor: ColumnType<Record<string, string>, string | undefined, string>;
  started_at: Timestamp;
  ended_at: Timestamp | null;
  duration_seconds: number | null;
  end_reason: string | null;
  visitor_turns: Generated<number>;
  agent_turns: Generated<number>;
  categories: Generated<string[]>;
  /** tsvector; written with to_tsvector() in SQL, never read as a value. */
  search: Generated<string>;
}

export interface ConversationTurnsTable {
  id: Generated<number>;
  conversation_id: string;
  role: 'visitor' | 'agent';
  text: string;
  at: Timestamp;
  language: string | null;
  details: Json<Record<string, unknown>>;
}

export interface KnowledgeBrainsTable {
  agent_id: number;
  account_id: number;
  status: Generated<'none' | 'pending' | 'processing' | 'complete' | 'failed'>;
  build_id: string | null;
  phase: string | null;
  discover: Generated<boolean>;
  build_pages: Generated<number[]>;
  pages_total: Generated<number>;
  pages_done: Generated<number>;
  error: string | null;
  engine: string | null;
  instructions: string | null;
  facts: ColumnType<unknown[], string | undefined, string>;
  site: ColumnType<Record<string, string>, string | undefined, string>;
  boilerplate: ColumnType<{ drop: string[]; keepOn: Record<string, string> }, string | undefined, string>;
  version: Generated<number>;
  requested_at: Timestamp | null;
  started_at: Timestamp | null;
  finished_at: Timestamp | null;
  updated_at: Generated<Date>;
}

export interface KnowledgePagesTable {
  id: Generated<number>;
  agent_id: number;
  url: string;
  is_primary: boolean;
  status: Generated<'pending' | 'read' | 'failed'>;
  title: string | null;
  extracted: string | null;
  content: string | null;
  content_override: string | null;
  final_url: string | null;
  error: string | null;
  read_at: Timestamp | null;
  read_build_id: string | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface KnowledgeSectionsTable {
  id: Generated<number>;
  agent_id: number;
  topic: string;
  title: string;
  content: string;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface KnowledgeAnswersTable {
  id: Generated<number>;
  agent_id: number;
  question: string;
  answer: string;
  gap_id: number | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface KnowledgeGapsTable {
  id: Generated<number>;
  agent_id: number;
  question: string;
  terms: string[];
  status: Generated<'open' | 'answered' | 'dismissed'>;
  times_asked: Generated<number>;
  first_asked_at: Generated<Date>;
  last_asked_at: Generated<Date>;
  last_conversation_id: string | null;
  answer: string | null;
  resolved_at: Timestamp | null;
}

export interface SettingsTable {
  key: string;
  value: string;
}

export interface Database {
  settings: SettingsTable;
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  agents: AgentsTable;
  sessions: SessionsTable;
  usage_records: UsageRecordsTable;
  custom_faces: CustomFacesTable;
  conversations: ConversationsTable;
  conversation_turns: ConversationTurnsTable;
  knowledge_brains: KnowledgeBrainsTable;
  knowledge_pages: KnowledgePagesTable;
  knowledge_sections: KnowledgeSectionsTable;
  knowledge_answers: KnowledgeAnswersTable;
  knowledge_gaps: KnowledgeGapsTable;
}
