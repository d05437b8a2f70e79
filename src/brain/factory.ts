/** Picks the answering engine and the instructions writer from the configuration (LLM_URL or offline). */
import type { Config } from '../core/config.js';
import type { AnswerEngine } from './engine.js';
import type { BrainKnowledge } from './knowledge.js';
import type { GapRecorder } from './gaps.js';
import { OfflineEngine } from './offline.js';
import { LlmEngine, llmClient, type EngineLogger } from './llm.js';
import { LlmInstructionsWriter } from './llm-writer.js';
import { offlineWriter, type InstructionsWriter } from '../knowledge/compile.js';
import type { SemanticSearch } from './knowledge.js';
import { CachedEmbedder, OpenAiEmbedder } from './embeddings.js';

/** Semantic retrieval when `EMBEDDINGS_URL` is set; said in the log either way. */
export function semanticSearch(config: Config, logger: EngineLogger): SemanticSearch | undefined {
  if (!config.embeddings) {
    logger.info({ retrieval: 'words' }, 'knowledge search: by words (BM25); set EMBEDDINGS_URL to also search by meaning');
    return undefined;
  }
  const { url, apiKey, model, minSimilarity } = config.embeddings;
  const embedder = new CachedEmbedder(new OpenAiEmbedder({ url, apiKey, model, timeoutMs: 30_000 }));
  logger.info({ retrieval: 'words+meaning', embeddings: embedder.name }, 'knowledge search: by words and by meaning (EMBEDDINGS_URL)');
  return { embedder, minSimilarity, logger };
}

export async function createBrain(
  config: Config,
  deps: { knowledge: BrainKnowledge; gaps: GapRecorder },
  logger: EngineLogger,
): Promise<{ engine: AnswerEngine; writer: InstructionsWriter }> {
  if (!config.llmUrl) {
    logger.info({ engine: 'offline' }, "answering engine: the offline brain (no LLM_URL): answers come from the agent's knowledge without a language model");
    return { engine: new OfflineEngine(deps.knowledge, deps.gaps), writer: offlineWriter };
  }
  const settings = {
    url: config.llmUrl,
    apiKey: config.llmApiKey,
    model: config.llmModel,
    firstTokenTimeoutMs: config.llmTimeoutSeconds * 1000,
    totalTimeoutMs: Math.max(60_000, config.llmTimeoutSeconds * 4000),
  };
  const client = await llmClient(settings);
  logger.info({ engine: 'llm', url: new URL(config.llmUrl).origin, model: config.llmModel ?? 'default' }, 'answering engine: a language model (LLM_URL)');
  return { engine: new LlmEngine(client, settings, deps.knowledge, deps.gaps, logger), writer: new LlmInstructionsWriter(client, config.llmModel) };
}
