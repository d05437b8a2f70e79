/**
 * Configuration from the environment. Every knob has its default from the interface/contract;
 * tests shorten timings through these variables, never by editing code.
 */
import os from 'node:os';
import path from 'node:path';
import { parsePrice } from './money.js';

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
  publicUrl: string;
  sessionCapacity: number;
  /**
   * Several nodes on one PostgreSQL: this node's address as the other nodes reach it (sockets for
   * the sessions it owns are forwarded there). Unset: http://<HOST or this machine's address>:<port>.
   */
  nodeUrl: string | undefined;
  /** A node whose lease is not renewed for this long is taken for dead; its sessions end `node_lost`. */
  nodeLeaseSeconds: number;
  /**
   * Processes that carry render-mode sessions' real-time path beside the main one (src/realtime/
   * shards); 0: every session's live side runs in the main process.
   */
  realtimeShards: number;
  freeSessionSeconds: number;
  freeMonthlySeconds: number;
  playerOpenSeconds: number;
  /** LiveAvatar-compatible routes: how long a minted session token may start its session. */
  liveAvatarTokenSeconds: number;
  /** LiveAvatar-compatible sessions end after this long without a socket command or keep-alive. */
  liveAvatarIdleSeconds: number;
  webhookRetryDelays: number[];
  webhookTimeoutSeconds: number;
  webhookAllowPrivate: boolean;
  rateLimitPerSecond: number;
  logLevel: string;
  /** Largest face file (GLB/VRM) an upload or `presence faces add` takes. */
  faceMaxBytes: number;
  /** Bearer token for /metrics from other hosts; without it /metrics answers loopback only. */
  metricsToken: string | undefined;
  /** An OpenAI-compatible chat-completions base URL; unset: the offline brain answers. */
  llmUrl: string | undefined;
  llmApiKey: string | undefined;
  llmModel: string | undefined;
  /** Seconds the language model may take to start answering (then the spoken fallback). */
  llmTimeoutSeconds: number;
  /** Optional semantic retrieval: an OpenAI-compatible embeddings endpoint (src/brain/embeddings.ts). */
  embeddings: { url: string; apiKey: string | undefined; model: string; minSimilarity: number } | undefined;
  /** The website reader may fetch loopback and private-network addresses (development and tests). */
  crawlAllowPrivate: boolean;
  /** Pages one brain build reads at most. */
  crawlMaxPages: number;
  /** A brain build that has not moved for this long is taken up again (its process died). */
  brainBuildStallSeconds: number;
  /** Speech recognition for conversation mode (src/speech/recognition). */
  recognition: RecognitionConfig;
  /** Speech synthesis: Kokoro and the premium providers (src/speech/synthesis.ts, docs/speech.md). */
  speech: SpeechConfig;
  /**
   * Models the first start fetches in the background when no speech engine is configured
   * (src/speech/models): MODELS_DOWNLOAD=0 turns it off; MODELS_BASE_URL points at a mirror.
   */
  models: { download: boolean; baseUrl: string | undefined };
  /** Notifications' Telegram bot (unset: no Telegram destination) and its Bot API base URL. */
  telegramBotToken: string | undefined;
  telegramApiUrl: string;
  /** Conversation mode: no visitor turn for this long (a page open, the agent silent) → goodbye, end `idle`. */
  conversationIdleSeconds: number;
  /** Conversation mode: the player page gone this long without coming back → end `visitor_left`. */
  visitorLeftSeconds: number;
  /** Conversation mode: prepare the answer before the visitor's turn has ended (preemptive generation). */
  preemptiveAnswers: boolean;
  /** Billing (src/billing): prices, the charging step, Stripe. */
  billing: BillingConfig;
}

export interface BillingConfig {
  /** Paid plan: wallet charge per session minute, in ten-thousandths (0.10 → 1000), billed by the second. */
  pricePerMinute: number;
  /** Added per minute of speech voiced by a premium provider, in ten-thousandths. */
  premiumVoicePricePerMinute: number;
  /** How often running sessions are charged (seconds). */
  chargeIntervalSeconds: number;
  stripeSecretKey: string | undefined;
  /** Verifies Stripe's signed webhooks (`whsec_…`); unset: only the confirm route credits. */
  stripeWebhookSecret: string | undefined;
  /** Stripe's API base URL (tests point it at a local fake). */
  stripeApiBase: string | undefined;
}

/** The premium providers' keys (and base URLs, for a proxy or a test's fake). */
export interface ProviderKeys {
  elevenlabs?: { apiKey: string; baseUrl?: string };
  cartesia?: { apiKey: string; baseUrl?: string };
  inworld?: { apiKey: string; baseUrl?: string };
}

export interface SpeechConfig {
  dataDir: string;
  kokoroModelDir?: string;
  kokoroDownload: boolean;
  kokoroDtype?: string;
  kokoroUrl?: string;
  kokoroApiKey?: string;
  providers: ProviderKeys;
  /** 'http' (default: streamed HTTP bodies) or 'websocket' (word timings; Cartesia keeps one socket open). */
  elevenlabsTransport: 'http' | 'websocket';
  cartesiaTransport: 'http' | 'websocket';
  /** Premium request timeout: until headers, and between body pieces. */
  timeoutMs: number;
  /** How long fetched premium voice lists are kept. */
  voiceListTtlMs: number;
}

/**
 * The speech synthesis settings (part of loadConfig; tests and benches build a speech service from
 * an environment of their own with it). A timeout or TTL that is not a positive number takes its
 * default, as it always has.
 */
export function speechConfig(env: NodeJS.ProcessEnv, dataDir: string): SpeechConfig {
  const key = (name: string, base: string) => (env[name] ? { apiKey: env[name]!, baseUrl: env[base] || undefined } : undefined);
  return {
    dataDir,
    kokoroModelDir: env.KOKORO_MODEL_DIR || undefined,
    kokoroDownload: env.KOKORO_DOWNLOAD === '1',
    kokoroDtype: env.KOKORO_DTYPE || undefined,
    kokoroUrl: env.KOKORO_URL || undefined,
    kokoroApiKey: env.KOKORO_API_KEY || undefined,
    providers: {
      elevenlabs: key('ELEVENLABS_API_KEY', 'ELEVENLABS_BASE_URL'),
      cartesia: key('CARTESIA_API_KEY', 'CARTESIA_BASE_URL'),
      inworld: key('INWORLD_API_KEY', 'INWORLD_BASE_URL'),
    },
    elevenlabsTransport: env.ELEVENLABS_TRANSPORT === 'websocket' ? 'websocket' : 'http',
    cartesiaTransport: env.CARTESIA_TRANSPORT === 'websocket' ? 'websocket' : 'http',
    timeoutMs: Number(env.SPEECH_TIMEOUT_MS) > 0 ? Number(env.SPEECH_TIMEOUT_MS) : 10_000,
    voiceListTtlMs: Number(env.VOICE_LIST_TTL_SECONDS) > 0 ? Number(env.VOICE_LIST_TTL_SECONDS) * 1000 : 3_600_000,
  };
}

export const RECOGNITION_ENGINES = ['auto', 'sherpa-onnx', 'pocketsphinx', 'openai', 'deepgram', 'none'] as const;
export const STT_MODEL_TYPES = ['whisper', 'moonshine', 'sense-voice', 'transducer', 'streaming-transducer'] as const;

export interface RecognitionConfig {
  /** Which engine hears the visitor; `auto` picks the first configured (see createRecognizer). */
  engine: (typeof RECOGNITION_ENGINES)[number];
  /** A sherpa-onnx model folder (Whisper, Moonshine, SenseVoice, Zipformer). */
  modelDir: string | undefined;
  /** The kind of model in `modelDir` when its file names do not tell. */
  modelType: (typeof STT_MODEL_TYPES)[number] | undefined;
  /** Download `downloadModel` once into DATA_DIR/models/stt. */
  download: boolean;
  downloadModel: string;
  /** Where model archives are downloaded from (`<url>/<name>.tar.bz2`). */
  downloadUrl: string | undefined;
  /** OpenAI-compatible /audio/transcriptions endpoint (base URL up to /v1); OpenAI's when only a key is set. */
  url: string | undefined;
  apiKey: string | undefined;
  model: string;
  deepgramApiKey: string | undefined;
  deepgramUrl: string | undefined;
  deepgramModel: string;
  /** Local decoders (pocketsphinx) running at once on this node; further turns wait. */
  concurrency: number;
}

function oneOf<T extends string>(env: NodeJS.ProcessEnv, name: string, allowed: readonly T[], fallback: T | undefined): T | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!(allowed as readonly string[]).includes(raw)) throw new Error(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
  return raw as T;
}

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min) {
    throw new Error(`${name} must be a number >= ${min}, got "${raw}"`);
  }
  return value;
}

/** REALTIME_SHARDS: a whole number up to 64, or `auto` (one per core when there are two or more). */
function shardCount(env: NodeJS.ProcessEnv): number {
  const raw = env.REALTIME_SHARDS;
  if (raw === 'auto') return os.availableParallelism() >= 2 ? os.availableParallelism() : 0;
  const value = int(env, 'REALTIME_SHARDS', 0, 0);
  if (!Number.isInteger(value) || value > 64) throw new Error(`REALTIME_SHARDS must be a whole number from 0 to 64, or auto, got "${raw}"`);
  return value;
}

function fraction(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const value = int(env, name, fallback, 0);
  if (value > 1) throw new Error(`${name} must be between 0 and 1, got "${env[name]}"`);
  return value;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = int(env, 'PORT', 8080);
  const publicUrl = (env.PUBLIC_URL || `http://localhost:${port}`).replace(/\/+$/, '');
  const delays = (env.WEBHOOK_RETRY_DELAYS || '60,300,1800,7200').split(',').map((s) => Number(s.trim()));
  if (delays.some((d) => !Number.isFinite(d) || d < 0)) {
    throw new Error(`WEBHOOK_RETRY_DELAYS must be comma-separated seconds, got "${env.WEBHOOK_RETRY_DELAYS}"`);
  }
  const dataDir = path.resolve(env.DATA_DIR || './data');
  return {
    port,
    host: env.HOST || '0.0.0.0',
    dataDir,
    databaseUrl: env.DATABASE_URL || undefined,
    publicUrl,
    sessionCapacity: int(env, 'SESSION_CAPACITY', 200),
    nodeUrl: env.NODE_URL ? env.NODE_URL.replace(/\/+$/, '') : undefined,
    nodeLeaseSeconds: int(env, 'NODE_LEASE_SECONDS', 15, 2),
    realtimeShards: shardCount(env),
    freeSessionSeconds: int(env, 'FREE_SESSION_SECONDS', 300, 1),
    // 60 free minutes a month (interface Limits); a knob so tests need not play an hour of audio.
    freeMonthlySeconds: int(env, 'FREE_MONTHLY_SECONDS', 3600, 0),
    playerOpenSeconds: int(env, 'PLAYER_OPEN_SECONDS', 90, 1),
    liveAvatarTokenSeconds: int(env, 'LIVEAVATAR_TOKEN_SECONDS', 3600, 1),
    liveAvatarIdleSeconds: int(env, 'LIVEAVATAR_IDLE_SECONDS', 300, 1),
    webhookRetryDelays: delays,
    webhookTimeoutSeconds: int(env, 'WEBHOOK_TIMEOUT_SECONDS', 10, 1),
    webhookAllowPrivate: env.WEBHOOK_ALLOW_PRIVATE === '1',
    rateLimitPerSecond: int(env, 'RATE_LIMIT_PER_SECOND', 200, 1),
    logLevel: env.LOG_LEVEL || 'info',
    faceMaxBytes: int(env, 'FACE_MAX_BYTES', 8 * 1024 * 1024, 1024),
    metricsToken: env.METRICS_TOKEN || undefined,
    recognition: {
      engine: oneOf(env, 'STT_ENGINE', RECOGNITION_ENGINES, 'auto')!,
      modelDir: env.STT_MODEL_DIR || undefined,
      modelType: oneOf(env, 'STT_MODEL_TYPE', STT_MODEL_TYPES, undefined),
      download: env.STT_DOWNLOAD === '1',
      downloadModel: env.STT_DOWNLOAD_MODEL || 'sherpa-onnx-whisper-tiny',
      downloadUrl: env.STT_DOWNLOAD_URL || undefined,
      url: env.STT_URL || undefined,
      apiKey: env.STT_API_KEY || undefined,
      model: env.STT_MODEL || 'whisper-1',
      deepgramApiKey: env.DEEPGRAM_API_KEY || undefined,
      deepgramUrl: env.DEEPGRAM_URL || undefined,
      deepgramModel: env.DEEPGRAM_MODEL || 'nova-3',
      concurrency: int(env, 'STT_CONCURRENCY', os.availableParallelism(), 1),
    },
    speech: speechConfig(env, dataDir),
    models: { download: env.MODELS_DOWNLOAD !== '0', baseUrl: env.MODELS_BASE_URL || undefined },
    llmUrl: env.LLM_URL || undefined,
    llmApiKey: env.LLM_API_KEY || undefined,
    llmModel: env.LLM_MODEL || undefined,
    llmTimeoutSeconds: int(env, 'LLM_TIMEOUT_SECONDS', 15, 1),
    embeddings: env.EMBEDDINGS_URL
      ? {
          url: env.EMBEDDINGS_URL,
          apiKey: env.EMBEDDINGS_API_KEY || env.LLM_API_KEY || undefined,
          model: env.EMBEDDINGS_MODEL || 'text-embedding-3-small',
          minSimilarity: fraction(env, 'EMBEDDINGS_MIN_SIMILARITY', 0.7),
        }
      : undefined,
    crawlAllowPrivate: env.CRAWL_ALLOW_PRIVATE === '1',
    crawlMaxPages: int(env, 'CRAWL_MAX_PAGES', 50, 1),
    brainBuildStallSeconds: int(env, 'BRAIN_BUILD_STALL_SECONDS', 120, 1),
    telegramBotToken: env.TELEGRAM_BOT_TOKEN || undefined,
    telegramApiUrl: (env.TELEGRAM_API_URL || 'https://api.telegram.org').replace(/\/+$/, ''),
    conversationIdleSeconds: int(env, 'CONVERSATION_IDLE_SECONDS', 120, 1),
    visitorLeftSeconds: int(env, 'VISITOR_LEFT_SECONDS', 30, 1),
    preemptiveAnswers: env.PREEMPTIVE_ANSWERS !== '0',
    billing: {
      pricePerMinute: parsePrice('PRICE_PER_MINUTE', env.PRICE_PER_MINUTE || '0.10'),
      premiumVoicePricePerMinute: parsePrice('PREMIUM_VOICE_PRICE_PER_MINUTE', env.PREMIUM_VOICE_PRICE_PER_MINUTE || '0.05'),
      chargeIntervalSeconds: int(env, 'BILLING_CHARGE_INTERVAL_SECONDS', 5, 0.05),
      stripeSecretKey: env.STRIPE_SECRET_KEY || undefined,
      stripeWebhookSecret: env.STRIPE_WEBHOOK_SECRET || undefined,
      stripeApiBase: env.STRIPE_API_BASE || undefined,
    },
  };
}
