import type { PromptFile } from '../prompt.ts';
import { Rng } from '../rng.ts';
import type { ResponseCache } from './cache.ts';
import type { OfflineGateway } from './offline.ts';
import { buildChatRequest, chatCacheKey, embeddingCacheKey } from './request.ts';
import type { Backend, EmbedOptions, GenerateOptions, GenerateResult, LlmGateway, UsageReport } from './types.ts';
import { estimateMessageTokens, estimateTokens, type UsageMeter } from './usage.ts';

export interface DryRunGatewayOptions {
  backend: Backend;
  model: string;
  embeddingModel: string;
  seed: number;
  /** Requests the cache would answer are counted as cached, not as requests. */
  cache: ResponseCache | null;
  meter: UsageMeter;
  /** Answers the pipeline with template renderings so it runs through. */
  offline: OfflineGateway;
  /** Texts per embeddings request (as the real backend batches them). */
  embedBatchSize: number;
}

/** Dimension of the stand-in vectors a dry run returns from `embed`. */
export const DRY_RUN_EMBEDDING_DIMENSION = 64;

/**
 * Sends nothing. Counts what a real run would send (requests the cache would not answer), with
 * rough token estimates (prompt: its text; answer: the size of the offline rendering of the same
 * schema) priced from the table; answers with the offline renderings so the pipeline runs through.
 * Repairs and retries of a real run are not foreseen: treat the figures as a lower bound.
 */
export class DryRunGateway implements LlmGateway {
  readonly backend: Backend;
  readonly model: string;
  readonly dryRun = true;

  constructor(private readonly options: DryRunGatewayOptions) {
    this.backend = options.backend;
    this.model = options.model;
  }

  async generate<V extends Record<string, unknown>, O>(prompt: PromptFile<V, O>, vars: V, options: GenerateOptions): Promise<GenerateResult<O>> {
    const request = buildChatRequest(prompt, vars, options, this.model, this.options.seed);
    const rendered = await this.options.offline.generate(prompt, vars, options);
    if (this.options.cache?.has(chatCacheKey(request))) {
      this.options.meter.cacheHit(options.stage, this.model);
    } else {
      const schemaTokens = request.format.kind === 'json' ? estimateTokens(JSON.stringify(request.format.schema)) : 0;
      const answerTokens = rendered.ok ? estimateTokens(typeof rendered.value === 'string' ? rendered.value : JSON.stringify(rendered.value)) : (request.maxTokens ?? 256);
      this.options.meter.request(options.stage, this.model, estimateMessageTokens(request.messages) + schemaTokens, answerTokens);
    }
    return rendered;
  }

  /** Counts the embedding requests a real run would send; returns seeded stand-in unit vectors. */
  async embed(texts: string[], options: EmbedOptions): Promise<number[][]> {
    const model = options.model ?? this.options.embeddingModel;
    const { cache, meter, embedBatchSize } = this.options;
    const missing = [...new Set(texts)].filter((text) => !cache?.has(embeddingCacheKey(model, text)));
    for (let i = 0; i < texts.length - missing.length; i++) meter.cacheHit(options.stage, model);
    for (let i = 0; i < missing.length; i += embedBatchSize) {
      meter.request(options.stage, model, missing.slice(i, i + embedBatchSize).reduce((sum, text) => sum + estimateTokens(text), 0), 0);
    }
    return texts.map((text) => {
      const rng = Rng.derive(this.options.seed, 'dry-run-embedding', text);
      const vector = Array.from({ length: DRY_RUN_EMBEDDING_DIMENSION }, () => rng.next() - 0.5);
      const norm = Math.hypot(...vector) || 1;
      return vector.map((x) => x / norm);
    });
  }

  /** The estimate: requests that would be sent, tokens, dollars; `cached` ones would cost nothing. */
  usage(): UsageReport {
    return this.options.meter.report();
  }

  async close(): Promise<void> {
    this.options.cache?.close();
  }
}
