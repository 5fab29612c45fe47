import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VectorSpace } from '../core/cluster/index.ts';
import { createEmbedder, transformersEmbedder } from '../core/embed/index.ts';
import { TINY_HIDDEN, writeTinyModel } from './fixtures/embed/tiny-model.ts';

/**
 * The transformers embedder on a model folder this test writes itself (a few-KB ONNX graph and a
 * hand-written WordPiece tokenizer): the real loading path of @huggingface/transformers and
 * onnxruntime-node's CPU binary, with remote models switched off.
 */
let root: string;
let modelDir: string;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'toolkiln-embed-'));
  modelDir = writeTinyModel(join(root, 'tiny-bert'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('transformers embedder', () => {
  it('loads a local model folder and mean-pools normalised sentence vectors', async () => {
    const embedder = transformersEmbedder({ modelPath: modelDir, batchSize: 2 });
    const texts = ['find the movie', 'search a film', 'book hotel', 'weather today', 'FIND THE MOVIE'];
    const vectors = await embedder.embed(texts);
    expect(vectors).toHaveLength(5);
    for (const v of vectors) {
      expect(v.length).toBe(TINY_HIDDEN);
      expect(Math.hypot(...v)).toBeCloseTo(1, 5);
    }
    const space = VectorSpace.from(vectors, 'cosine');
    expect(space.pair(0, 4)).toBeLessThan(1e-6); // the tokenizer lower-cases
    expect(space.pair(0, 1)).toBeLessThan(space.pair(0, 2));
    expect(space.pair(0, 1)).toBeLessThan(space.pair(0, 3));
    // Same texts, other batch split: same vectors.
    const again = await transformersEmbedder({ modelPath: modelDir, batchSize: 8 }).embed(texts);
    for (let i = 0; i < texts.length; i++) for (let k = 0; k < TINY_HIDDEN; k++) expect(again[i][k]).toBeCloseTo(vectors[i][k], 6);
    expect(embedder.id).toBe('transformers:tiny-bert:mean:norm');
    const { env } = await import('@huggingface/transformers');
    expect(env.allowRemoteModels).toBe(false);
  });

  it('resolves the folder from a config and says which files a folder lacks', async () => {
    const fromConfig = createEmbedder({ kind: 'transformers', modelPath: 'tiny-bert' }, { stage: 's', resolvePath: (p) => join(root, p) });
    expect((await fromConfig.embed(['book hotel']))[0].length).toBe(TINY_HIDDEN);
    const empty = join(root, 'empty model');
    writeTinyModel(empty);
    rmSync(join(empty, 'onnx'), { recursive: true });
    await expect(transformersEmbedder({ modelPath: empty }).embed(['x'])).rejects.toThrow(/lacks onnx\/model\.onnx/);
  });

  it('loads a folder whose name is not a model id, without any download', async () => {
    const odd = writeTinyModel(join(root, 'my model v1'));
    const vectors = await transformersEmbedder({ modelPath: odd }).embed(['find the movie']);
    expect(vectors[0].length).toBe(TINY_HIDDEN);
  });
});
