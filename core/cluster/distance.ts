import { UserError } from '../errors.ts';
import type { Vector } from '../embed/types.ts';

export type Metric = 'cosine' | 'euclidean';

/** Something that gives the distances from one item to all others, row by row. */
export interface Distances {
  readonly n: number;
  /** Fills out[j] (j from `from` to n − 1) with the distance from item i to item j. */
  row(i: number, out: Float64Array, from?: number): void;
}

/** A sparse vector: ascending column indices and their values. */
export interface SparseRow {
  cols: Int32Array;
  values: Float64Array;
}

/** Below this share of non-zero entries, vectors are stored sparse and compared through an inverted index. */
const SPARSE_DENSITY = 0.2;

/**
 * Vectors ready for distance computations: dense (row-major Float64Array) or sparse (CSR with an
 * inverted index, for hashed lexical vectors where a row of distances costs only the postings of
 * its features). Euclidean on dense vectors is computed exactly as ml-distance-euclidean does it.
 */
export class VectorSpace implements Distances {
  private scratch?: Float64Array;
  private postings?: { start: Int32Array; rows: Int32Array; values: Float64Array };

  private constructor(
    readonly n: number,
    readonly dim: number,
    readonly metric: Metric,
    private readonly dense: Float64Array | undefined,
    private readonly csr: { start: Int32Array; cols: Int32Array; values: Float64Array } | undefined,
    private readonly norms: Float64Array,
  ) {}

  /** Checks the vectors (count, one length, finite numbers) and prepares them. `source` names them in errors. */
  static from(vectors: readonly Vector[], metric: Metric, source = 'vectors'): VectorSpace {
    if (vectors.length === 0) throw new UserError(`${source}: nothing to cluster (no vectors)`);
    const dim = vectors[0].length;
    if (dim === 0) throw new UserError(`${source}: vector 0 is empty`);
    let nonZero = 0;
    vectors.forEach((vector, row) => {
      if (vector.length !== dim) throw new UserError(`${source}: vector ${row} has ${vector.length} numbers, vector 0 has ${dim}; all vectors must have one length`);
      for (let k = 0; k < dim; k++) {
        const x = vector[k];
        if (!Number.isFinite(x)) throw new UserError(`${source}: vector ${row} holds ${x} at position ${k}; vectors must be finite numbers (NaN or Infinity usually means a failed embedding)`);
        if (x !== 0) nonZero++;
      }
    });
    const n = vectors.length;
    const norms = new Float64Array(n);
    if (nonZero < SPARSE_DENSITY * n * dim) {
      const start = new Int32Array(n + 1);
      const cols = new Int32Array(nonZero);
      const values = new Float64Array(nonZero);
      let p = 0;
      vectors.forEach((vector, row) => {
        let norm = 0;
        for (let k = 0; k < dim; k++) {
          if (vector[k] === 0) continue;
          cols[p] = k;
          values[p++] = vector[k];
          norm += vector[k] * vector[k];
        }
        start[row + 1] = p;
        norms[row] = Math.sqrt(norm);
      });
      return new VectorSpace(n, dim, metric, undefined, { start, cols, values }, norms);
    }
    const dense = new Float64Array(n * dim);
    vectors.forEach((vector, row) => {
      let norm = 0;
      for (let k = 0; k < dim; k++) {
        dense[row * dim + k] = vector[k];
        norm += vector[k] * vector[k];
      }
      norms[row] = Math.sqrt(norm);
    });
    return new VectorSpace(n, dim, metric, dense, undefined, norms);
  }

  /**
   * A space from sparse rows (column indices ascending, no zeros), e.g. cluster centroids. Rows
   * are trusted: they come from vectors already checked.
   */
  static fromSparse(rows: readonly SparseRow[], dim: number, metric: Metric): VectorSpace {
    const n = rows.length;
    const start = new Int32Array(n + 1);
    rows.forEach((row, i) => (start[i + 1] = start[i] + row.cols.length));
    const cols = new Int32Array(start[n]);
    const values = new Float64Array(start[n]);
    const norms = new Float64Array(n);
    rows.forEach((row, i) => {
      cols.set(row.cols, start[i]);
      values.set(row.values, start[i]);
      let norm = 0;
      for (const x of row.values) norm += x * x;
      norms[i] = Math.sqrt(norm);
    });
    return new VectorSpace(n, dim, metric, undefined, { start, cols, values }, norms);
  }

  get isSparse(): boolean {
    return this.csr !== undefined;
  }

  /** Euclidean length of item i. */
  norm(i: number): number {
    return this.norms[i];
  }

  /** Item i's non-zero entries. */
  sparseRow(i: number): SparseRow {
    if (this.csr) {
      const { start, cols, values } = this.csr;
      return { cols: cols.slice(start[i], start[i + 1]), values: values.slice(start[i], start[i + 1]) };
    }
    const dense = this.vector(i);
    const at: number[] = [];
    dense.forEach((x, k) => x !== 0 && at.push(k));
    return { cols: Int32Array.from(at), values: Float64Array.from(at, (k) => dense[k]) };
  }

  /** The items at `indices`, as a space of their own (for blocks). */
  subset(indices: ArrayLike<number>): VectorSpace {
    return VectorSpace.from(Array.from(indices, (i) => this.vector(i)), this.metric);
  }

  /** Item i as a dense vector. */
  vector(i: number): Float64Array {
    if (this.dense) return this.dense.subarray(i * this.dim, (i + 1) * this.dim);
    const out = new Float64Array(this.dim);
    const { start, cols, values } = this.csr!;
    for (let p = start[i]; p < start[i + 1]; p++) out[cols[p]] = values[p];
    return out;
  }

  /** Item i · w for a dense vector w of length dim. */
  dot(i: number, w: ArrayLike<number>): number {
    let sum = 0;
    if (this.dense) {
      const base = i * this.dim;
      for (let k = 0; k < this.dim; k++) sum += this.dense[base + k] * w[k];
      return sum;
    }
    const { start, cols, values } = this.csr!;
    for (let p = start[i]; p < start[i + 1]; p++) sum += values[p] * w[cols[p]];
    return sum;
  }

  /** X·W for W of dim × m (row-major): n × m. */
  multiply(w: Float64Array, m: number): Float64Array {
    const out = new Float64Array(this.n * m);
    for (let i = 0; i < this.n; i++) this.forEachEntry(i, (k, x) => {
      for (let c = 0; c < m; c++) out[i * m + c] += x * w[k * m + c];
    });
    return out;
  }

  /** Xᵀ·Y for Y of n × m (row-major): dim × m. */
  multiplyTransposed(y: Float64Array, m: number): Float64Array {
    const out = new Float64Array(this.dim * m);
    for (let i = 0; i < this.n; i++) this.forEachEntry(i, (k, x) => {
      for (let c = 0; c < m; c++) out[k * m + c] += x * y[i * m + c];
    });
    return out;
  }

  /** Column means (the centroid of all items). */
  mean(): Float64Array {
    const out = new Float64Array(this.dim);
    for (let i = 0; i < this.n; i++) this.forEachEntry(i, (k, x) => (out[k] += x / this.n));
    return out;
  }

  private forEachEntry(i: number, visit: (k: number, x: number) => void): void {
    if (this.dense) {
      const base = i * this.dim;
      for (let k = 0; k < this.dim; k++) if (this.dense[base + k] !== 0) visit(k, this.dense[base + k]);
      return;
    }
    const { start, cols, values } = this.csr!;
    for (let p = start[i]; p < start[i + 1]; p++) visit(cols[p], values[p]);
  }

  private fromDot(dot: number, i: number, j: number): number {
    if (i === j) return 0;
    if (this.metric === 'cosine') {
      const denominator = this.norms[i] * this.norms[j];
      if (denominator === 0) return 1; // a zero vector is unrelated to everything
      const d = 1 - dot / denominator;
      return d < 0 ? 0 : d > 2 ? 2 : d;
    }
    const squared = this.norms[i] * this.norms[i] + this.norms[j] * this.norms[j] - 2 * dot;
    return squared > 0 ? Math.sqrt(squared) : 0;
  }

  pair(i: number, j: number): number {
    if (this.dense) {
      const d = this.dim;
      const a = i * d;
      const b = j * d;
      const x = this.dense;
      if (this.metric === 'euclidean') {
        let sum = 0;
        for (let k = 0; k < d; k++) sum += (x[a + k] - x[b + k]) * (x[a + k] - x[b + k]);
        return Math.sqrt(sum);
      }
      let dot = 0;
      for (let k = 0; k < d; k++) dot += x[a + k] * x[b + k];
      return this.fromDot(dot, i, j);
    }
    const { start, cols, values } = this.csr!;
    let p = start[i];
    let q = start[j];
    let dot = 0;
    while (p < start[i + 1] && q < start[j + 1]) {
      if (cols[p] === cols[q]) dot += values[p++] * values[q++];
      else if (cols[p] < cols[q]) p++;
      else q++;
    }
    return this.fromDot(dot, i, j);
  }

  row(i: number, out: Float64Array, from = 0): void {
    if (this.dense) {
      // pair() inlined: this loop is most of the time of a whole clustering.
      const x = this.dense;
      const d = this.dim;
      const a = i * d;
      for (let j = from; j < this.n; j++) {
        const b = j * d;
        let sum = 0;
        if (this.metric === 'euclidean') {
          for (let k = 0; k < d; k++) {
            const diff = x[a + k] - x[b + k];
            sum += diff * diff;
          }
          out[j] = Math.sqrt(sum);
        } else {
          for (let k = 0; k < d; k++) sum += x[a + k] * x[b + k];
          out[j] = this.fromDot(sum, i, j);
        }
      }
      return;
    }
    const postings = (this.postings ??= this.invert());
    const acc = (this.scratch ??= new Float64Array(this.n));
    acc.fill(0, from);
    const { start, cols, values } = this.csr!;
    for (let p = start[i]; p < start[i + 1]; p++) {
      const v = values[p];
      const f = cols[p];
      // Rows ascending: walk back from the last and stop before `from`.
      for (let q = postings.start[f + 1] - 1; q >= postings.start[f]; q--) {
        const j = postings.rows[q];
        if (j < from) break;
        acc[j] += v * postings.values[q];
      }
    }
    for (let j = from; j < this.n; j++) out[j] = this.fromDot(acc[j], i, j);
  }

  /**
   * Item i's prefix for a similarity search at cosine distance ≤ threshold (< 1; sparse cosine
   * vectors only): its entries are ordered from the most common feature to the rarest, and the
   * common ones are set aside while their (normalised) weights keep a norm below s = 1 − threshold.
   * By Cauchy–Schwarz a partner sharing none of the remaining, rarer features has similarity below
   * s, so the postings of those features hold every partner (prefix filtering with a norm bound).
   */
  private prefixFeatures(i: number, threshold: number): number[] {
    if (!this.csr || this.metric !== 'cosine') throw new Error('close-pair search: sparse cosine vectors only');
    if (!(threshold < 1)) throw new Error('close-pair search: threshold must be below 1');
    if (this.norms[i] === 0) return []; // a zero vector is at distance 1 from everything
    const postings = (this.postings ??= this.invert());
    const frequency = (f: number) => postings.start[f + 1] - postings.start[f];
    const { start, cols, values } = this.csr;
    const entries = Array.from({ length: start[i + 1] - start[i] }, (_, k) => start[i] + k).sort((a, b) => frequency(cols[b]) - frequency(cols[a]) || a - b);
    const budget = (1 - threshold) * (1 - threshold);
    let setAside = 0;
    let first = 0;
    for (; first < entries.length; first++) {
      const u = values[entries[first]] / this.norms[i];
      if (setAside + u * u >= budget) break;
      setAside += u * u;
    }
    return entries.slice(first).map((entry) => cols[entry]);
  }

  /** An upper bound of the candidates `closePairs` would examine (the prefixes' posting lengths). */
  closePairsCost(threshold: number): number {
    const postings = (this.postings ??= this.invert());
    let cost = 0;
    for (let i = 0; i < this.n; i++) for (const f of this.prefixFeatures(i, threshold)) cost += postings.start[f + 1] - postings.start[f];
    return cost / 2;
  }

  /**
   * Every pair i < j at cosine distance ≤ threshold, without comparing all pairs and without
   * missing one (see prefixFeatures). Returns the number of candidates whose distance was computed.
   */
  closePairs(threshold: number, visit: (i: number, j: number, distance: number) => void): number {
    const stamp = new Int32Array(this.n).fill(-1);
    let candidates = 0;
    for (let i = 0; i < this.n; i++) {
      for (const f of this.prefixFeatures(i, threshold)) {
        const postings = this.postings!;
        for (let q = postings.start[f + 1] - 1; q >= postings.start[f]; q--) {
          const j = postings.rows[q];
          if (j <= i) break; // rows ascending: the rest are earlier items
          if (stamp[j] === i) continue;
          stamp[j] = i;
          candidates++;
          const d = this.pair(i, j);
          if (d <= threshold) visit(i, j, d);
        }
      }
    }
    return candidates;
  }

  /** Feature → (row, value) lists, rows ascending. */
  private invert(): { start: Int32Array; rows: Int32Array; values: Float64Array } {
    const { start, cols, values } = this.csr!;
    const counts = new Int32Array(this.dim + 1);
    for (let p = 0; p < cols.length; p++) counts[cols[p] + 1]++;
    for (let f = 0; f < this.dim; f++) counts[f + 1] += counts[f];
    const fill = counts.slice(0, this.dim);
    const rows = new Int32Array(cols.length);
    const vals = new Float64Array(cols.length);
    for (let i = 0; i < this.n; i++) {
      for (let p = start[i]; p < start[i + 1]; p++) {
        const at = fill[cols[p]]++;
        rows[at] = i;
        vals[at] = values[p];
      }
    }
    return { start: counts, rows, values: vals };
  }
}

/** All pairwise distances, upper triangle stored row by row (n(n−1)/2 numbers). */
export class CondensedMatrix implements Distances {
  readonly data: Float64Array;

  constructor(readonly n: number, data?: Float64Array) {
    const size = (n * (n - 1)) / 2;
    if (data && data.length !== size) throw new Error(`CondensedMatrix: ${data.length} numbers for n=${n}, expected ${size}`);
    this.data = data ?? new Float64Array(size);
  }

  static of(distances: Distances): CondensedMatrix {
    const n = distances.n;
    const matrix = new CondensedMatrix(n);
    const row = new Float64Array(n);
    for (let i = 0; i < n - 1; i++) {
      distances.row(i, row, i + 1);
      matrix.data.set(row.subarray(i + 1), matrix.index(i, i + 1));
    }
    return matrix;
  }

  /** Position of (i, j), i < j. */
  index(i: number, j: number): number {
    return i * this.n - (i * (i + 1)) / 2 + (j - i - 1);
  }

  get(i: number, j: number): number {
    if (i === j) return 0;
    return i < j ? this.data[this.index(i, j)] : this.data[this.index(j, i)];
  }

  row(i: number, out: Float64Array, from = 0): void {
    for (let j = from; j < this.n; j++) out[j] = this.get(i, j);
  }
}
