/**
 * Composition root: builds every capability over the shared core and mounts its routes.
 * Capabilities receive what they need explicitly; none reaches into another's storage.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import websocket from '@fastify/websocket';
import { CLOSE_SERVER_RESTART } from './realtime/protocol.js';
import crypto from 'node:crypto';
import path from 'node:path';
import type { Config } from './core/config.js';
import type { OpenedDatabase } from './core/db/database.js';
import { frameworkErrors, registerErrorHandling } from './core/errors.js';
import { registerValidation } from './core/validation.js';
import { registerOpenApi } from './core/openapi.js';
import { referenceRoutes } from './reference/routes.js';
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
import { PreviewLinks } from './agents/preview-links.js';
import { ensureSetting } from './core/settings.js';
import { SessionService } from './sessions/service.js';
import { sessionRoutes } from './sessions/routes.js';
import { SESSION_START_ERRORS } from './sessions/errors.js';
import { commandRoute } from './realtime/command-route.js';
import { RealtimeService, type SpeakerFactory } from './realtime/service.js';
import { registerSessionSockets, type SessionSockets } from './realtime/sockets.js';
import { ShardPool } from './realtime/shards/pool.js';
import { forwardCommand, forwardMetricsText, type NodeForwarding } from './realtime/node-forward.js';
import { NodeRegistry } from './sessions/nodes.js';
import type { VisitorInputs } from './realtime/visitor-input.js';
import { embedRoutes } from './embed/routes.js';
import { SpeechService } from './speech/synthesis.js';
import { voiceRoutes } from './speech/routes.js';
import { speakerFactory } from './realtime/speaker.js';
import { playerRoutes } from './player/routes.js';
import { registerPreviewSocket } from './realtime/agent-preview.js';
import { metricsText } from './realtime/metrics.js';
import { randomToken, safeEqual } from './core/secrets.js';
import { isLoopback } from './core/net.js';
import { Jobs } from './core/jobs.js';
import { DatabaseMaintenance } from './core/db/maintenance.js';
import { ConversationRecords } from './conversation/records.js';
import { WebsiteReader } from './knowledge/reader/reader.js';
import { KnowledgeService, type AgentDirectory } from './knowledge/service.js';
import { BrainBuilds } from './knowledge/builds.js';
import { knowledgeRoutes } from './knowledge/routes.js';
import { KnowledgeV2 } from './knowledge-v2/service.js';
import { KnowledgeModel } from './knowledge-v2/model.js';
import { knowledgeV2Routes } from './knowledge-v2/routes.js';
import { BrainKnowledge } from './brain/knowledge.js';
import { KnowledgeGaps } from './brain/gaps.js';
import { createBrain, semanticSearch } from './brain/factory.js';
import { gapRoutes } from './brain/routes.js';
import type { AnswerEngine } from './brain/engine.js';
import { BillingMeter, isPremiumProvider } from './billing/meter.js';
import { meteredSpeakers } from './billing/voice.js';
import { BillingService } from './billing/service.js';
import { StripePayments } from './billing/stripe.js';
import { LiveAvatarService } from './liveavatar/service.js';
import { liveAvatarRoutes } from './liveavatar/routes.js';
import { billingRoutes } from './billing/routes.js';
import { adjustTo } from './billing/ledger.js';
import { NotificationService } from './notifications/service.js';
import { notificationRoutes } from './notifications/routes.js';
import { TelegramBot } from './notifications/telegram.js';
import { ConversationLoop } from './conversation/service.js';
import { ConversationSpeech } from './speech/conversation.js';
import { createRecognizer, SherpaRecognizer, type Recognizer } from './speech/recognition/index.js';
import { ModelDownloads } from './speech/models/downloads.js';
import { pinnedModels, type ModelSpec } from './speech/models/manifest.js';
import { modelsWanted } from './speech/models/plan.js';
import { notificationDeliveries } from './notifications/deliveries.js';
import type { Destinations } from './notifications/destinations.js';
import { DeliveryEngine } from './delivery/engine.js';
import { Handoff } from './handoff/handoff.js';
import { DetailFinder } from './handoff/details/finder.js';
import { handoffRoutes } from './handoff/routes.js';
import { llmClient } from './brain/llm.js';
import { ConversationQueries } from './conversation/queries.js';
import { ReportsService } from './reports/service.js';
import { reportRoutes } from './reports/routes.js';
import { keyRoutes } from './accounts/routes.js';
import { ConsoleSignIns } from './console/signin.js';
import { consoleRoutes } from './console/routes.js';

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
  /** The processes that carry render-mode sessions' real-time path (REALTIME_SHARDS), if any. */
  shards?: ShardPool;
  /** The nodes of a deployment on PostgreSQL (leases, sessions' owners); started once the node listens. */
  nodes?: NodeRegistry;
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
  /** The session sockets (the player channel's input figures). */
  sockets?: SessionSockets;
  /** Alert rules, inbox, prefs, destinations; `notifications.channels` posts for other capabilities. */
  notifications: NotificationService;
  /** Conversation mode's live loop: one live conversation per conversation-mode session (`inputs` for the player channel). */
  conversationLoop: ConversationLoop;
  /** Durable deliveries, the one retry engine: signed webhooks (handoffs, notification destinations) and Telegram messages. */
  deliveries: DeliveryEngine;
  /** Data handoffs: rules, details found after each conversation, `missingDetails` while it runs. */
  handoff: Handoff;
  /** The console's sign-in links and sessions (the first start prints a link). */
  consoleSignIns: ConsoleSignIns;
}

/** Billing (src/billing) in the app's context. */
export interface BillingContext {
  /** Charges running sessions to the wallet's ledger. */
  meter: BillingMeter;
  /** The wallet, billing reports and Stripe top-ups. */
  billing: BillingService;
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
  /** Where the player channel hands a conversation's microphone, typed turns and mute (tests may pass their own). */
  visitorInputs?: VisitorInputs;
  /** The models fetched in the background (tests point them at a local server with their own pins). */
  models?: { specs?: ModelSpec[]; connectTimeoutMs?: number };
}

export async function buildApp(options: BuildOptions): Promise<{ app: FastifyInstance; context: AppContext & BillingContext }> {
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
    frameworkErrors,
  });

  // With the embedded database this process is the only writer, so hot records can be cached.
  const soleWriter = database.engine === 'pglite';
  const accounts = new AccountStore(database.db, adjustTo, soleWriter);
  const studio = new StudioCatalog();
  const customFaces = new CustomFaces(database.db, studio, { shared: database.engine === 'postgres', maxBytes: config.faceMaxBytes });
  await customFaces.start();
  const voices = new VoiceCatalog();
  const agents = new AgentService(database.db, accounts, studio, voices, config, soleWriter);
  const previews = new PreviewLinks(await ensureSetting(database.db, 'preview_signing_key', () => randomToken('', 32)), config);
  const speech = options.speech ?? new SpeechService(config.speech, { voices, logger: app.log });
  const sessions = new SessionService(database.db, config, accounts, agents);
  // Several nodes may share PostgreSQL: each registers (server.ts starts it once listening), owns
  // the sessions it starts, and ends a lost node's sessions through the same end as any other.
  const nodes =
    database.engine === 'postgres'
      ? new NodeRegistry(database.db, config.nodeLeaseSeconds, {
          endSession: (id, reason) => sessions.end(id, reason),
          settleEndedElsewhere: () => sessions.settleEndedElsewhere(),
          log: app.log,
        })
      : undefined;
  // Billing meters every session through the sessions hooks, and premium speech through the speakers.
  const meter: BillingMeter = new BillingMeter(
    database.db,
    { ...config.billing, freeMonthlySeconds: config.freeMonthlySeconds },
    accounts,
    {
      endSession: (id, reason) => sessions.end(id, reason),
      secondsUsedThisMonth: (accountId) => sessions.secondsUsedThisMonth(accountId),
    },
    app.log,
  );
  // The billing-aware speaker factory: premium speech is counted for the session's charge.
  const billedSpeakers = meteredSpeakers(options.speakerFor ?? speakerFactory(speech), (id, ms) => meter.voiced(id, ms));
  const realtime = new RealtimeService(studio, billedSpeakers);
  // REALTIME_SHARDS: render-mode sessions' real-time path runs in shard processes (one event loop
  // per core); conversation mode, previews and everything else stay in this process.
  // They start (a couple of seconds of loading) while the rest is built; awaited before routes.
  const shardsStarting =
    config.realtimeShards > 0
      ? ShardPool.start({
          count: config.realtimeShards,
          log: app.log,
          speakerFor: billedSpeakers,
          faceFor: (row) => studio.face(row.avatar_id, row.account_id) ?? null,
        })
      : undefined;
  let shards: ShardPool | undefined;
  const liveSide = (row: { mode: string }) => (shards && row.mode === 'render' ? shards : realtime);
  const jobs = await Jobs.start(database, app.log);
  // The embedded database has no autovacuum: VACUUM (ANALYZE) on a timer (src/core/db/maintenance.ts).
  const maintenance = database.engine === 'pglite' ? new DatabaseMaintenance(database.db, app.log) : undefined;
  await maintenance?.start();
  // The one retry engine (src/delivery): signed webhooks of handoffs and notification destinations,
  // and notifications' Telegram channel. Owners and channels register before deliveries.start() below.
  const deliveries = new DeliveryEngine(database.db, jobs, app.log, {
    retryDelays: config.webhookRetryDelays,
    timeoutSeconds: config.webhookTimeoutSeconds,
    allowPrivate: config.webhookAllowPrivate,
  });
  const conversations = new ConversationRecords(database.db, jobs, app.log, {
    agentName: async (agentId) => (await agents.byId(agentId))?.name ?? `Agent ${agentId}`,
    endedSessions: (ids) => sessions.endedRecords(ids),
  });

  // Finds a rule's details in a conversation (LLM or offline): handoffs and notifications use it.
  const finder = new DetailFinder(
    config.llmUrl
      ? {
          client: await llmClient({
            url: config.llmUrl,
            apiKey: config.llmApiKey,
            model: config.llmModel,
            firstTokenTimeoutMs: config.llmTimeoutSeconds * 1000,
            totalTimeoutMs: config.llmTimeoutSeconds * 4000,
          }),
          model: config.llmModel,
          timeoutMs: config.llmTimeoutSeconds * 4000,
        }
      : undefined,
    app.log,
  );
  // Notifications: alert rules evaluated when a conversation ends (registered before the ended
  // queue is worked, so no ended conversation passes them by).
  const telegramBot = config.telegramBotToken
    ? await TelegramBot.create(config.telegramBotToken, config.telegramApiUrl, config.webhookTimeoutSeconds)
    : undefined;
  const notifications: NotificationService = new NotificationService(
    database.db,
    jobs,
    {
      agent: (accountId, agentId) => agents.get(accountId, agentId),
      conversation: async (accountId, id) => {
        const conversation = await conversations.ended(id);
        return conversation?.accountId === accountId ? conversation : undefined;
      },
      tagConversation: (id, category) => conversations.tag(id, category),
      // A detail collected: a value the website passed, else handoff's extractors (LLM or offline).
      findDetail: async (conversation, name) =>
        conversation.visitor[name]?.trim() ||
        (await finder.find({ transcript: conversation.transcript, details: [{ name, description: name, required: false }], reference: new Date() })).values[
          name
        ] ||
        undefined,
    },
    {
      retryDelays: config.webhookRetryDelays,
      llm: config.llmUrl ? { url: config.llmUrl, apiKey: config.llmApiKey, model: config.llmModel, timeoutMs: config.llmTimeoutSeconds * 1000 } : undefined,
    },
    app.log,
    telegramBot,
    // Registers notifications' owner and its Telegram channel on the engine (before it starts).
    notificationDeliveries(deliveries, (): Destinations => notifications.destinations, telegramBot),
  );
  await notifications.start();
  conversations.onEnded.push((conversation) => notifications.conversationEnded(conversation));
  // Data handoff: after each conversation, the agent's rules whose required details were found
  // are sent (signed webhooks through the delivery engine; the inbox and Telegram through
  // notifications' channels). Registered before the ended queue is worked.
  // The reports read conversations through the conversation capability's queries.
  const conversationQueries = new ConversationQueries(database.db);
  const handoff = new Handoff(
    database.db,
    jobs,
    deliveries,
    finder,
    {
      conversation: (id) => conversations.ended(id),
      delivered: (conversationId, ruleId, db) => conversationQueries.handoffDelivered(conversationId, ruleId, db),
      postInbox: async (message) => {
        const agent = await agents.byId(message.agentId);
        await notifications.channels.postToInbox({
          accountId: message.accountId,
          agentId: message.agentId,
          agentName: agent?.name ?? `Agent ${message.agentId}`,
          conversationId: message.conversationId,
          category: 'handoff',
          title: message.title,
          body: message.body,
          key: message.dedupeKey,
        });
      },
      // The chat messenger exists only with a bot token; without one, rules cannot name it (422).
      ...(config.telegramBotToken && {
        sendChat: async (message) => {
          const sent = await notifications.channels.sendTelegram({
            accountId: message.accountId,
            destinationId: message.chatDestinationId ?? 0,
            text: `${message.title}\n${message.body}`,
            key: message.dedupeKey,
          });
          if (!sent) throw new Error("the Telegram destination is not one of the account's connected chats");
        },
        isChat: (accountId, destinationId) => notifications.channels.isTelegramDestination(accountId, destinationId),
      }),
    },
    app.log,
  );
  await handoff.start();
  conversations.onEnded.push(handoff.onConversationEnded);
  // The durable after-conversation entry: the ended session's last charge (idempotent).
  conversations.onEnded.push((ended) => meter.finish(ended.sessionId, ended.durationSeconds, ended.endReason));
  await conversations.start();
  await meter.start();

  // The Business Brain: knowledge (reader, store, builds) and the answering engine over it.
  const directory: AgentDirectory = { get: (accountId, agentId) => agents.get(accountId, agentId), byId: (agentId) => agents.byId(agentId) };
  const knowledge = new KnowledgeService(database.db, jobs, new WebsiteReader({ allowPrivate: config.crawlAllowPrivate }), directory, {
    maxPages: config.crawlMaxPages,
  });
  const brainKnowledge = new BrainKnowledge(knowledge, directory, 100, semanticSearch(config, app.log));
  const gaps = new KnowledgeGaps(database.db, knowledge, directory);
  const brain = await createBrain(config, { knowledge: brainKnowledge, gaps }, app.log);
  const builds = new BrainBuilds(knowledge, brain.writer, app.log, config.crawlMaxPages, config.brainBuildStallSeconds);
  // Knowledge v2: its build steps run inside brain builds; with LLM_URL the model does each step.
  const knowledgeModel = config.llmUrl
    ? new KnowledgeModel(
        await llmClient({
          url: config.llmUrl,
          apiKey: config.llmApiKey,
          model: config.llmModel,
          firstTokenTimeoutMs: config.llmTimeoutSeconds * 1000,
          totalTimeoutMs: 60_000,
        }),
        config.llmModel,
      )
    : undefined;
  const knowledgeV2 = new KnowledgeV2(knowledge, knowledgeModel, app.log);
  builds.v2 = {
    schema: (agentId, signal) => knowledgeV2.schemaStep(agentId, signal),
    extract: (agentId, signal) => knowledgeV2.extractStep(agentId, signal),
    overruled: (agentId) => knowledgeV2.overruledOf(agentId),
    addendum: (agentId) => knowledgeV2.addendum(agentId),
  };
  await builds.start();
  sessions.hooks.building = (agentId) => knowledge.isBuilding(agentId);
  agents.onDuplicate.push((source, copy) => knowledge.copy(source.id, copy!));
  // The rows go with the agent (foreign keys); the cached index goes now.
  agents.onDelete.push(async (agent) => brainKnowledge.drop(agent.id));

  // Conversation mode's live loop: heard or typed turn → answering engine → speech → realtime.
  // Good ears and voice out of the box: where no engine is configured, the pinned streaming
  // recogniser and Kokoro are fetched into DATA_DIR/models in the background (never awaited here)
  // and take over, without a restart, once verified. A node that has them uses them at once.
  const modelDownloads = new ModelDownloads({
    dir: path.join(config.dataDir, 'models'),
    specs: options.models?.specs ?? pinnedModels(config.models.baseUrl),
    log: app.log,
    connectTimeoutMs: options.models?.connectTimeoutMs,
  });
  const wantedModels = modelsWanted(config, speech.config);
  const fetchedStt = wantedModels.stt === true ? modelDownloads.installed('stt') : undefined;
  const recognizer = await createRecognizer(config, app.log, fetchedStt);
  const conversationLoop = new ConversationLoop({
    records: conversations,
    answers: brain.engine,
    realtime,
    speech: new ConversationSpeech(speech),
    voices,
    // The billing-aware factory, so premium speech the loop voices is charged like speak_text's.
    speakerFor: billedSpeakers,
    agentById: (agentId) => agents.byId(agentId),
    endSession: (sessionId, reason) => sessions.end(sessionId, reason),
    recognizer,
    timing: { idleMs: config.conversationIdleSeconds * 1000, visitorLeftGraceMs: config.visitorLeftSeconds * 1000 },
    preemptive: config.preemptiveAnswers,
    // Speech thrown away with a prepared answer would be billed (and paid to the provider): premium
    // voices start speaking at commit; the offline and Kokoro voices prepare the first audio ahead.
    preparesSpeech: (provider) => !isPremiumProvider(provider),
    // The answering engine asks the visitor for the required handoff details still missing.
    missingDetails: (facts) => handoff.missingDetails({ accountId: facts.accountId, agentId: facts.agentId, transcript: facts.history }),
    log: app.log,
  });

  let fetchedRecognizer: Recognizer | undefined;
  // Set by preClose (below): a model verified while the app closes is closed, not handed over.
  let closing = false;
  modelDownloads.start(wantedModels, async (spec, folder) => {
    if (spec.id === 'kokoro') return speech.useKokoroModel(folder);
    if (fetchedStt && recognizer instanceof SherpaRecognizer) return; // hearing with it since start
    const loaded = await SherpaRecognizer.load(folder);
    if (closing) return void (await loaded.close());
    fetchedRecognizer = loaded;
    conversationLoop.useRecognizer(loaded);
    app.log.info(
      { engine: 'sherpa-onnx', kind: loaded.model.kind },
      `speech recognition: the fetched sherpa-onnx ${loaded.model.kind} model from ${folder} hears visitors from now on (conversations already open keep their engine)`,
    );
  });

  // A session's life reaches the live side, billing, its conversation record and the live loop.
  sessions.hooks = {
    ...sessions.hooks,
    opened: (row) => {
      speech.prewarm();
      liveSide(row).open(row);
      meter.opened(row).catch((error) => app.log.error({ err: error, session_id: row.id }, 'billing meter could not open'));
      conversations
        .begin({ session: row, visitorId: row.visitor_id, visitor: row.visitor })
        .catch((error) => app.log.error({ err: error, session_id: row.id }, 'conversation record could not begin'));
      conversationLoop.ensure(row);
    },
    ending: (id) => meter.ending(id),
    notEnded: (id) => meter.notEnded(id),
    ended: (row, reason) => {
      conversationLoop.close(row.id);
      liveSide(row).end(row.id, reason);
      meter
        .finish(row.id, Number(row.duration_seconds ?? 0), reason)
        .catch((error) =>
          app.log.error({ err: error, session_id: row.id }, 'billing could not charge an ended session; the conversation-ended job charges it'),
        );
      void conversations
        .end(row)
        .catch((error) => app.log.error({ err: error, session_id: row.id }, 'conversation record could not end; it ends at the next start'));
    },
  };
  agents.onDelete.push((agent) => sessions.endAllForAgent(agent.id, 'agent_deleted'));

  // Every owner of deliveries (handoff, notifications) has registered above: attempts may run now.
  await deliveries.start();

  const stripe = config.billing.stripeSecretKey
    ? await StripePayments.create(config.billing.stripeSecretKey, config.billing.stripeApiBase, config.billing.stripeWebhookSecret)
    : undefined;
  const billing = new BillingService(
    database.db,
    config,
    accounts,
    {
      agentName: async (agentId) => (await agents.byId(agentId))?.name,
      agentCount: (accountId) => agents.count(accountId),
      secondsUsedThisMonth: (accountId) => sessions.secondsUsedThisMonth(accountId),
    },
    stripe,
  );

  shards = await shardsStarting;
  // The console signs in with links or keys for a cookie that every /v1 route takes too.
  const consoleSignIns = new ConsoleSignIns(database.db, () => config.publicUrl);
  const context: AppContext & BillingContext = {
    config,
    database,
    accounts,
    studio,
    customFaces,
    voices,
    agents,
    sessions,
    realtime,
    shards,
    nodes,
    speech,
    jobs,
    conversations,
    knowledge,
    answers: brain.engine,
    gaps,
    notifications,
    conversationLoop,
    deliveries,
    handoff,
    meter,
    billing,
    consoleSignIns,
  };

  registerValidation(app);
  registerErrorHandling(app);
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  // Frames up to 8 MB are read so that one over the protocol's 1 MB gets an error event, not a dropped socket.
  await app.register(websocket, {
    options: { maxPayload: 8 * 1024 * 1024 },
    // A node shutting down does not end its sessions: every socket is told to reconnect (1012,
    // "service restart"), not closed without a code (the plugin's default), see realtime.stop().
    preClose(this: FastifyInstance, done: () => void) {
      for (const client of this.websocketServer.clients) client.close(CLOSE_SERVER_RESTART, 'server restarting');
      this.websocketServer.close();
      done();
    },
  });
  await registerOpenApi(app, config.publicUrl);
  referenceRoutes(app, () => config.publicUrl);
  const authenticator = new ApiKeyAuthenticator(accounts);
  // A revoked key answers 401 at once, and the console sign-ins made with it end.
  accounts.onKeyRevoked.push(
    (keyId) => authenticator.forgetKey(keyId),
    (keyId) => consoleSignIns.endForKey(keyId),
  );
  registerApiAuth(app, authenticator, new RateLimiter(config.rateLimitPerSecond), consoleSignIns.authenticate);

  app.addHook('preClose', async () => {
    closing = true;
    await nodes?.stop();
    sessions.stopTimers();
    maintenance?.stop();
    customFaces.stop();
    conversationLoop.stop();
    realtime.stop();
    await shards?.stop();
    builds.stop();
    notifications.stop();
    deliveries.stop();
    await meter.stop();
  });
  app.addHook('onClose', async () => {
    await jobs.stop();
    await modelDownloads.stop();
    await recognizer?.close();
    await fetchedRecognizer?.close();
    if (!options.speech) await speech.close();
  });
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  // Ready = the database answers and the speech layer can voice text (its start succeeded; a failed
  // start is tried again here, so readiness comes back on its own).
  app.get('/readyz', { schema: { hide: true } }, async (request, reply) => {
    if (closing) return reply.code(503).send({ status: 'shutting_down' });
    if (sessions.draining) return reply.code(503).send({ status: 'draining', live_sessions: await sessions.liveHere() });
    try {
      await database.db.selectFrom('accounts').select('id').limit(1).execute();
    } catch (error) {
      request.log.error({ err: error }, 'readiness check failed');
      return reply.code(503).send({ status: 'database_unavailable' });
    }
    if (!speech.isReady()) {
      void speech.start().catch((error) => request.log.warn({ err: { message: (error as Error)?.message } }, 'speech is not ready yet'));
      return reply.code(503).send({ status: 'speech_starting', database: database.engine, models: modelDownloads.status.snapshot() });
    }
    // Models being fetched never hold readiness back: the offline engines speak and hear meanwhile.
    return { status: 'ready', database: database.engine, speech: 'ready', models: modelDownloads.status.snapshot() };
  });

  // Prometheus metrics of the real-time path: loopback only, or with METRICS_TOKEN as a bearer token.
  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    const token = config.metricsToken;
    const allowed = token ? safeEqual(request.headers.authorization ?? '', `Bearer ${token}`) : isLoopback(request.socket.remoteAddress);
    if (!allowed) return reply.code(404).send({ detail: 'Not Found' });
    return reply
      .type('text/plain; version=0.0.4')
      .send(
        metricsText(
          realtime.hub.size,
          [conversationLoop.preemptiveStats.metricsText(), ...(nodes ? [forwardMetricsText()] : [])],
          shards ? await shards.metrics() : [],
        ),
      );
  });

  if (options.adminToken) registerAdminEndpoint(app, accounts, options.adminToken, customFaces, consoleSignIns);
  keyRoutes(app, accounts);
  consoleRoutes(app, {
    signIns: consoleSignIns,
    authenticateKey: (authorization) => authenticator.authenticate(authorization),
    account: (accountId) => accounts.require(accountId),
    publicUrl: () => config.publicUrl,
    sessionCapacity: config.sessionCapacity,
  });
  catalogRoutes(app, studio, customFaces);
  agentRoutes(app, agents, previews);
  knowledgeRoutes(app, knowledge);
  knowledgeV2Routes(app, knowledge, knowledgeV2);
  gapRoutes(app, gaps);
  billingRoutes(app, billing);
  reportRoutes(
    app,
    new ReportsService(conversationQueries, {
      account: (accountId) => accounts.require(accountId),
      agents: (accountId) => agents.list(accountId),
    }),
  );
  notificationRoutes(app, notifications);
  handoffRoutes(app, { handoff, agent: (accountId, agentId) => agents.get(accountId, agentId) });
  sessionRoutes(app, sessions, config);
  // LiveAvatar LITE's REST around the render socket (contract.md): its tokens start render sessions.
  const liveAvatar = new LiveAvatarService(
    database.db,
    await ensureSetting(database.db, 'liveavatar_signing_key', () => randomToken('', 32)),
    {
      agentFor: async (accountId, avatarId) => {
        if (/^[1-9][0-9]{0,9}$/.test(avatarId)) return agents.get(accountId, Number(avatarId)).catch(() => undefined);
        return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(avatarId)
          ? agents.byLiveAvatarId(accountId, avatarId.toLowerCase())
          : undefined;
      },
      startSession: async (accountId, agentId, options) => {
        const { row, token } = await sessions.start(
          accountId,
          { agent_id: agentId, mode: 'render' } as Parameters<typeof sessions.start>[1],
          undefined,
          options,
        );
        return { renderToken: token, maxSessionSeconds: row.max_session_seconds };
      },
      session: async (accountId, sessionId) => sessions.get(accountId, sessionId).catch(() => undefined),
      endSession: async (sessionId, reason) => void (await sessions.end(sessionId, reason)),
      touch: (sessionId) => sessions.touch(sessionId),
    },
    { publicUrl: () => config.publicUrl, tokenSeconds: config.liveAvatarTokenSeconds, idleSeconds: config.liveAvatarIdleSeconds },
  );
  await liveAvatarRoutes(app, liveAvatar, authenticator);
  // A socket for a session another node carries is forwarded there (signed with the node secret).
  const forwarding: NodeForwarding | undefined = nodes && {
    nodes,
    sessions,
    secret: await ensureSetting(database.db, 'node_secret', () => randomToken('', 32)),
    adopted: async (sessionId) => {
      const row = await sessions.adoptById(sessionId);
      if (row) app.log.info({ session_id: sessionId, node_id: nodes.id }, 'took over a session of a node that stopped');
    },
  };
  commandRoute(
    app,
    sessions,
    { command: (row, command, eventId) => liveSide(row).command(row, command, eventId) },
    conversationLoop,
    forwarding && ((row, request) => forwardCommand(forwarding, row.id, request)),
  );
  voiceRoutes(app, { speech, dataDir: config.dataDir });
  // The visitor's side of the player channel (microphone, typed turns, mute) goes to the live conversation.
  const visitorInputs: VisitorInputs = options.visitorInputs ?? conversationLoop.inputs;
  context.sockets = registerSessionSockets(
    app,
    sessions,
    realtime,
    studio,
    visitorInputs,
    (row) => conversationLoop.ensure(row),
    shards,
    async (key) => !!(await liveAvatar.pendingPlayer(key)),
    forwarding,
  );
  await playerRoutes(app, {
    resolve: async (playerKey) => {
      const row = await sessions.byPlayerKey(playerKey);
      if (!row) {
        // A LiveAvatar token's page, opened before its session starts: the page waits for it.
        const pending = await liveAvatar.pendingPlayer(playerKey);
        const agent = pending && (await agents.byId(pending.agentId));
        const face = agent ? studio.face(agent.avatar_id, agent.account_id) : undefined;
        return agent ? { status: 'valid' as const, faceUrl: face?.model_url ?? null, title: face ? `${face.name} · Presence` : 'Presence' } : null;
      }
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

  // The public start: /embed.js and conversation sessions started by a website with its embed key.
  embedRoutes(app, {
    agentByEmbedKey: (key) => agents.findByEmbedKey(key),
    checkVisitor: async (agentId, input) => agents.previewVisitorValues((await agents.byId(agentId))!, input),
    requiredFields: async (agentId) => ((await agents.byId(agentId))?.visitor_values.fields ?? []).filter((f) => f.required).map((f) => f.name),
    startErrors: SESSION_START_ERRORS,
    start: async (accountId, agentId, visitor) => {
      const { row } = await sessions.start(accountId, { agent_id: agentId, mode: 'conversation' }, visitor);
      return {
        session_id: row.id,
        player_url: `${config.publicUrl}/p/${row.player_key}`,
        max_session_seconds: row.max_session_seconds,
        created_at: new Date(row.created_at).toISOString(),
      };
    },
  });

  return { app, context };
}
