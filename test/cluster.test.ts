import { readFileSync } from 'node:fs';
import { agnes } from 'ml-hclust';
import { describe, expect, it } from 'vitest';
import {
  adjustedRandIndex,
  clusterSpace,
  clusterVectors,
  CondensedMatrix,
  cutAtHeight,
  cutIntoGroups,
  dendrogram,
  medoid,
  membersOf,
  renderClusterPlot,
  silhouette,
  VectorSpace,
  type Linkage,
} from '../core/cluster/index.ts';
import { project2d } from '../core/cluster/projection.ts';
import { lexicalEmbedder } from '../core/embed/index.ts';
import { UserError } from '../core/errors.ts';
import { Rng } from '../core/rng.ts';

const SHARED = new URL('../../shared/data/', import.meta.url);
const LINKAGES: Linkage[] = ['single', 'complete', 'average'];

/** The Seal-Tools tool names (the first `limit`). */
function sealNames(limit?: number): string[] {
  const lines = readFileSync(new URL('sources/seal-tools/tool.jsonl', SHARED), 'utf8').trim().split('\n');
  return lines.slice(0, limit ?? lines.length).map((line) => JSON.parse(line).api_name as string);
}

function randomPoints(n: number, dim: number, seed: number): number[][] {
  const rng = new Rng(seed);
  return Array.from({ length: n }, () => Array.from({ length: dim }, () => rng.next()));
}

/** A partition as comparable text: members sorted, groups sorted. */
function partitionKey(groups: number[][]): string {
  return groups
    .map((g) => [...g].sort((a, b) => a - b).join(','))
    .sort()
    .join('|');
}

/** Thresholds midway between consecutive merge heights (never on a height, so float noise cannot flip a cut). */
function safeThresholds(heights: number[], quantiles: number[]): number[] {
  return quantiles.map((q) => {
    const k = Math.min(heights.length - 2, Math.floor(q * (heights.length - 1)));
    return (heights[k] + heights[k + 1]) / 2;
  });
}

describe('exact clustering equals ml-hclust agnes', () => {
  const points = randomPoints(300, 12, 11);
  for (const linkage of LINKAGES) {
    it(`${linkage} linkage, euclidean: same clusters by count and by threshold`, () => {
      const reference = agnes(points, { method: linkage });
      const tree = dendrogram(VectorSpace.from(points, 'euclidean'), linkage);
      expect(tree.merges).toHaveLength(299);
      for (const k of [1, 2, 3, 7, 20, 64, 150, 299, 300]) {
        const mine = membersOf(cutIntoGroups(tree, k));
        expect(mine).toHaveLength(k);
        expect(partitionKey(mine)).toBe(partitionKey(reference.group(k).children.map((c) => c.indices())));
      }
      for (const t of safeThresholds(tree.merges.map((m) => m.height), [0.05, 0.3, 0.6, 0.9, 0.99])) {
        expect(partitionKey(membersOf(cutAtHeight(tree, t)))).toBe(partitionKey(reference.cut(t).map((c) => c.indices())));
      }
    });
  }

  it('also under cosine distance (agnes given the same distance function)', () => {
    const pts = randomPoints(200, 8, 5).map((p) => p.map((x) => x - 0.5));
    const cosine = (a: number[], b: number[]) => {
      let dot = 0;
      let na = 0;
      let nb = 0;
      for (let k = 0; k < a.length; k++) [dot, na, nb] = [dot + a[k] * b[k], na + a[k] * a[k], nb + b[k] * b[k]];
      return 1 - dot / Math.sqrt(na * nb);
    };
    for (const linkage of LINKAGES) {
      const reference = agnes(pts, { method: linkage, distanceFunction: cosine });
      const result = clusterVectors(pts, { linkage, clusters: 12 });
      expect(partitionKey(result.clusters)).toBe(partitionKey(reference.group(12).children.map((c) => c.indices())));
    }
  });

  it('handles ties: duplicated points join at height 0 and cuts stay consistent', () => {
    const base = randomPoints(40, 3, 2);
    const points = [...base, ...base.slice(0, 10), ...base.slice(0, 5)];
    for (const linkage of LINKAGES) {
      const tree = dendrogram(VectorSpace.from(points, 'euclidean'), linkage);
      const atZero = membersOf(cutAtHeight(tree, 0));
      expect(atZero).toHaveLength(40);
      expect(atZero[0]).toEqual([0, 40, 50]);
    }
    // On a grid of equal distances single linkage is still unique: compare with agnes.
    const grid = Array.from({ length: 36 }, (_, i) => [i % 6, Math.floor(i / 6)]);
    const tree = dendrogram(VectorSpace.from(grid, 'euclidean'), 'single');
    for (const t of [0.5, 1, 1.2, 1.5]) expect(partitionKey(membersOf(cutAtHeight(tree, t)))).toBe(partitionKey(agnes(grid, { method: 'single' }).cut(t).map((c) => c.indices())));
  });

  it('gives the same hierarchy from a precomputed matrix and leaves a given matrix untouched', () => {
    const space = VectorSpace.from(randomPoints(50, 4, 9), 'euclidean');
    const matrix = CondensedMatrix.of(space);
    const copy = matrix.data.slice();
    const fromMatrix = dendrogram(matrix, 'average');
    expect(matrix.data).toEqual(copy);
    expect(fromMatrix.merges).toEqual(dendrogram(space, 'average').merges);
  });
});

describe('blocked mode', () => {
  it('agrees with the exact clustering on clustered data', () => {
    const rng = new Rng(4);
    const centres = randomPoints(60, 16, 21);
    const points = Array.from({ length: 2400 }, () => rng.pick(centres).map((x) => x + (rng.next() - 0.5) * 0.15));
    for (const linkage of LINKAGES) {
      const exact = clusterVectors(points, { linkage, threshold: 0.3, metric: 'euclidean', mode: 'exact' });
      const blocked = clusterVectors(points, { linkage, threshold: 0.3, metric: 'euclidean', mode: 'blocked', blockSize: 400 });
      expect(blocked.mode).toBe('blocked');
      expect(blocked.blocked!.closePairs).toBe('random-blocks');
      expect(adjustedRandIndex(exact.labels, blocked.labels)).toBeGreaterThan(0.99);
    }
  });

  it('finds close pairs exactly for sparse cosine vectors (prefix filter)', async () => {
    const names = sealNames(1500);
    const space = VectorSpace.from(await lexicalEmbedder().embed(names), 'cosine');
    const found = new Set<string>();
    space.closePairs(0.3, (i, j) => found.add(`${i},${j}`));
    const row = new Float64Array(space.n);
    const truth: string[] = [];
    for (let i = 0; i < space.n; i++) {
      space.row(i, row, i + 1);
      for (let j = i + 1; j < space.n; j++) if (row[j] <= 0.3) truth.push(`${i},${j}`);
    }
    expect(truth.length).toBeGreaterThan(50);
    expect([...found].sort()).toEqual(truth.sort());
    const exact = clusterSpace(space, { threshold: 0.3, mode: 'exact' });
    const blocked = clusterSpace(space, { threshold: 0.3, mode: 'blocked', blockSize: 300 });
    expect(blocked.blocked!.closePairs).toBe('prefix-filter');
    expect(Array.from(blocked.labels)).toEqual(Array.from(exact.labels));
  });

  it('needs a threshold', () => {
    expect(() => clusterVectors(randomPoints(10, 2, 1), { clusters: 3, mode: 'blocked' })).toThrow(/needs a distance threshold/);
  });
});

describe('silhouette, agreement, medoid', () => {
  it('computes the silhouette coefficient by its definition', () => {
    // Points on a line: {0, 1} and {10, 12}, plus 30 alone.
    const points = [[0], [1], [10], [12], [30]];
    const labels = [0, 0, 1, 1, 2];
    const space = VectorSpace.from(points, 'euclidean');
    const s = (a: number, b: number) => (b - a) / Math.max(a, b);
    const expected = (s(1, 11) + s(1, 10) + s(2, 9.5) + s(2, 11.5) + 0) / 5;
    expect(silhouette(space, labels).score).toBeCloseTo(expected, 12);
    expect(silhouette(space, [0, 0, 0, 0, 0]).score).toBeNull();
    expect(silhouette(space, [0, 1, 2, 3, 4]).score).toBeNull();
    const sampled = silhouette(space, labels, { sample: 3, seed: 1 });
    expect(sampled.scored).toBe(3);
  });

  it('scores partitions with the adjusted Rand index', () => {
    expect(adjustedRandIndex([0, 0, 1, 1, 2], [5, 5, 3, 3, 9])).toBe(1);
    expect(adjustedRandIndex([0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 2, 2])).toBeCloseTo(0.2424242424, 8);
    expect(adjustedRandIndex([0, 1, 2], [0, 1, 2])).toBe(1);
  });

  it('picks the medoid', () => {
    const space = VectorSpace.from([[0], [1], [2], [10]], 'euclidean');
    expect(medoid(space, [0, 1, 2, 3])).toBe(1);
    expect(medoid(space, [3])).toBe(3);
  });
});

describe('projection and plot', () => {
  it('projects onto the main axes and writes a self-contained page', async () => {
    const onLine = Array.from({ length: 30 }, (_, i) => [i, 2 * i, -i, 0.5 * i]);
    const { points, explained } = project2d(VectorSpace.from(onLine, 'euclidean'));
    expect(explained[0]).toBeCloseTo(1, 6);
    expect(points).toHaveLength(30);

    const names = ['search_movie', 'find_movie', 'book_hotel', 'reserve_hotel', 'get_<weather> & "now"', 'delete_user'];
    const vectors = await lexicalEmbedder().embed(names);
    const space = VectorSpace.from(vectors, 'cosine');
    const result = clusterSpace(space, { threshold: 0.25 });
    expect(result.clusters).toEqual([[0, 1], [2, 3], [4], [5]]);
    const html = renderClusterPlot({ title: 'Tools', points: project2d(space, { seed: 3 }).points, labels: result.labels, names });
    expect(html.match(/<circle /g)).toHaveLength(6);
    expect(html).toContain('<title>find_movie — cluster 0 (2: search_movie)</title>');
    expect(html).toContain('get_&lt;weather&gt; &amp; &quot;now&quot;');
    expect(html).not.toMatch(/<script|https?:\/\/(?!www\.w3\.org\/2000\/svg)|@import|<link/);
    // Same input, same bytes.
    expect(renderClusterPlot({ title: 'Tools', points: project2d(space, { seed: 3 }).points, labels: result.labels, names })).toBe(html);
  });

  it('reduces long sparse vectors before PCA (lexical vectors of the Seal-Tools names)', async () => {
    const names = sealNames(400);
    const { points, explained } = project2d(VectorSpace.from(await lexicalEmbedder().embed(names), 'cosine'), { seed: 1 });
    expect(points.every(([x, y]) => Number.isFinite(x) && Number.isFinite(y))).toBe(true);
    expect(explained[0]).toBeGreaterThan(explained[1]);
  });
});

describe('the Seal-Tools library', () => {
  it('clusters 4,076 tool names, putting name variants together', async () => {
    const names = sealNames();
    expect(names).toHaveLength(4076);
    const space = VectorSpace.from(await lexicalEmbedder().embed(names), 'cosine');
    const result = clusterSpace(space, { threshold: 0.25, linkage: 'average' });
    expect(result.mode).toBe('exact');
    const clusterOf = (name: string) => result.labels[names.indexOf(name)];
    expect(clusterOf('getEmployeeInfo')).toBe(clusterOf('getEmployeeDetails'));
    expect(clusterOf('getTrafficInfo')).toBe(clusterOf('getTrafficStatus'));
    expect(clusterOf('createProduct')).not.toBe(clusterOf('deleteProduct'));
    expect(result.clusters.length).toBeLessThan(4076);
    expect(result.clusters.length).toBeGreaterThan(2500);
  });
});

describe('bad input', () => {
  it('says what is wrong', () => {
    expect(() => clusterVectors([], { threshold: 0.3 })).toThrow(/nothing to cluster/);
    expect(() => clusterVectors([[1, 0], [NaN, 1]], { threshold: 0.3, source: 'tools.jsonl' })).toThrow(/tools.jsonl: vector 1 holds NaN at position 0/);
    expect(() => clusterVectors([[1, 0], [0, 1]], { threshold: 2.5 })).toThrow(/threshold 2.5 is out of range/);
    expect(() => clusterVectors([[1, 0], [0, 1]], { threshold: -0.1 })).toThrow(UserError);
    expect(() => clusterVectors([[1, 0], [0, 1]], { threshold: NaN })).toThrow(/out of range/);
    expect(() => clusterVectors([[1, 0], [0, 1]], {})).toThrow(/either a distance threshold or a cluster count/);
    expect(() => clusterVectors([[1, 0], [0, 1]], { threshold: 0.3, clusters: 2 })).toThrow(/exactly one/);
    expect(() => clusterVectors([[1, 0], [0, 1]], { clusters: 3 })).toThrow(/from 1 to 2/);
    expect(() => clusterVectors([[1, 0], [0, 1]], { threshold: 0.3, linkage: 'ward' as Linkage })).toThrow(/unknown linkage "ward"/);
    expect(clusterVectors([[1, 0]], { threshold: 0.3 }).clusters).toEqual([[0]]);
  });
});
