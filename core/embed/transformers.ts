import { existsSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { UserError, messageOf } from '../errors.ts';
import { checkVectors, type Embedder } from './types.ts';

export interface TransformersEmbedderOptions {
  /** A local model folder: config.json, tokenizer.json, tokenizer_config.json, onnx/model.onnx. */
  modelPath: string;
  /** Texts per forward pass (default 32). */
  batchSize?: number;
  /** `mean` (default) averages token vectors under the attention mask; `cls` takes the first token. */
  pooling?: 'mean' | 'cls';
  /** L2-normalise the pooled vectors (default true). */
  normalize?: boolean;
}

const REQUIRED_FILES = ['config.json', 'tokenizer.json', 'tokenizer_config.json', join('onnx', 'model.onnx')];

type FeatureExtractor = (texts: string[], options: { pooling: 'mean' | 'cls'; normalize: boolean }) => Promise<{ dims: number[]; data: Float32Array }>;

/**
 * Sentence embeddings with `@huggingface/transformers` (onnxruntime-node on the CPU), loaded from a
 * local folder only: remote models are switched off, so nothing is ever downloaded at run time.
 * The library keeps its settings in one process-wide `env` object; this sets `allowRemoteModels`
 * and `localModelPath` on it just before loading.
 */
export function transformersEmbedder(options: TransformersEmbedderOptions): Embedder {
  const folder = resolve(options.modelPath);
  const batchSize = options.batchSize ?? 32;
  const pooling = options.pooling ?? 'mean';
  const normalize = options.normalize ?? true;
  let extractor: Promise<FeatureExtractor> | undefined;

  const load = async (): Promise<FeatureExtractor> => {
    const missing = REQUIRED_FILES.filter((file) => !existsSync(join(folder, file)));
    if (missing.length) throw new UserError(`transformers embedder: model folder ${folder} lacks ${missing.join(', ')}; give a folder exported for transformers.js (ONNX weights under onnx/)`);
    const { env, pipeline } = await import('@huggingface/transformers');
    env.allowRemoteModels = false;
    env.allowLocalModels = true;
    env.localModelPath = dirname(folder);
    try {
      // A folder name the library takes for a model id is looked up under localModelPath; any other is read as a path.
      const name = basename(folder);
      const modelId = /^\w[\w.-]{0,94}\w$/.test(name) && !/--|\.\./.test(name) ? name : folder;
      const pipe = await pipeline('feature-extraction', modelId, { dtype: 'fp32', device: 'cpu', local_files_only: true });
      return pipe as unknown as FeatureExtractor;
    } catch (error) {
      throw new UserError(`transformers embedder: could not load the model in ${folder}: ${messageOf(error)}`);
    }
  };

  return {
    id: `transformers:${basename(folder)}:${pooling}${normalize ? ':norm' : ''}`,
    async embed(texts: string[]): Promise<Float32Array[]> {
      if (texts.length === 0) return [];
      const extract = await (extractor ??= load());
      const out: Float32Array[] = [];
      for (let start = 0; start < texts.length; start += batchSize) {
        const batch = texts.slice(start, start + batchSize);
        const tensor = await extract(batch, { pooling, normalize });
        const dim = tensor.dims[tensor.dims.length - 1];
        for (let i = 0; i < batch.length; i++) out.push(tensor.data.slice(i * dim, (i + 1) * dim));
      }
      return checkVectors(out, texts.length, `embedder ${basename(folder)}`);
    },
  };
}
