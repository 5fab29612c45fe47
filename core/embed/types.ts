import { UserError } from '../errors.ts';

/** Turns texts into vectors. Vectors of one call are comparable with each other (same space, same length). */
export interface Embedder {
  /** Names the embedder and its settings, e.g. `lexical:v1:2048` (goes into lineage and fingerprints). */
  id: string;
  /** Vector length, when known before the first call. */
  dim?: number;
  embed(texts: string[]): Promise<Float32Array[] | number[][]>;
  /**
   * An embedder whose weights come from the texts of each call (the lexical one's TF-IDF) gives one
   * fitted once on `corpus`: its vectors of texts embedded in different calls compare with each
   * other (a reference set embedded once, the texts checked against it embedded batch by batch).
   * Absent: the vectors of different calls compare already (a model's).
   */
  fit?(corpus: string[]): Embedder;
  /**
   * `fit`, with the corpus' vectors as `embedSparse` of the fitted embedder gives them: for an
   * embedder that reads each text once for both (the lexical one).
   */
  fitSparse?(corpus: string[]): { embedder: Embedder; vectors: SparseVector[] };
  /**
   * The vectors `embed` gives, by their non-zero numbers, at once: for an embedder that needs no I/O
   * and whose vectors are mostly zeros (the lexical one), the same numbers bit for bit, without a
   * dense array per text.
   */
  embedSparse?(texts: string[]): SparseVector[];
}

/** A vector of `dim` numbers given by its non-zero ones: their positions, ascending, and the numbers there. */
export interface SparseVector {
  dim: number;
  indices: Uint32Array;
  values: Float32Array;
}

/** What the openai embedder needs from the LLM gateway: its cached, rate-limited embeddings call. */
export interface EmbeddingGateway {
  embed(texts: string[], opts: { stage: string; model?: string }): Promise<number[][]>;
}

export function hasEmbeddings(gateway: unknown): gateway is EmbeddingGateway {
  return !!gateway && typeof (gateway as { embed?: unknown }).embed === 'function';
}

export type Vector = ArrayLike<number>;

/**
 * Checks what an embedder returned: one vector per text, all of one length, all numbers finite.
 * Returns them as Float32Arrays. `source` names the embedder in the error.
 */
export function checkVectors(vectors: readonly Vector[], expected: number, source: string): Float32Array[] {
  if (vectors.length !== expected) throw new UserError(`${source}: returned ${vectors.length} vectors for ${expected} texts`);
  const dim = vectors[0]?.length ?? 0;
  return vectors.map((vector, row) => {
    if (vector.length !== dim) throw new UserError(`${source}: vector ${row} has ${vector.length} numbers, vector 0 has ${dim}; all vectors must have one length`);
    for (let k = 0; k < vector.length; k++) {
      if (!Number.isFinite(vector[k])) throw new UserError(`${source}: vector ${row} holds ${vector[k]} at position ${k}; embeddings must be finite numbers`);
    }
    return vector instanceof Float32Array ? vector : Float32Array.from(vector);
  });
}

/** Cosine of two vectors (0 when either is all zeros). */
export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let k = 0; k < a.length; k++) {
    dot += a[k] * b[k];
    na += a[k] * a[k];
    nb += b[k] * b[k];
  }
  return na > 0 && nb > 0 ? dot / Math.sqrt(na * nb) : 0;
}

/**
 * Joins several views of the same items (e.g. tool names and parameter names) into one vector per
 * item: each view is L2-normalised and scaled by √weight, so the cosine of the joined vectors is the
 * weighted mean of the views' cosines (weights are normalised to sum to 1).
 */
export function joinViews(views: readonly (readonly Vector[])[], weights: readonly number[]): Float32Array[] {
  if (views.length !== weights.length || views.length === 0) throw new Error('joinViews: one weight per view');
  const total = weights.reduce((a, b) => a + b, 0);
  const n = views[0].length;
  const dims = views.map((view) => view[0]?.length ?? 0);
  const out: Float32Array[] = [];
  for (let i = 0; i < n; i++) {
    const joined = new Float32Array(dims.reduce((a, b) => a + b, 0));
    let offset = 0;
    views.forEach((view, v) => {
      const vector = view[i];
      let norm = 0;
      for (let k = 0; k < vector.length; k++) norm += vector[k] * vector[k];
      const scale = norm > 0 ? Math.sqrt(weights[v] / total) / Math.sqrt(norm) : 0;
      for (let k = 0; k < vector.length; k++) joined[offset + k] = vector[k] * scale;
      offset += dims[v];
    });
    out.push(joined);
  }
  return out;
}
