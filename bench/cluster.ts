// `npm run bench -- cluster [--quick] [--linkage average|single|complete]`: hierarchical clustering.
//   1. this O(n²) implementation against ml-hclust `agnes` (the reference, cubic) on 64-dim random
//      points at n = 1,000, 2,000, 4,000: seconds, ratio, and whether the clusters are identical
//      (cut into 2…n/2 groups and at thresholds between merge heights);
//   2. the 4,076 Seal-Tools tool names (lexical embedder): time per linkage, clusters, silhouette;
//   3. blocked mode against exact on the 20,614 ToolE queries and on 20,000 dense points in blobs:
//      adjusted Rand index and seconds.
// About ten minutes: agnes at 4,000 takes about three; --quick skips it and shrinks part 3 to 8,000 items.
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { parse } from 'csv-parse/sync';
import { agnes } from 'ml-hclust';
import { adjustedRandIndex, clusterSpace, cutAtHeight, cutIntoGroups, dendrogram, membersOf, silhouette, VectorSpace, type Linkage } from '../core/cluster/index.ts';
import { lexicalEmbedder } from '../core/embed/index.ts';
import { Rng } from '../core/rng.ts';

const SHARED = new URL('../../shared/data/', import.meta.url);

function seconds<T>(work: () => T): [T, number] {
  const start = performance.now();
  const value = work();
  return [value, (performance.now() - start) / 1000];
}

function key(groups: number[][]): string {
  return groups
    .map((g) => [...g].sort((a, b) => a - b).join(','))
    .sort()
    .join('|');
}

function randomPoints(n: number, dim: number, seed: number): number[][] {
  const rng = new Rng(seed);
  return Array.from({ length: n }, () => Array.from({ length: dim }, () => rng.next()));
}

async function againstAgnes(sizes: number[], linkage: Linkage, skipAgnesAbove: number): Promise<void> {
  console.log(`### ${linkage} linkage vs ml-hclust agnes (64-dim uniform random points, euclidean)\n`);
  console.log('| n | agnes (s) | toolkiln (s) | ratio | identical clusters |');
  console.log('|---:|---:|---:|---:|---|');
  for (const n of sizes) {
    const points = randomPoints(n, 64, n);
    const [tree, mine] = seconds(() => dendrogram(VectorSpace.from(points, 'euclidean'), linkage));
    if (n > skipAgnesAbove) {
      console.log(`| ${n} | (skipped) | ${mine.toFixed(3)} | | |`);
      continue;
    }
    const [reference, theirs] = seconds(() => agnes(points, { method: linkage }));
    const heights = tree.merges.map((m) => m.height);
    let identical = true;
    for (const k of [2, 10, 50, Math.floor(n / 10), Math.floor(n / 2)]) identical &&= key(membersOf(cutIntoGroups(tree, k))) === key(reference.group(k).children.map((c) => c.indices()));
    for (const q of [0.25, 0.5, 0.75, 0.9]) {
      const at = Math.floor(q * (heights.length - 2));
      const t = (heights[at] + heights[at + 1]) / 2;
      identical &&= key(membersOf(cutAtHeight(tree, t))) === key(reference.cut(t).map((c) => c.indices()));
    }
    console.log(`| ${n} | ${theirs.toFixed(2)} | ${mine.toFixed(3)} | ${(theirs / mine).toFixed(0)}× | ${identical ? 'yes' : 'NO'} |`);
  }
  console.log('');
}

async function sealTools(): Promise<void> {
  const names = readFileSync(new URL('sources/seal-tools/tool.jsonl', SHARED), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line).api_name as string);
  const [vectors, embedSeconds] = await (async () => {
    const start = performance.now();
    const v = await lexicalEmbedder().embed(names);
    return [v, (performance.now() - start) / 1000] as const;
  })();
  const space = VectorSpace.from(vectors, 'cosine');
  console.log(`### Seal-Tools: ${names.length} tool names, lexical embedder (${embedSeconds.toFixed(2)} s to embed), cosine threshold 0.25\n`);
  console.log('| linkage | cluster (s) | clusters | reduction | silhouette (s) | silhouette |');
  console.log('|---|---:|---:|---:|---:|---:|');
  for (const linkage of ['single', 'complete', 'average'] as const) {
    const [result, took] = seconds(() => clusterSpace(space, { threshold: 0.25, linkage, mode: 'exact' }));
    const [score, scoring] = seconds(() => silhouette(space, result.labels));
    console.log(`| ${linkage} | ${took.toFixed(2)} | ${result.clusters.length} | ${(names.length / result.clusters.length).toFixed(2)}:1 | ${scoring.toFixed(2)} | ${score.score?.toFixed(4)} |`);
  }
  console.log('');
}

async function blockedAgreement(quick: boolean): Promise<void> {
  const rows = parse(readFileSync(new URL('reference/metatool/all_clean_data.csv', SHARED)), { columns: true }) as { Query: string }[];
  const queries = rows.map((r) => r.Query).slice(0, quick ? 8000 : rows.length);
  const lexical = VectorSpace.from(await lexicalEmbedder().embed(queries), 'cosine');
  const rng = new Rng(17);
  const n = quick ? 8000 : 20000;
  const centres = randomPoints(400, 32, 3);
  const dense = VectorSpace.from(
    Array.from({ length: n }, () => rng.pick(centres).map((x) => x + (rng.next() - 0.5) * 0.15)),
    'euclidean',
  );
  const cases: { name: string; space: VectorSpace; threshold: number }[] = [
    { name: `ToolE queries (${queries.length}), lexical, cosine ≤ 0.3`, space: lexical, threshold: 0.3 },
    { name: `${n} dense 32-dim points in 400 blobs, euclidean ≤ 0.5`, space: dense, threshold: 0.5 },
  ];
  console.log('### Blocked mode (default block size 2,000) against exact\n');
  console.log('| data | linkage | exact (s) | exact clusters | blocked (s) | blocked clusters | close pairs by | adjusted Rand index |');
  console.log('|---|---|---:|---:|---:|---:|---|---:|');
  for (const { name, space, threshold } of cases) {
    for (const linkage of ['single', 'complete', 'average'] as const) {
      const [exact, exactSeconds] = seconds(() => clusterSpace(space, { threshold, linkage, mode: 'exact' }));
      const [blocked, blockedSeconds] = seconds(() => clusterSpace(space, { threshold, linkage, mode: 'blocked' }));
      const how = blocked.blocked!.closePairs === 'prefix-filter' ? 'prefix filter (exact)' : `${blocked.blocked!.rounds} rounds of random blocks`;
      console.log(`| ${name} | ${linkage} | ${exactSeconds.toFixed(1)} | ${exact.clusters.length} | ${blockedSeconds.toFixed(1)} | ${blocked.clusters.length} | ${how} | ${adjustedRandIndex(exact.labels, blocked.labels).toFixed(4)} |`);
    }
  }
  console.log('');
}

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { quick: { type: 'boolean' }, linkage: { type: 'string' } }, allowPositionals: false });
  const quick = values.quick === true;
  const linkage = (values.linkage ?? 'average') as Linkage;
  console.log(`Node ${process.version}, load average ${loadavg()[0].toFixed(2)} at start.\n`);
  await againstAgnes([1000, 2000, 4000], linkage, quick ? 2000 : Infinity);
  await sealTools();
  await blockedAgreement(quick);
}
