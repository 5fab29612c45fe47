import { checkVectors, type Embedder, type EmbeddingGateway } from './types.ts';

export interface OpenAIEmbedderOptions {
  /** The stage asking (usage is accounted per stage). */
  stage: string;
  /** The embeddings model, e.g. `text-embedding-3-small` (default: the gateway's embedding model). */
  model?: string;
}

/**
 * Embeddings from an OpenAI-compatible endpoint, through the LLM gateway so that its response
 * cache, rate limits and retries apply (the gateway batches and caches; this only checks results).
 */
export function openaiEmbedder(gateway: EmbeddingGateway, options: OpenAIEmbedderOptions): Embedder {
  const id = `openai:${options.model ?? 'default'}`;
  return {
    id,
    async embed(texts: string[]): Promise<Float32Array[]> {
      if (texts.length === 0) return [];
      return checkVectors(await gateway.embed(texts, { stage: options.stage, ...(options.model ? { model: options.model } : {}) }), texts.length, `embedder ${id}`);
    },
  };
}
