import { Rng } from '../rng.ts';
import { CondensedMatrix, type VectorSpace } from './distance.ts';
import { cutAtHeight, dendrogram, membersOf, type Linkage } from './linkage.ts';
import { UnionFind } from './union-find.ts';

export interface BlockedOptions {
  linkage: Linkage;
  threshold: number;
  /** Most items compared all-pairs at once while looking for close pairs (default 2,000). */
  blockSize?: number;
  /**
   * Most rounds of re-blocking (default 12 for single linkage, whose chains one missed pair can
   * cut, else 6); stops early at a round that links nothing new.
   */
  rounds?: number;
  /** Largest group clustered exactly; larger groups are clustered block by block (default 20,000). */
  exactLimit?: number;
  seed?: number;
}

export interface BlockedStats {
  /** How close pairs were found: `prefix-filter` (exact, sparse cosine vectors) or `random-blocks` (approximate). */
  closePairs: 'prefix-filter' | 'random-blocks';
  /** Rounds of random blocks run (0 with the prefix filter). */
  rounds: number;
  /** Item pairs whose distance was computed to find the close pairs. */
  pairsCompared: number;
  /** Groups of items linked by chains of close pairs (the single-linkage clusters). */
  components: number;
  largestComponent: number;
  /** Components larger than exactLimit, clustered block by block. */
  splitComponents: number;
}

/**
 * Agglomerative clustering for inputs too large for an n × n matrix. Clusters cut at threshold t
 * never span two groups of the "distance ≤ t" graph (for single, complete and average linkage a
 * merge at height ≤ t needs at least one pair ≤ t), so:
 *   1. find the close pairs without comparing all pairs. Sparse vectors under cosine distance
 *      (the lexical embedder's): exactly, by prefix filtering (VectorSpace.closePairs), when its
 *      candidates are fewer than the random blocks would compare. Otherwise: in each round, split the items
 *      recursively (along the line through two far-apart items, at the median) into blocks of
 *      `blockSize` and compare all pairs inside each block; a new random split each round, until a
 *      round links no new groups;
 *   2. the connected groups of close pairs are the single-linkage clusters;
 *   3. complete / average linkage: each group is clustered exactly (groups above `exactLimit` are
 *      first split into blocks).
 * Close pairs that no round puts into one block are what it can miss, which splits clusters; the
 * benchmark measures agreement with the exact clustering (adjusted Rand index).
 */
export function blockedClustering(space: VectorSpace, options: BlockedOptions): { labels: Int32Array; stats: BlockedStats } {
  const blockSize = Math.max(2, options.blockSize ?? 2000);
  const maxRounds = Math.max(1, options.rounds ?? (options.linkage === 'single' ? 12 : 6));
  const exactLimit = options.exactLimit ?? 20000;
  const all = Int32Array.from({ length: space.n }, (_, i) => i);
  const stats: BlockedStats = { closePairs: 'random-blocks', rounds: 0, pairsCompared: 0, components: 0, largestComponent: 0, splitComponents: 0 };

  const links = new UnionFind(space.n);
  const roundsCost = (maxRounds * space.n * Math.min(blockSize, space.n)) / 2;
  if (space.isSparse && space.metric === 'cosine' && options.threshold < 1 && space.closePairsCost(options.threshold) < roundsCost) {
    stats.closePairs = 'prefix-filter';
    stats.pairsCompared = space.closePairs(options.threshold, (i, j) => links.union(i, j));
  }
  for (let round = 0; round < maxRounds && stats.closePairs === 'random-blocks'; round++) {
    let linked = 0;
    for (const block of splitIntoBlocks(space, all, blockSize, Rng.derive(options.seed ?? 0, 'blocked', round))) {
      const local = space.subset(block);
      const row = new Float64Array(block.length);
      for (let i = 0; i < block.length - 1; i++) {
        local.row(i, row, i + 1);
        for (let j = i + 1; j < block.length; j++) if (row[j] <= options.threshold && links.union(block[i], block[j])) linked++;
      }
      stats.pairsCompared += (block.length * (block.length - 1)) / 2;
    }
    stats.rounds++;
    if (linked === 0 || blockSize >= space.n) break;
  }
  const componentLabels = links.labels();
  const components = membersOf(componentLabels);
  stats.components = components.length;
  stats.largestComponent = components.reduce((max, c) => Math.max(max, c.length), 0);
  if (options.linkage === 'single') return { labels: componentLabels, stats };

  const clusters = new UnionFind(space.n);
  for (const component of components) {
    if (component.length === 1) continue;
    const items = Int32Array.from(component);
    const groups = component.length <= exactLimit ? [items] : (stats.splitComponents++, splitIntoBlocks(space, items, exactLimit, Rng.derive(options.seed ?? 0, 'blocked', 'split')));
    for (const group of groups) {
      const labels = cutAtHeight(dendrogram(CondensedMatrix.of(space.subset(group)), options.linkage, { consumeMatrix: true }), options.threshold);
      const firstOf = new Map<number, number>();
      labels.forEach((label, k) => {
        const first = firstOf.get(label);
        if (first === undefined) firstOf.set(label, group[k]);
        else clusters.union(first, group[k]);
      });
    }
  }
  return { labels: clusters.labels(), stats };
}

/** Recursive splits along the line through two far-apart items, at the median, until every block holds at most `limit` items. */
export function splitIntoBlocks(space: VectorSpace, items: Int32Array, limit: number, rng: Rng): Int32Array[] {
  const blocks: Int32Array[] = [];
  const pending = [items];
  while (pending.length) {
    const set = pending.pop()!;
    if (set.length <= limit) {
      blocks.push(set);
      continue;
    }
    const projection = project(space, set, rng);
    // Split by rank, so equal projections (duplicates) still divide the set.
    const order = Array.from(set.keys()).sort((x, y) => projection[x] - projection[y] || set[x] - set[y]);
    const half = Math.floor(set.length / 2);
    pending.push(Int32Array.from(order.slice(0, half), (k) => set[k]), Int32Array.from(order.slice(half), (k) => set[k]));
  }
  return blocks;
}

/** Each item's position along the line from one far item to another (found from a random start). */
function project(space: VectorSpace, set: Int32Array, rng: Rng): Float64Array {
  const probe = set.length > 2000 ? rng.sample(Array.from(set), 2000) : Array.from(set);
  const farthestFrom = (origin: number) => {
    let best = probe[0];
    let bestDistance = -1;
    for (const i of probe) {
      const d = space.pair(origin, i);
      if (d > bestDistance) [best, bestDistance] = [i, d];
    }
    return best;
  };
  const q = farthestFrom(set[rng.int(0, set.length - 1)]);
  const r = farthestFrom(q);
  const direction = space.vector(r).slice();
  const from = space.vector(q);
  for (let k = 0; k < direction.length; k++) direction[k] -= from[k];
  return Float64Array.from(set, (i) => space.dot(i, direction));
}
