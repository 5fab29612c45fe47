import { UserError } from '../errors.ts';
import type { Vector } from '../embed/types.ts';
import { blockedClustering, type BlockedStats } from './blocked.ts';
import { CondensedMatrix, VectorSpace, type Metric } from './distance.ts';
import { cutAtHeight, cutIntoGroups, dendrogram, membersOf, type Dendrogram, type Linkage, LINKAGES } from './linkage.ts';

export { adjustedRandIndex } from './agreement.ts';
export { blockedClustering, splitIntoBlocks, type BlockedOptions, type BlockedStats } from './blocked.ts';
export { CondensedMatrix, VectorSpace, type Distances, type Metric, type SparseRow } from './distance.ts';
export { cutAtHeight, cutIntoGroups, dendrogram, membersOf, LINKAGES, type Dendrogram, type DendrogramOptions, type Linkage, type Merge } from './linkage.ts';
export { renderClusterPlot, escapeXml, type PlotInput } from './plot.ts';
export { silhouette, type SilhouetteOptions, type SilhouetteResult } from './silhouette.ts';
export { UnionFind } from './union-find.ts';

export interface ClusterOptions {
  /** Default `average`. */
  linkage?: Linkage;
  /** Default `cosine` (distance 1 − cos, from 0 to 2). */
  metric?: Metric;
  /** Join clusters whose linkage distance is at most this (give this or `clusters`). */
  threshold?: number;
  /** Cut the hierarchy into this many clusters (exact mode only). */
  clusters?: number;
  /** `auto` (default): exact up to `exactLimit` items, blocked above. */
  mode?: 'auto' | 'exact' | 'blocked';
  /** Largest input clustered exactly in `auto` mode (default 20,000: a 1.6 GB distance matrix). */
  exactLimit?: number;
  /** Block size of the blocked mode (default 2,000). */
  blockSize?: number;
  seed?: number;
  /** Names the input in error messages (a file, a stage). */
  source?: string;
}

export interface Clustering {
  /** Cluster of each item, numbered in order of first appearance. */
  labels: Int32Array;
  /** Members of each cluster (ascending), clusters in order of their first member. */
  clusters: number[][];
  mode: 'exact' | 'blocked';
  linkage: Linkage;
  metric: Metric;
  threshold?: number;
  /** The whole hierarchy (exact mode). */
  dendrogram?: Dendrogram;
  blocked?: BlockedStats;
}

/** Checks the cut settings a user gave, with messages that say what to change. */
export function checkCut(options: ClusterOptions, n: number): void {
  const where = options.source ? `${options.source}: ` : '';
  const metric = options.metric ?? 'cosine';
  if (options.linkage !== undefined && !LINKAGES.includes(options.linkage)) throw new UserError(`${where}unknown linkage "${options.linkage}"; use one of ${LINKAGES.join(', ')}`);
  if ((options.threshold === undefined) === (options.clusters === undefined)) throw new UserError(`${where}give either a distance threshold or a cluster count (exactly one of them)`);
  if (options.threshold !== undefined) {
    const t = options.threshold;
    const max = metric === 'cosine' ? 2 : Infinity;
    if (!Number.isFinite(t) || t < 0 || t > max) throw new UserError(`${where}threshold ${t} is out of range: a ${metric} distance threshold lies between 0 and ${max === 2 ? '2 (usually 0.1–0.6)' : 'infinity'}`);
  }
  if (options.clusters !== undefined && (!Number.isInteger(options.clusters) || options.clusters < 1 || options.clusters > n)) {
    throw new UserError(`${where}cluster count ${options.clusters} is out of range: give a whole number from 1 to ${n} (the number of items)`);
  }
}

/** Agglomerative clustering of vectors, cut by a distance threshold or into a number of clusters. */
export function clusterVectors(vectors: readonly Vector[], options: ClusterOptions): Clustering {
  return clusterSpace(VectorSpace.from(vectors, options.metric ?? 'cosine', options.source ?? 'vectors'), options);
}

export function clusterSpace(space: VectorSpace, options: ClusterOptions): Clustering {
  checkCut(options, space.n);
  const linkage = options.linkage ?? 'average';
  const exactLimit = options.exactLimit ?? 20000;
  const mode = options.mode === 'exact' || options.mode === 'blocked' ? options.mode : space.n > exactLimit ? 'blocked' : 'exact';
  const base = { linkage, metric: space.metric, threshold: options.threshold };
  if (mode === 'blocked') {
    if (options.threshold === undefined) {
      throw new UserError(`${options.source ? `${options.source}: ` : ''}${space.n} items are clustered in blocks, which needs a distance threshold, not a cluster count (or raise the exact limit)`);
    }
    const { labels, stats } = blockedClustering(space, { linkage, threshold: options.threshold, blockSize: options.blockSize, exactLimit, seed: options.seed });
    return { ...base, labels, clusters: membersOf(labels), mode, blocked: stats };
  }
  const tree = dendrogram(linkage === 'single' ? space : CondensedMatrix.of(space), linkage, { consumeMatrix: true });
  const labels = options.threshold !== undefined ? cutAtHeight(tree, options.threshold) : cutIntoGroups(tree, options.clusters!);
  return { ...base, labels, clusters: membersOf(labels), mode, dendrogram: tree };
}

/**
 * The medoid of a cluster: the member with the smallest summed distance to the others (ties: the
 * earlier member). O(m²) for a cluster of m members.
 */
export function medoid(space: VectorSpace, members: readonly number[]): number {
  let best = members[0];
  let bestSum = Infinity;
  for (const i of members) {
    let sum = 0;
    for (const j of members) if (j !== i) sum += space.pair(i, j);
    if (sum < bestSum) {
      bestSum = sum;
      best = i;
    }
  }
  return best;
}
