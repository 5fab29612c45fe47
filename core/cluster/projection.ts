import { PCA } from 'ml-pca';
import { Rng } from '../rng.ts';
import type { VectorSpace } from './distance.ts';

export interface Projection {
  /** One (x, y) per item. */
  points: [number, number][];
  /** Share of the variance the two axes carry (of the variance in the reduced space, see below). */
  explained: [number, number];
}

/** Width of the subspace kept before PCA when vectors are long. */
const SKETCH = 20;

/**
 * 2-D PCA projection (ml-pca). Long vectors (hashed lexical ones have thousands of positions) are
 * first reduced to the 20 directions of largest variance by a seeded randomized range finder
 * (Halko et al. 2011, two power iterations), which keeps the top principal components while the
 * PCA itself stays a 20 × 20 eigenproblem.
 */
export function project2d(space: VectorSpace, options: { seed?: number } = {}): Projection {
  const n = space.n;
  if (n === 1) return { points: [[0, 0]], explained: [1, 0] };
  const reduced = space.dim > SKETCH ? sketch(space, Rng.derive(options.seed ?? 0, 'projection')) : denseRows(space);
  const columns = reduced[0].length;
  const data = columns >= 2 ? reduced : reduced.map((row) => [...row, 0]);
  const pca = new PCA(data, { method: 'covarianceMatrix', center: true });
  const projected = pca.predict(data, { nComponents: 2 }).to2DArray();
  const variance = pca.getExplainedVariance();
  return {
    points: projected.map((row) => [clean(row[0]), clean(row[1])]),
    explained: [clean(variance[0]), clean(variance[1] ?? 0)],
  };
}

function clean(x: number | undefined): number {
  return x === undefined || !Number.isFinite(x) ? 0 : x;
}

function denseRows(space: VectorSpace): number[][] {
  return Array.from({ length: space.n }, (_, i) => Array.from(space.vector(i)));
}

/** Rows of X·Q, where Q (dim × SKETCH, orthonormal) spans the top variance directions of centred X. */
function sketch(space: VectorSpace, rng: Rng): number[][] {
  const d = space.dim;
  const m = SKETCH;
  const mean = space.mean();
  const gaussian = () => Math.sqrt(-2 * Math.log(1 - rng.next())) * Math.cos(2 * Math.PI * rng.next());
  let basis: Float64Array = Float64Array.from({ length: d * m }, gaussian);
  // Centred products: Xc·W = X·W − 1·(μᵀW) and Xcᵀ·Y = XᵀY − μ·(1ᵀY).
  const times = (w: Float64Array) => {
    const y = space.multiply(w, m);
    const shift = new Float64Array(m);
    for (let k = 0; k < d; k++) for (let c = 0; c < m; c++) shift[c] += mean[k] * w[k * m + c];
    for (let i = 0; i < space.n; i++) for (let c = 0; c < m; c++) y[i * m + c] -= shift[c];
    return y;
  };
  const timesTransposed = (y: Float64Array) => {
    const z = space.multiplyTransposed(y, m);
    const sums = new Float64Array(m);
    for (let i = 0; i < space.n; i++) for (let c = 0; c < m; c++) sums[c] += y[i * m + c];
    for (let k = 0; k < d; k++) for (let c = 0; c < m; c++) z[k * m + c] -= mean[k] * sums[c];
    return z;
  };
  for (let iteration = 0; iteration < 3; iteration++) basis = orthonormalColumns(timesTransposed(times(basis)), d, m);
  const reduced = times(basis);
  return Array.from({ length: space.n }, (_, i) => Array.from(reduced.subarray(i * m, (i + 1) * m)));
}

/** Modified Gram–Schmidt on the columns of a rows × m row-major matrix (a column that vanishes stays zero). */
function orthonormalColumns(a: Float64Array, rows: number, m: number): Float64Array {
  for (let c = 0; c < m; c++) {
    for (let p = 0; p < c; p++) {
      let dot = 0;
      for (let r = 0; r < rows; r++) dot += a[r * m + c] * a[r * m + p];
      for (let r = 0; r < rows; r++) a[r * m + c] -= dot * a[r * m + p];
    }
    let norm = 0;
    for (let r = 0; r < rows; r++) norm += a[r * m + c] * a[r * m + c];
    norm = Math.sqrt(norm);
    for (let r = 0; r < rows; r++) a[r * m + c] = norm > 1e-12 ? a[r * m + c] / norm : 0;
  }
  return a;
}
