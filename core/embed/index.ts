import { z } from 'zod';
import { UserError } from '../errors.ts';
import { lexicalEmbedder } from './lexical.ts';
import { openaiEmbedder } from './openai.ts';
import { transformersEmbedder } from './transformers.ts';
import { hasEmbeddings, type Embedder } from './types.ts';

export { lexicalEmbedder, LexicalAnalyzer, splitWords, stem, DEFAULT_SYNONYMS, type LexicalOptions } from './lexical.ts';
export { openaiEmbedder, type OpenAIEmbedderOptions } from './openai.ts';
export { transformersEmbedder, type TransformersEmbedderOptions } from './transformers.ts';
export { checkVectors, cosine, hasEmbeddings, joinViews, type Embedder, type EmbeddingGateway, type Vector } from './types.ts';

/** Which embedder a pipeline config asks for (`{ kind: 'lexical' }` by default). */
export const EmbedderConfig = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('lexical'),
    dim: z.number().int().min(16).optional(),
    ngrams: z.array(z.number().int().min(2).max(8)).optional(),
    views: z.object({ actions: z.number().min(0).optional(), words: z.number().min(0).optional(), chars: z.number().min(0).optional() }).optional(),
    synonyms: z.array(z.array(z.string()).min(2)).optional(),
    identifierActions: z.boolean().optional(),
  }),
  z.object({ kind: z.literal('openai'), model: z.string().optional() }),
  z.object({
    kind: z.literal('transformers'),
    modelPath: z.string().min(1),
    batchSize: z.number().int().positive().optional(),
    pooling: z.enum(['mean', 'cls']).optional(),
    normalize: z.boolean().optional(),
  }),
]);
export type EmbedderConfig = z.infer<typeof EmbedderConfig>;

/** The embedder choices of an `EmbedderConfig` key, in the words a config key's help gives them. */
export const EMBEDDER_CHOICES =
  '{"kind": "lexical"} (built in, offline: words and character n-grams), {"kind": "openai", "model"?} (the endpoint\'s embeddings; needs --llm openai) or {"kind": "transformers", "modelPath"} (a local model folder: config.json, tokenizer.json, onnx/model.onnx)';

export interface EmbedderDeps {
  /** The stage's LLM gateway; needs an `embed` method for `openai`. */
  gateway?: unknown;
  /** The stage asking (usage accounting). */
  stage: string;
  /** Resolves a model folder given in a config (StageContext.resolvePath). */
  resolvePath?: (path: string) => string;
}

export function createEmbedder(config: EmbedderConfig = { kind: 'lexical' }, deps: EmbedderDeps): Embedder {
  switch (config.kind) {
    case 'lexical':
      return lexicalEmbedder(config);
    case 'openai':
      if (!hasEmbeddings(deps.gateway)) {
        throw new UserError(`${deps.stage}: the openai embedder needs an LLM backend with embeddings (run with --llm openai), or set the embedder to { "kind": "lexical" }`);
      }
      return openaiEmbedder(deps.gateway, { stage: deps.stage, model: config.model });
    case 'transformers':
      return transformersEmbedder({ ...config, modelPath: deps.resolvePath ? deps.resolvePath(config.modelPath) : config.modelPath });
  }
}
