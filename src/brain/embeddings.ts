/**
 * Optional semantic retrieval: when an OpenAI-compatible embeddings endpoint is configured
 * (`EMBEDDINGS_URL`: OpenAI, Ollama, vLLM, llama.cpp's server, text-embeddings-inference…), each
 * knowledge unit and each visitor question gets a vector, so "do you fix bikes?" finds "we repair
 * bicycles" although they share no word. Lexical search stays the base: embeddings only add
 * candidates and rank them, and any failure of the endpoint falls back to lexical search alone.
 */
import { LRUCache } from 'lru-cache';
import crypto from 'node:crypto';
import type OpenAI from 'openai';
import { once, type Once } from '../core/once.js';

export interface Embedder {
  /** `model@host`, for logs. */
  readonly name: string;
  /** One unit-length vector per text, in order. */
  embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]>;
}

export interface EmbeddingSettings {
  url: string;
  apiKey?: string;
  model: string;
  timeoutMs: number;
}

/** Texts per request: endpoints cap the batch (OpenAI at 2,048 inputs; small local servers lower). */
const BATCH = 64;

export class OpenAiEmbedder implements Embedder {
  readonly name: string;
  /** The client library is loaded only where EMBEDDINGS_URL is set (and at once, not on the first query). */
  private readonly client: Once<OpenAI>;

  constructor(private readonly settings: EmbeddingSettings) {
    this.client = once(
      async () =>
        new (await import('openai')).default({ baseURL: settings.url, apiKey: settings.apiKey || 'not-needed', maxRetries: 1, timeout: settings.timeoutMs }),
    );
    this.client.get().catch(() => undefined);
    this.name = `${settings.model}@${new URL(settings.url).host}`;
  }

  async embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const client = await this.client.get();
    const vectors: Float32Array[] = [];
    for (let start = 0; start < texts.length; start += BATCH) {
      const input = texts.slice(start, start + BATCH);
      // `float` explicitly: the client would ask for base64, which Ollama and llama.cpp do not all speak.
      const response = await client.embeddings.create({ model: this.settings.model, input, encoding_format: 'float' }, { signal });
      const byIndex = [...response.data].sort((a, b) => a.index - b.index);
      if (byIndex.length !== input.length) throw new Error(`the embeddings endpoint answered ${byIndex.length} vectors for ${input.length} texts`);
      for (const item of byIndex) vectors.push(unitLength(Float32Array.from(item.embedding as number[])));
    }
    return vectors;
  }
}

/**
 * Remembers vectors by text, most recently used kept, so that re-indexing an agent after a small
 * change only embeds the units that changed. Bounded: `capacity` vectors in all.
 */
export class CachedEmbedder implements Embedder {
  private readonly vectors: LRUCache<string, Float32Array>;

  constructor(
    private readonly inner: Embedder,
    capacity = 20_000,
  ) {
    this.vectors = new LRUCache({ max: capacity });
  }

  get name(): string {
    return this.inner.name;
  }

  get size(): number {
    return this.vectors.size;
  }

  async embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const keys = texts.map((text) => crypto.createHash('sha1').update(text).digest('base64url'));
    const found = new Map<string, Float32Array>();
    // Touch the cached ones first (most recently used last), so adding the new ones cannot evict them.
    for (const key of keys) {
      const vector = this.vectors.get(key);
      if (!vector) continue;
      found.set(key, vector);
      this.remember(key, vector);
    }
    const missing = [...new Set(keys.filter((key) => !found.has(key)))];
    if (missing.length) {
      const textOf = new Map<string, string>();
      keys.forEach((key, i) => textOf.has(key) || textOf.set(key, texts[i]!));
      const fresh = await this.inner.embed(
        missing.map((key) => textOf.get(key)!),
        signal,
      );
      missing.forEach((key, i) => {
        found.set(key, fresh[i]!);
        this.remember(key, fresh[i]!);
      });
    }
    return keys.map((key) => found.get(key)!);
  }

  private remember(key: string, vector: Float32Array): void {
    this.vectors.set(key, vector);
  }
}

export function unitLength(vector: Float32Array): Float32Array {
  let sum = 0;
  for (const x of vector) sum += x * x;
  const norm = Math.sqrt(sum);
  if (norm > 0) for (let i = 0; i < vector.length; i++) vector[i]! /= norm;
  return vector;
}

/** Cosine similarity of two unit-length vectors (0 when their sizes differ: another model's vectors). */
export function similarity(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return 0;
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += a[i]! * b[i]!;
  return dot;
}
