/**
 * The answering engines' view of an agent's knowledge: the agent (name, system prompt) and its
 * search index, built from the knowledge capability's snapshot and cached per agent (knowledge-index.ts).
 * A change on this node drops the cached index at once; on other nodes the version check finds it.
 */
import type { AgentDirectory, KnowledgeAgent, KnowledgeService } from '../knowledge/service.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildIndex, IndexCache, type KnowledgeIndex, type Unit } from './knowledge-index.js';
import type { Embedder } from './embeddings.js';

/** Semantic retrieval's settings (config `embeddings`), when an endpoint is configured. */
export interface SemanticSearch {
  embedder: Embedder;
  /** Cosine similarity at which a unit counts as answering a question on meaning alone. */
  minSimilarity: number;
  logger: { warn(object: object, message: string): void };
}

/** Units of one agent embedded at most (the rest are found by words only). */
export const MAX_EMBEDDED_UNITS = 5_000;
/** An answer waits this long for an agent's unit vectors, then answers by words alone. */
const VECTORS_WAIT_MS = 1_500;
/** A question's vector must come this fast, or the answer goes on without it. */
const QUESTION_TIMEOUT_MS = 1_500;
/** After the endpoint failed, an agent's units are embedded again at most this often. */
const RETRY_MS = 60_000;
/** Endpoint failures are logged at most this often (not once per visitor question). */
const WARN_EVERY_MS = 60_000;

/** What a unit is embedded as: its headings give a short sentence its meaning ("Opening hours: …"). */
export function embeddingText(unit: Unit): string {
  return unit.context ? `${unit.context}: ${unit.text}` : unit.text;
}

export class BrainKnowledge {
  private readonly cache: IndexCache;
  private readonly building = new Map<string, Promise<KnowledgeIndex>>();
  private readonly embedding = new WeakMap<KnowledgeIndex, Promise<void>>();
  private readonly embeddingFailedAt = new WeakMap<KnowledgeIndex, number>();
  private lastWarnAt = 0;

  constructor(
    private readonly knowledge: KnowledgeService,
    private readonly agents: AgentDirectory,
    cacheSize = 100,
    readonly semantic?: SemanticSearch,
  ) {
    this.cache = new IndexCache(cacheSize);
    knowledge.onChange.push((agentId) => this.cache.drop(agentId));
  }

  async load(accountId: number, agentId: number): Promise<{ agent: KnowledgeAgent; index: KnowledgeIndex }> {
    const agent = await this.agents.get(accountId, agentId);
    const version = await this.knowledge.version(agentId);
    const key = IndexCache.key(version, agent.system_prompt, agent.name);
    const cached = this.cache.get(agentId, key);
    if (cached) return { agent, index: cached };
    // Concurrent first answers of one agent build the index once.
    const flight = `${agentId}:${key}`;
    let pending = this.building.get(flight);
    if (!pending) {
      pending = this.knowledge.snapshot(agentId).then((snapshot) => buildIndex(snapshot, agent.system_prompt, key, agent.name));
      this.building.set(flight, pending);
      pending.finally(() => this.building.delete(flight)).catch(() => {});
    }
    const index = await pending;
    this.cache.set(agentId, index);
    if (this.semantic && !index.vectors) await this.embedUnits(index, this.semantic);
    return { agent, index };
  }

  /** The question's vector, or undefined without an endpoint or when it fails or is slow. */
  async questionVector(text: string, signal: AbortSignal): Promise<Float32Array | undefined> {
    if (!this.semantic) return undefined;
    try {
      const [vector] = await this.semantic.embedder.embed([text], AbortSignal.any([signal, AbortSignal.timeout(QUESTION_TIMEOUT_MS)]));
      return vector;
    } catch (error) {
      if (!signal.aborted) this.warn(error, 'a question could not be embedded; it is answered by words alone');
      return undefined;
    }
  }

  private async embedUnits(index: KnowledgeIndex, semantic: SemanticSearch): Promise<void> {
    const failedAt = this.embeddingFailedAt.get(index);
    if (failedAt !== undefined && Date.now() - failedAt < RETRY_MS) return;
    let flight = this.embedding.get(index);
    if (!flight) {
      const units = index.units.slice(0, MAX_EMBEDDED_UNITS);
      flight = semantic.embedder
        .embed(units.map(embeddingText))
        .then((vectors) => {
          index.vectors = vectors;
        })
        .catch((error) => {
          this.embeddingFailedAt.set(index, Date.now());
          this.warn(error, "an agent's knowledge could not be embedded; it is searched by words alone until the endpoint answers");
        })
        .finally(() => this.embedding.delete(index));
      this.embedding.set(index, flight);
    }
    // A visitor is not kept waiting on a slow endpoint: vectors that come later serve later answers.
    const ac = new AbortController();
    await Promise.race([flight, sleep(VECTORS_WAIT_MS, undefined, { signal: ac.signal }).catch(() => {})]);
    ac.abort();
  }

  private warn(error: unknown, message: string): void {
    if (Date.now() - this.lastWarnAt < WARN_EVERY_MS) return;
    this.lastWarnAt = Date.now();
    this.semantic?.logger.warn({ err: error instanceof Error ? error.message : String(error), embeddings: this.semantic.embedder.name }, message);
  }

  drop(agentId: number): void {
    this.cache.drop(agentId);
  }

  get cachedAgents(): number {
    return this.cache.size;
  }
}
