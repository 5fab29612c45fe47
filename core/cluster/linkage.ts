import { UserError } from '../errors.ts';
import { CondensedMatrix, type Distances } from './distance.ts';
import { UnionFind } from './union-find.ts';

export type Linkage = 'single' | 'complete' | 'average';
export const LINKAGES: readonly Linkage[] = ['single', 'complete', 'average'];

/** One agglomeration step: the clusters holding leaves `a` and `b` join at `height`. */
export interface Merge {
  a: number;
  b: number;
  height: number;
}

/** The n − 1 merges of a hierarchy, by ascending height (ties keep the order they were found in). */
export interface Dendrogram {
  n: number;
  linkage: Linkage;
  merges: Merge[];
}

/**
 * Exact agglomerative clustering in O(n²) time: single linkage through a minimum spanning tree
 * (Prim, distances computed row by row, O(n) memory); complete and average linkage through the
 * nearest-neighbour chain on a condensed distance matrix with Lance–Williams updates (O(n²)
 * memory). Both give the hierarchy the classic cubic algorithm (ml-hclust `agnes`) gives.
 */
export interface DendrogramOptions {
  /** The chain may overwrite a CondensedMatrix it is given (saves a copy). */
  consumeMatrix?: boolean;
  /**
   * Items that are clusters already (with these sizes) and whose distances are linkage distances
   * between clusters: average linkage then weighs them by size. Default: all 1.
   */
  sizes?: ArrayLike<number>;
}

export function dendrogram(distances: Distances, linkage: Linkage, options: DendrogramOptions = {}): Dendrogram {
  if (distances.n === 0) throw new UserError('nothing to cluster (no items)');
  let merges: Merge[];
  if (linkage === 'single') merges = minimumSpanningTree(distances);
  else {
    // The chain updates the matrix in place; work on a copy unless the caller hands it over.
    const matrix = distances instanceof CondensedMatrix ? (options.consumeMatrix ? distances : new CondensedMatrix(distances.n, distances.data.slice())) : CondensedMatrix.of(distances);
    merges = nearestNeighbourChain(matrix, linkage, options.sizes);
  }
  merges.sort((x, y) => x.height - y.height);
  return { n: distances.n, linkage, merges };
}

function minimumSpanningTree(distances: Distances): Merge[] {
  const n = distances.n;
  const best = new Float64Array(n).fill(Infinity);
  const from = new Int32Array(n);
  const row = new Float64Array(n);
  // Items not yet in the tree, kept compact (swap-remove).
  const outside = new Int32Array(n - 1);
  for (let i = 1; i < n; i++) outside[i - 1] = i;
  let remaining = n - 1;
  let current = 0;
  const merges: Merge[] = [];
  while (remaining > 0) {
    distances.row(current, row);
    let nearest = -1;
    let nearestAt = -1;
    let nearestDistance = Infinity;
    for (let p = 0; p < remaining; p++) {
      const j = outside[p];
      if (row[j] < best[j]) {
        best[j] = row[j];
        from[j] = current;
      }
      if (best[j] < nearestDistance || (best[j] === nearestDistance && j < nearest)) {
        nearestDistance = best[j];
        nearest = j;
        nearestAt = p;
      }
    }
    merges.push({ a: from[nearest], b: nearest, height: nearestDistance });
    outside[nearestAt] = outside[--remaining];
    current = nearest;
  }
  return merges;
}

function nearestNeighbourChain(matrix: CondensedMatrix, linkage: 'complete' | 'average', sizes?: ArrayLike<number>): Merge[] {
  const n = matrix.n;
  const D = matrix.data;
  const size = sizes ? Float64Array.from(sizes) : new Float64Array(n).fill(1);
  // Active clusters as a linked list in index order; a cluster lives in the slot of its lowest leaf.
  const next = new Int32Array(n);
  const prev = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    next[i] = i + 1;
    prev[i] = i - 1;
  }
  let head = 0;
  const rowStart = (i: number) => i * n - (i * (i + 1)) / 2 - i - 1; // D[rowStart(i) + j] = d(i, j) for j > i
  const at = (i: number, j: number) => (i < j ? rowStart(i) + j : rowStart(j) + i);
  const chain = new Int32Array(n);
  let length = 0;
  const merges: Merge[] = [];

  for (let step = 0; step < n - 1; step++) {
    if (length === 0) chain[length++] = head;
    let a: number;
    let b: number;
    let height: number;
    for (;;) {
      a = chain[length - 1];
      // Ties go to the previous element of the chain, which guarantees the chain ends in a pair.
      b = length >= 2 ? chain[length - 2] : -1;
      height = b >= 0 ? D[at(a, b)] : Infinity;
      const base = rowStart(a);
      for (let c = head; c < n; c = next[c]) {
        if (c === a) continue;
        const d = c < a ? D[rowStart(c) + a] : D[base + c];
        if (d < height) {
          height = d;
          b = c;
        }
      }
      if (length >= 2 && b === chain[length - 2]) break;
      chain[length++] = b;
    }
    length -= 2;
    const x = Math.min(a, b);
    const y = Math.max(a, b);
    merges.push({ a: x, b: y, height });
    const sx = size[x];
    const sy = size[y];
    for (let c = head; c < n; c = next[c]) {
      if (c === x || c === y) continue;
      const cx = at(c, x);
      const dx = D[cx];
      const dy = D[at(c, y)];
      D[cx] = linkage === 'complete' ? (dx > dy ? dx : dy) : (sx * dx + sy * dy) / (sx + sy);
    }
    size[x] = sx + sy;
    // y leaves the active list
    if (prev[y] >= 0) next[prev[y]] = next[y];
    else head = next[y];
    if (next[y] < n) prev[next[y]] = prev[y];
  }
  return merges;
}

/** Clusters whose merges all happen at or below `threshold` (ml-hclust `cut`: a node with height ≤ t stays whole). */
export function cutAtHeight(tree: Dendrogram, threshold: number): Int32Array {
  const sets = new UnionFind(tree.n);
  for (const merge of tree.merges) {
    if (merge.height > threshold) break;
    sets.union(merge.a, merge.b);
  }
  return sets.labels();
}

/** Exactly `k` clusters (or n when k > n): undoes the k − 1 highest merges (ml-hclust `group`). */
export function cutIntoGroups(tree: Dendrogram, k: number): Int32Array {
  if (!Number.isInteger(k) || k < 1) throw new UserError(`cluster count must be a whole number of at least 1 (got ${k})`);
  const sets = new UnionFind(tree.n);
  const keep = Math.max(0, tree.n - k);
  for (let m = 0; m < keep; m++) sets.union(tree.merges[m].a, tree.merges[m].b);
  return sets.labels();
}

/** Members of each cluster, ascending; clusters in order of their first member. */
export function membersOf(labels: ArrayLike<number>): number[][] {
  const clusters: number[][] = [];
  for (let i = 0; i < labels.length; i++) (clusters[labels[i]] ??= []).push(i);
  return clusters.filter(Boolean);
}
