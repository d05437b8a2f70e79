/** Picks the answering engine and the instructions writer from the configuration (LLM_URL or offline). */
import type { Config } from '../core/config.js';
import type { AnswerEngine } from './engine.js';
import type { BrainKnowledge } from './knowledge.js';
import type { GapRecorder } from './gaps.js';
import { OfflineEngine } from './offline.js';
import { LlmEngine, llmClient, type EngineLogger } from './llm.js';
import { LlmInstructionsWriter } from './llm-writer.js';
import { offlineWriter, type InstructionsWriter } from '../knowledge/compile.js';

export function createBrain(config: Config, deps: { knowledge: BrainKnowledge; gaps: GapRecorder }, logger: EngineLogger): { engine: AnswerEngine; writer: InstructionsWriter } {
  if (!config.llmUrl) {
    logger.info({ engine: 'offline' }, 'answering engine: the offline brain (no LLM_URL): answers come from the agent\'s knowledge without a language model');
    return { engine: new OfflineEngine(deps.knowledge, deps.gaps), writer: offlineWriter };
  }
  const settings = { url: config.llmUrl, apiKey: config.llmApiKey, model: config.llmModel, firstTokenTimeoutMs: config.llmTimeoutSeconds * 1000, totalTimeoutMs: Math.max(60_000, config.llmTimeoutSeconds * 4000) };
  const client = llmClient(settings);
  logger.info({ engine: 'llm', url: new URL(config.llmUrl).origin, model: config.llmModel ?? 'default' }, 'answering engine: a language model (LLM_URL)');
  return { engine: new LlmEngine(client, settings, deps.knowledge, deps.gaps, logger), writer: new LlmInstructionsWriter(client, config.llmModel) };
}
