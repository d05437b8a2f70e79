/**
 * Composition root: builds every capability over the shared core and mounts its routes.
 * Capabilities receive what they need explicitly; none reaches into another's storage.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import websocket from '@fastify/websocket';
import crypto from 'node:crypto';
import type { Config } from './core/config.js';
import type { OpenedDatabase } from './core/db/database.js';
import { registerErrorHandling } from './core/errors.js';
import { registerValidation } from './core/validation.js';
import { registerOpenApi } from './core/openapi.js';
import { ApiKeyAuthenticator, registerApiAuth } from './core/auth.js';
import { RateLimiter } from './core/rate-limit.js';
import { loggerOptions } from './core/logging.js';
import { AccountStore } from './accounts/accounts.js';
import { registerAdminEndpoint } from './accounts/admin.js';
import { StudioCatalog } from './catalog/catalog.js';
import { catalogRoutes } from './catalog/routes.js';
import { CustomFaces } from './catalog/custom-faces.js';
import { VoiceCatalog } from './speech/voices/catalog.js';
import { AgentService } from './agents/service.js';
import { agentRoutes } from './agents/routes.js';
import { PreviewLinks } from './agents/preview.js';
import { ensureSetting } from './core/settings.js';
import { SessionService } from './sessions/service.js';
import { sessionRoutes } from './sessions/routes.js';
import { RealtimeService, type SpeakerFactory } from './realtime/service.js';
import { registerSessionSockets } from './realtime/sockets.js';
import { SpeechService, speechConfigFromEnv } from './speech/synthesis.js';
import { voiceRoutes } from './speech/routes.js';
import { speakerFactory } from './realtime/speaker.js';
import { playerRoutes } from './player/routes.js';
import { registerPreviewSocket } from './realtime/preview.js';
import { metricsText } from './realtime/metrics.js';
import { randomToken, safeEqual } from './core/secrets.js';
import { isLoopback } from './core/net.js';
import { Jobs } from './core/jobs.js';
import { ConversationRecords } from './conversation/records.js';
import { WebsiteReader } from './knowledge/reader/reader.js';
import { KnowledgeService, type AgentDirectory } from './knowledge/service.js';
import { BrainBuilds } from './knowledge/builds.js';
import { knowledgeRoutes } from './knowledge/routes.js';
import { BrainKnowledge } from './brain/knowledge.js';
import { KnowledgeGaps } from './brain/gaps.js';
import { createBrain } from './brain/factory.js';
import { gapRoutes } from './brain/routes.js';
import type { AnswerEngine } from './brain/engine.js';

export interface AppContext {
  config: Config;
  database: OpenedDatabase;
  accounts: AccountStore;
  studio: StudioCatalog;
  customFaces: CustomFaces;
  voices: VoiceCatalog;
  agents: AgentService;
  sessions: SessionService;
  realtime: RealtimeService;
  speech: SpeechService;
  /** Durable background jobs (pg-boss), shared by every capability. */
  jobs: Jobs;
  /** Conversation records (one per session) and the conversation-ended hooks. */
  conversations: ConversationRecords;
  /** The Business Brain's knowledge: pages, sections, builds. */
  knowledge: KnowledgeService;
  /** The answering engine conversation mode speaks through (LLM with LLM_URL, else offline). */
  answers: AnswerEngine;
  /** Questions the agents could not answer. */
  gaps: KnowledgeGaps;
}

export interface BuildOptions {
  config: Config;
  database: OpenedDatabase;
  /** Token the operator CLI presents on the loopback admin endpoint. */
  adminToken?: string;
  logger?: boolean | object;
  /** The speech layer for agent.speak_text (tests may pass their own). */
  speakerFor?: SpeakerFactory;
  speech?: SpeechService;
}

export async function buildApp(options: BuildOptions): Promise<{ app: FastifyInstance; context: AppContext }> {
  const { config, database } = options;
  const app = Fastify({
    logger: options.logger ?? loggerOptions(config.logLevel),
    genReqId: (request) => {
      const incoming = request.headers['x-request-id'];
      return typeof incoming === 'string' && /^[\w.-]{1,64}$/.test(incoming) ? incoming : crypto.randomUUID();
    },
    bodyLimit: 2 * 1024 * 1024,
    forceCloseConnections: 'idle',
    return503OnClosing: true,
    routerOptions: { ignoreTrailingSlash: true },
  });

  // With the embedded database this process is the only writer, so hot records can be cached.
  const soleWriter = database.engine === 'pglite';
  const accounts = new AccountStore(database.db, soleWriter);
  const studio = new StudioCatalog();
  const customFaces = new CustomFaces(database.db, studio, { shared: database.engine === 'postgres', maxBytes: config.faceMaxBytes });
  await customFaces.start();
  const voices = new VoiceCatalog();
  const agents = new AgentService(database.db, accounts, studio, voices, config, soleWriter);
  const previews = new PreviewLinks(await ensureSetting(database.db, 'preview_signing_key', () => randomToken('', 32)), config);
  const speech = options.speech ?? new SpeechService(speechConfigFromEnv(process.env, config.dataDir), { voices, logger: app.log });
  const realtime = new RealtimeService(studio, options.speakerFor ?? speakerFactory(speech));
  const sessions = new SessionService(database.db, config, accounts, agents);
  const jobs = await Jobs.start(database, app.log);
  const conversations = new ConversationRecords(database.db, jobs, app.log, {
    agentName: async (agentId) => (await agents.byId(agentId))?.name ?? `Agent ${agentId}`,
    endedSessions: (ids) => sessions.endedRecords(ids),
  });
  sessions.hooks = {
    ...sessions.hooks,
    opened: (row) => {
      realtime.open(row);
      conversations
        .begin({ session: row })
        .catch((error) => app.log.error({ err: error, session_id: row.id }, 'conversation record could not begin'));
    },
    ended: (row, reason) => {
      realtime.end(row.id, reason);
      void conversations.end(row).catch((error) => app.log.error({ err: error, session_id: row.id }, 'conversation record could not end; it ends at the next start'));
    },
  };
  agents.onDelete.push((agent) => sessions.endAllForAgent(agent.id, 'agent_deleted'));
  await conversations.start();

  // The Business Brain: knowledge (reader, store, builds) and the answering engine over it.
  const directory: AgentDirectory = { get: (accountId, agentId) => agents.get(accountId, agentId), byId: (agentId) => agents.byId(agentId) };
  const knowledge = new KnowledgeService(database.db, jobs, new WebsiteReader({ allowPrivate: config.crawlAllowPrivate }), directory, { maxPages: config.crawlMaxPages });
  const brainKnowledge = new BrainKnowledge(knowledge, directory);
  const gaps = new KnowledgeGaps(database.db, knowledge, directory);
  const brain = createBrain(config, { knowledge: brainKnowledge, gaps }, app.log);
  const builds = new BrainBuilds(knowledge, brain.writer, app.log, config.crawlMaxPages, config.brainBuildStallSeconds);
  await builds.start();
  sessions.hooks.building = (agentId) => knowledge.isBuilding(agentId);
  agents.onDuplicate.push((source, copy) => knowledge.copy(source.id, copy!));
  // The rows go with the agent (foreign keys); the cached index goes now.
  agents.onDelete.push(async (agent) => brainKnowledge.drop(agent.id));

  const context: AppContext = { config, database, accounts, studio, customFaces, voices, agents, sessions, realtime, speech, jobs, conversations, knowledge, answers: brain.engine, gaps };

  registerValidation(app);
  registerErrorHandling(app);
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  // Frames up to 8 MB are read so that one over the protocol's 1 MB gets an error event, not a dropped socket.
  await app.register(websocket, { options: { maxPayload: 8 * 1024 * 1024 } });
  await registerOpenApi(app, config.publicUrl);
  registerApiAuth(app, new ApiKeyAuthenticator(accounts), new RateLimiter(config.rateLimitPerSecond));

  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
    sessions.stopTimers();
    customFaces.stop();
    realtime.stop();
    builds.stop();
  });
  app.addHook('onClose', async () => {
    await jobs.stop();
    if (!options.speech) await speech.close();
  });
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { hide: true } }, async (request, reply) => {
    if (closing) return reply.code(503).send({ status: 'shutting_down' });
    try {
      await database.db.selectFrom('accounts').select('id').limit(1).execute();
      return { status: 'ready', database: database.engine };
    } catch (error) {
      request.log.error({ err: error }, 'readiness check failed');
      return reply.code(503).send({ status: 'database_unavailable' });
    }
  });

  // Prometheus metrics of the real-time path: loopback only, or with METRICS_TOKEN as a bearer token.
  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    const token = config.metricsToken;
    const allowed = token ? safeEqual(request.headers.authorization ?? '', `Bearer ${token}`) : isLoopback(request.socket.remoteAddress);
    if (!allowed) return reply.code(404).send({ detail: 'Not Found' });
    return reply.type('text/plain; version=0.0.4').send(metricsText(realtime.hub.size));
  });

  if (options.adminToken) registerAdminEndpoint(app, accounts, options.adminToken, customFaces);
  catalogRoutes(app, studio, customFaces);
  agentRoutes(app, agents, previews);
  knowledgeRoutes(app, knowledge);
  gapRoutes(app, gaps);
  sessionRoutes(app, sessions, realtime, config);
  voiceRoutes(app, { speech, dataDir: config.dataDir });
  registerSessionSockets(app, sessions, realtime, studio);
  await playerRoutes(app, {
    resolve: async (playerKey) => {
      const row = await sessions.byPlayerKey(playerKey);
      if (!row) return null;
      const face = studio.face(row.avatar_id, row.account_id);
      return { status: row.status === 'active' ? 'valid' : 'ended', faceUrl: face?.model_url ?? null, title: face ? `${face.name} · Presence` : 'Presence' };
    },
    customFace: (avatarId) => customFaces.asset(avatarId),
    preview: async (token) => {
      const agentId = previews.verify(token);
      const agent = agentId === undefined ? undefined : await agents.byId(agentId);
      const face = agent && studio.face(agent.avatar_id, agent.account_id);
      return agent ? { faceUrl: face?.model_url ?? null, title: `${agent.name} · preview` } : null;
    },
  });
  registerPreviewSocket(app, previews, agents, realtime, studio);

  return { app, context };
}

