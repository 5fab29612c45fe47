import { Rng } from '../rng.ts';
import type { Distances } from './distance.ts';

export interface SilhouetteOptions {
  /** Score at most this many items (a seeded sample) against all items (default 5,000). */
  sample?: number;
  seed?: number;
}

export interface SilhouetteResult {
  /** Mean silhouette of the scored items, or null when it is undefined (fewer than 2 or more than n − 1 clusters). */
  score: number | null;
  /** Items scored (all of them unless sampled). */
  scored: number;
  clusters: number;
}

/**
 * Silhouette coefficient (Rousseeuw 1987): for item i with mean distance a to its own cluster and b
 * to the nearest other cluster, s = (b − a) / max(a, b); items alone in their cluster score 0
 * (the scikit-learn convention). O(n²) time, O(n) memory: distances are read row by row.
 */
export function silhouette(distances: Distances, labels: ArrayLike<number>, options: SilhouetteOptions = {}): SilhouetteResult {
  const n = distances.n;
  if (labels.length !== n) throw new Error(`silhouette: ${labels.length} labels for ${n} items`);
  let k = 0;
  for (let i = 0; i < n; i++) k = Math.max(k, labels[i] + 1);
  const sizes = new Float64Array(k);
  for (let i = 0; i < n; i++) sizes[labels[i]]++;
  const clusters = sizes.filter((s) => s > 0).length;
  if (clusters < 2 || clusters > n - 1) return { score: null, scored: 0, clusters };

  const limit = options.sample ?? 5000;
  const items = n > limit ? Rng.derive(options.seed ?? 0, 'silhouette').sample(Array.from({ length: n }, (_, i) => i), limit).sort((x, y) => x - y) : Array.from({ length: n }, (_, i) => i);
  const row = new Float64Array(n);
  const sums = new Float64Array(k);
  let total = 0;
  for (const i of items) {
    const own = labels[i];
    if (sizes[own] === 1) continue;
    distances.row(i, row);
    sums.fill(0);
    for (let j = 0; j < n; j++) if (j !== i) sums[labels[j]] += row[j];
    const a = sums[own] / (sizes[own] - 1);
    let b = Infinity;
    for (let c = 0; c < k; c++) if (c !== own && sizes[c] > 0) b = Math.min(b, sums[c] / sizes[c]);
    const spread = Math.max(a, b);
    total += spread > 0 ? (b - a) / spread : 0;
  }
  return { score: total / items.length, scored: items.length, clusters };
}
