import { Rng } from '../rng.ts';
import { CondensedMatrix, type VectorSpace } from './distance.ts';
import { cutAtHeight, dendrogram, type Linkage } from './linkage.ts';
import { UnionFind } from './union-find.ts';

export interface BlockedOptions {
  linkage: Linkage;
  threshold: number;
  /** Most items compared all-pairs at once when looking for close pairs (default 2,000). */
  blockSize?: number;
  /** Share of a set that goes to both halves on each split, around the median (default 0.1). */
  overlap?: number;
  /** Largest group clustered exactly; larger groups are split into blocks first (default 20,000). */
  exactLimit?: number;
  seed?: number;
}

export interface BlockedStats {
  /** Blocks compared all-pairs while looking for close pairs. */
  blocks: number;
  pairsCompared: number;
  /** Groups of items linked by a chain of close pairs. */
  components: number;
  largestComponent: number;
  /** Components larger than exactLimit, clustered block by block. */
  splitComponents: number;
}

/**
 * Clustering for inputs too large for an O(n²) matrix. Clusters cut at a threshold t never span two
 * groups of the "distance ≤ t" graph (for single, complete and average linkage a merge at height ≤ t
 * needs at least one pair ≤ t), so:
 *   1. find the close pairs without comparing all pairs: split the items recursively along the line
 *      through two far-apart items, at the median, with an overlap band that goes to both halves,
 *      until blocks hold `blockSize` items; compare all pairs inside each block;
 *   2. the connected groups of close pairs are the single-linkage clusters;
 *   3. for complete / average linkage, cluster each group exactly (groups above `exactLimit` are
 *      first split into blocks without overlap).
 * Pairs closer than t that no block holds are what it can miss; the benchmark measures agreement.
 */
export function blockedClustering(space: VectorSpace, options: BlockedOptions): { labels: Int32Array; stats: BlockedStats } {
  const blockSize = Math.max(2, options.blockSize ?? 2000);
  const overlap = options.overlap ?? 0.1;
  const exactLimit = options.exactLimit ?? 20000;
  const rng = Rng.derive(options.seed ?? 0, 'blocked-clustering');
  const all = Int32Array.from({ length: space.n }, (_, i) => i);
  const stats: BlockedStats = { blocks: 0, pairsCompared: 0, components: 0, largestComponent: 0, splitComponents: 0 };

  const links = new UnionFind(space.n);
  for (const block of splitIntoBlocks(space, all, blockSize, overlap, rng)) {
    stats.blocks++;
    const local = space.subset(block);
    const row = new Float64Array(block.length);
    for (let i = 0; i < block.length - 1; i++) {
      local.row(i, row, i + 1);
      for (let j = i + 1; j < block.length; j++) if (row[j] <= options.threshold) links.union(block[i], block[j]);
    }
    stats.pairsCompared += (block.length * (block.length - 1)) / 2;
  }
  const componentLabels = links.labels();
  const components: number[][] = [];
  componentLabels.forEach((label, i) => (components[label] ??= []).push(i));
  stats.components = components.length;
  stats.largestComponent = Math.max(...components.map((c) => c.length));
  if (options.linkage === 'single') return { labels: componentLabels, stats };

  const clusters = new UnionFind(space.n);
  for (const component of components) {
    if (component.length === 1) continue;
    const groups = component.length <= exactLimit ? [Int32Array.from(component)] : (stats.splitComponents++, splitIntoBlocks(space, Int32Array.from(component), exactLimit, 0, rng));
    for (const group of groups) {
      const local = space.subset(group);
      const labels = cutAtHeight(dendrogram(CondensedMatrix.of(local), options.linkage, { consumeMatrix: true }), options.threshold);
      const firstOf = new Map<number, number>();
      labels.forEach((label, i) => {
        const first = firstOf.get(label);
        if (first === undefined) firstOf.set(label, group[i]);
        else clusters.union(first, group[i]);
      });
    }
  }
  return { labels: clusters.labels(), stats };
}

/** Recursive splits along the line through two far-apart items until every block holds at most `limit` items. */
export function splitIntoBlocks(space: VectorSpace, items: Int32Array, limit: number, overlap: number, rng: Rng): Int32Array[] {
  const blocks: Int32Array[] = [];
  const pending = [items];
  while (pending.length) {
    const set = pending.pop()!;
    if (set.length <= limit) {
      blocks.push(set);
      continue;
    }
    const projection = project(space, set, rng);
    const order = Array.from(set.keys()).sort((x, y) => projection[x] - projection[y] || set[x] - set[y]);
    const cutLow = Math.floor(set.length * (0.5 - overlap));
    const cutHigh = Math.ceil(set.length * (0.5 + overlap));
    // Split by rank, so equal projections (duplicates) still divide the set.
    pending.push(Int32Array.from(order.slice(0, cutHigh), (k) => set[k]), Int32Array.from(order.slice(cutLow), (k) => set[k]));
  }
  return blocks;
}

/** Each item's position along the line from one far item to another (found from a random start). */
function project(space: VectorSpace, set: Int32Array, rng: Rng): Float64Array {
  const probe = set.length > 2000 ? rng.sample(Array.from(set), 2000) : Array.from(set);
  const farthestFrom = (origin: number) => probe.reduce((best, i) => (space.pair(origin, i) > space.pair(origin, best) ? i : best), probe[0]);
  const q = farthestFrom(set[rng.int(0, set.length - 1)]);
  const r = farthestFrom(q);
  const direction = space.vector(r).slice();
  const from = space.vector(q);
  for (let k = 0; k < direction.length; k++) direction[k] -= from[k];
  return Float64Array.from(set, (i) => space.dot(i, direction));
}
