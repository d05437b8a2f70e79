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
  name: string | null;
  last_used_at: Date | null;
}

export interface ConsoleLinksTable {
  id: Generated<number>;
  account_id: number;
  token_hash: string;
  expires_at: Date;
  used_at: Date | null;
  created_at: Generated<Date>;
}

export interface ConsoleSessionsTable {
  id: Generated<number>;
  account_id: number;
  token_hash: string;
  permissions: string[];
  key_id: number | null;
  created_at: Generated<Date>;
  expires_at: Date;
  ended_at: Date | null;
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
  /** The id LiveAvatar customers' code sends as `avatar_id` (a UUID), unique in the account. */
  liveavatar_avatar_id: Generated<string | null>;
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
  /** The visitor this session talks to (public embed starts), and their verified values. */
  visitor_id: Generated<string | null>;
  visitor: ColumnType<Record<string, string>, string | undefined, string>;
  /** LiveAvatar-route sessions: end after this many seconds without a command or keep-alive. */
  idle_seconds: Generated<number | null>;
  last_active_at: Generated<Date | null>;
  /** The node that started the session and carries its sockets (several nodes on PostgreSQL); NULL on one node. */
  node_id: Generated<string | null>;
}

/** A running node of a multi-node deployment (PostgreSQL): its internal address and lease. */
export interface NodesTable {
  id: string;
  url: string;
  started_at: Generated<Date>;
  lease_until: Date;
  stopped_at: Generated<Date | null>;
}

export interface LiveAvatarTokensTable {
  session_id: string;
  account_id: number;
  agent_id: number;
  player_key: string;
  max_session_seconds: number | null;
  created_at: Generated<Date>;
  started_at: Date | null;
  stopped_at: Date | null;
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
  /** The file's unguessable address, `/assets/faces/<file_token>.glb` (`cf` + 32 hex digits). */
  file_token: string;
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
  /** Rule ids of the data handoffs delivered for this conversation (each once). */
  handoffs_delivered: Generated<string[]>;
  /** tsvector; written with to_tsvector() in SQL, never read as a value. */
  search: Generated<string>;
  /** Distinct knowledge gaps its answers raised (written with the turn that raised one). */
  gap_ids: Generated<number[]>;
  /** Answers its agent gave (agent turns with the engine's `answered` flag), and those it knew (migration 0029). */
  answers: Generated<number>;
  answered: Generated<number>;
  /** Each measured answer's voice-to-voice latency (the waterfall's first_audio, ms), in turn order. */
  answer_ms: Generated<number[]>;
}

/**
 * Per-day rollup of ended conversations (account, agent, UTC day of the start), kept by a trigger
 * on conversations (migration 0015); read by ConversationQueries only.
 */
export interface ConversationDaysTable {
  account_id: number;
  agent_id: number;
  day: string;
  conversations: number;
  seconds: string;
  visitor_turns: number;
  agent_turns: number;
  handoffs_delivered: number;
  answers: Generated<number>;
  answered: Generated<number>;
  /** Voice-to-voice latencies of the day's answers, counted per bucket (conversation/latency-buckets.ts; migration 0029). */
  answer_hist: Generated<number[]>;
}

/** Distinct gaps of the rollup: how many ended conversations of the day raised each. */
export interface ConversationDayGapsTable {
  account_id: number;
  agent_id: number;
  day: string;
  gap_id: number;
  conversations: number;
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
  v2_step: string | null;
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

export interface FactSourceRow {
  kind: 'page' | 'kb_section' | 'owner' | 'correction' | 'gap';
  ref: string | number | null;
  url?: string;
}

export interface KnowledgeQuestionsTable {
  id: Generated<number>;
  agent_id: number;
  key: string;
  question: string;
  topic: string;
  state: Generated<'needed' | 'not_applicable' | 'skipped'>;
  position: Generated<number>;
  created_at: Generated<Date>;
}

export interface KnowledgeFactsTable {
  id: Generated<number>;
  agent_id: number;
  question_id: number | null;
  text: string;
  sources: ColumnType<FactSourceRow[], string, string>;
  confidence: Generated<number>;
  origin: string | null;
  orphan: Generated<boolean>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface KnowledgeReviewsTable {
  id: Generated<number>;
  agent_id: number;
  question_id: number | null;
  fact_ids: number[];
  created_at: Generated<Date>;
}

export interface KnowledgePreviewsTable {
  id: string;
  agent_id: number;
  text: string;
  changes: ColumnType<Array<{ fact_id: number | null; before: string | null; after: string; question_id?: number | null }>, string, string>;
  created_at: Generated<Date>;
  expires_at: Timestamp;
  applied_at: Timestamp | null;
}

export interface KnowledgeSettingsTable {
  agent_id: number;
  behavior: ColumnType<Record<string, unknown>, string | undefined, string>;
  dynamic_instructions: Generated<string>;
  business_type: string | null;
  overruled: ColumnType<string[], string | undefined, string>;
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

export interface DeliveriesTable {
  id: string;
  account_id: number;
  owner_kind: string;
  owner_id: string;
  dedupe_key: string | null;
  conversation_id: string | null;
  kind: 'event' | 'test';
  /** `http` (a signed webhook) or a channel a capability registered (`telegram`). */
  channel: Generated<string>;
  /** The webhook URL, or another channel's target reference. */
  url: string;
  method: 'POST' | 'GET';
  content_type: string | null;
  headers: Json<Record<string, string>>;
  payload: string;
  secret: string;
  user_agent: string;
  status: 'pending' | 'retrying' | 'delivered' | 'failed' | 'skipped';
  attempts: Generated<number>;
  round_start: Generated<number>;
  next_attempt_at: Timestamp | null;
  last_error: string | null;
  created_at: Generated<Date>;
  updated_at: Timestamp;
  finished_at: Timestamp | null;
}

export interface DeliveryAttemptsTable {
  id: Generated<string>;
  delivery_id: string;
  number: number;
  at: Timestamp;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  response_excerpt: string | null;
}

export interface HandoffRulesTable {
  id: Generated<number>;
  account_id: number;
  agent_id: number;
  name: string;
  details: Json<unknown[]>;
  destination: Json<Record<string, unknown>>;
  enabled: boolean;
  state: Generated<'active' | 'needs_attention' | 'paused'>;
  secret: string;
  consecutive_failures: Generated<number>;
  created_at: Generated<Date>;
  updated_at: Timestamp;
}

export interface HandoffFindingsTable {
  conversation_id: string;
  agent_id: number;
  found: Json<Record<string, string>>;
  engine: string;
  created_at: Generated<Date>;
}

export interface SettingsTable {
  key: string;
  value: string;
}

export interface NotificationDestinationsTable {
  id: Generated<number>;
  account_id: number;
  type: 'webhook' | 'telegram';
  name: string;
  enabled: Generated<boolean>;
  state: Generated<'active' | 'needs_attention' | 'paused'>;
  url: string | null;
  headers: ColumnType<Record<string, string>, string | undefined, string>;
  secret: string | null;
  chat_id: string | null;
  chat_title: string | null;
  consecutive_failures: Generated<number>;
  last_error: string | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface NotificationRulesTable {
  id: Generated<number>;
  account_id: number;
  agent_id: number;
  name: string;
  category: string;
  conditions: ColumnType<Record<string, unknown>, string, string>;
  destination_ids: Generated<number[]>;
  enabled: Generated<boolean>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface NotificationsTable {
  id: Generated<string>;
  account_id: number;
  agent_id: number;
  agent_name: string;
  conversation_id: string | null;
  rule_id: number | null;
  source: Generated<string>;
  dedupe_key: string;
  category: string;
  title: string;
  body: string;
  created_at: Generated<Date>;
  read_at: Timestamp | null;
}

export interface NotificationPrefsTable {
  agent_id: number;
  account_id: number;
  categories: ColumnType<Record<string, boolean>, string | undefined, string>;
  quiet_hours: ColumnType<{ start: string; end: string; timezone: string } | null, string | null | undefined, string | null>;
  updated_at: Generated<Date>;
}

export interface NotificationTelegramLinksTable {
  token_hash: string;
  account_id: number;
  created_at: Generated<Date>;
  expires_at: Timestamp;
  destination_id: number | null;
  connected_at: Timestamp | null;
}

export interface Database {
  settings: SettingsTable;
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  console_links: ConsoleLinksTable;
  console_sessions: ConsoleSessionsTable;
  agents: AgentsTable;
  sessions: SessionsTable;
  nodes: NodesTable;
  liveavatar_tokens: LiveAvatarTokensTable;
  usage_records: UsageRecordsTable;
  custom_faces: CustomFacesTable;
  conversations: ConversationsTable;
  conversation_turns: ConversationTurnsTable;
  conversation_days: ConversationDaysTable;
  conversation_day_gaps: ConversationDayGapsTable;
  knowledge_brains: KnowledgeBrainsTable;
  knowledge_pages: KnowledgePagesTable;
  knowledge_sections: KnowledgeSectionsTable;
  knowledge_answers: KnowledgeAnswersTable;
  knowledge_gaps: KnowledgeGapsTable;
  knowledge_questions: KnowledgeQuestionsTable;
  knowledge_facts: KnowledgeFactsTable;
  knowledge_reviews: KnowledgeReviewsTable;
  knowledge_previews: KnowledgePreviewsTable;
  knowledge_settings: KnowledgeSettingsTable;
  notification_destinations: NotificationDestinationsTable;
  notification_rules: NotificationRulesTable;
  notifications: NotificationsTable;
  notification_prefs: NotificationPrefsTable;
  notification_telegram_links: NotificationTelegramLinksTable;
  deliveries: DeliveriesTable;
  delivery_attempts: DeliveryAttemptsTable;
  handoff_rules: HandoffRulesTable;
  handoff_findings: HandoffFindingsTable;
}
