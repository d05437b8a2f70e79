/**
 * The answering engines' view of an agent's knowledge: the agent (name, system prompt) and its
 * search index, built from the knowledge capability's snapshot and cached per agent (knowledge-index.ts).
 * A change on this node drops the cached index at once; on other nodes the version check finds it.
 */
import type { AgentDirectory, KnowledgeAgent, KnowledgeService } from '../knowledge/service.js';
import { buildIndex, IndexCache, type KnowledgeIndex } from './knowledge-index.js';

export class BrainKnowledge {
  private readonly cache: IndexCache;
  private readonly building = new Map<string, Promise<KnowledgeIndex>>();

  constructor(
    private readonly knowledge: KnowledgeService,
    private readonly agents: AgentDirectory,
    cacheSize = 100,
  ) {
    this.cache = new IndexCache(cacheSize);
    knowledge.onChange.push((agentId) => this.cache.drop(agentId));
  }

  async load(accountId: number, agentId: number): Promise<{ agent: KnowledgeAgent; index: KnowledgeIndex }> {
    const agent = await this.agents.get(accountId, agentId);
    const version = await this.knowledge.version(agentId);
    const key = IndexCache.key(version, agent.system_prompt);
    const cached = this.cache.get(agentId, key);
    if (cached) return { agent, index: cached };
    // Concurrent first answers of one agent build the index once.
    const flight = `${agentId}:${key}`;
    let pending = this.building.get(flight);
    if (!pending) {
      pending = this.knowledge.snapshot(agentId).then((snapshot) => buildIndex(snapshot, agent.system_prompt, key));
      this.building.set(flight, pending);
      pending.finally(() => this.building.delete(flight)).catch(() => {});
    }
    const index = await pending;
    this.cache.set(agentId, index);
    return { agent, index };
  }

  drop(agentId: number): void {
    this.cache.drop(agentId);
  }

  get cachedAgents(): number {
    return this.cache.size;
  }
}
