// `npm run bench -- dedup [--quick]`: near-duplicate queries in the 20,614 ToolE queries
// (../shared/data/reference/metatool/all_clean_data.csv).
//   1. recall of the partition join against exact all-pairs comparison on a sample one can afford
//      (the queries of randomly chosen tools until 3,000 texts, where repeats concentrate; 1,200 with
//      --quick), at Levenshtein ratio 0.9, 0.8 and 0.7;
//   2. the whole set: seconds for findNearDuplicates at 0.9 (best of three), what it dropped, and the
//      all-pairs time estimated from the sample's per-pair cost.
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { parse } from 'csv-parse/sync';
import { groupBy } from '../core/collections.ts';
import { findNearDuplicates, levenshteinRatio, normalizeText, similarPairs } from '../core/dedup/near-duplicates.ts';
import { Rng } from '../core/rng.ts';

const SHARED = new URL('../../shared/data/', import.meta.url);

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { quick: { type: 'boolean' } }, allowPositionals: false });
  const sampleSize = values.quick ? 1200 : 3000;
  const rows = parse(readFileSync(new URL('reference/metatool/all_clean_data.csv', SHARED)), { columns: true }) as { Query: string; Tool: string }[];
  const queries = rows.map((r) => r.Query);
  console.log(`Node ${process.version}, load average ${loadavg()[0].toFixed(2)} at start; ${queries.length} queries.\n`);

  // A sample made of whole tools' queries (near-duplicates are mostly among one tool's queries).
  const byTool = [...groupBy(rows, (r) => r.Tool).values()];
  const sample: string[] = [];
  for (const group of new Rng(5).shuffle(byTool)) {
    if (sample.length >= sampleSize) break;
    sample.push(...group.map((r) => r.Query));
  }
  const distinct = [...new Set(sample.slice(0, sampleSize).map(normalizeText))];
  const pairsInSample = (distinct.length * (distinct.length - 1)) / 2;

  console.log(`### Recall against exact all-pairs (${distinct.length} distinct normalised queries, ${pairsInSample.toLocaleString('en-US')} pairs)\n`);
  console.log('| ratio | pairs (all-pairs) | pairs (toolkiln) | recall | precision | all-pairs (s) | toolkiln (s) | Levenshtein calls |');
  console.log('|---:|---:|---:|---:|---:|---:|---:|---:|');
  let perPair = 0;
  for (const ratio of [0.9, 0.8, 0.7]) {
    let start = performance.now();
    const truth = new Set<string>();
    for (let i = 0; i < distinct.length; i++) for (let j = i + 1; j < distinct.length; j++) if (levenshteinRatio(distinct[i], distinct[j]) >= ratio) truth.add(`${i},${j}`);
    const allPairsSeconds = (performance.now() - start) / 1000;
    perPair = allPairsSeconds / pairsInSample;
    start = performance.now();
    const found = similarPairs(distinct, ratio);
    const ownSeconds = (performance.now() - start) / 1000;
    const keys = found.pairs.map(([i, j]) => `${i},${j}`);
    const hits = keys.filter((k) => truth.has(k)).length;
    const recall = truth.size ? hits / truth.size : 1;
    const precision = keys.length ? hits / keys.length : 1;
    console.log(`| ${ratio} | ${truth.size} | ${keys.length} | ${recall.toFixed(4)} | ${precision.toFixed(4)} | ${allPairsSeconds.toFixed(1)} | ${ownSeconds.toFixed(3)} | ${found.comparisons.toLocaleString('en-US')} |`);
  }

  console.log(`\n### The whole set (${queries.length} queries), ratio 0.9\n`);
  const times: number[] = [];
  let result = findNearDuplicates(queries, { ratio: 0.9 });
  for (let attempt = 0; attempt < 3; attempt++) {
    const start = performance.now();
    result = findNearDuplicates(queries, { ratio: 0.9 });
    times.push((performance.now() - start) / 1000);
  }
  const exact = result.duplicates.filter((d) => d.kind === 'exact').length;
  const distinctAll = result.stats.distinct;
  const estimate = ((distinctAll * (distinctAll - 1)) / 2) * perPair;
  console.log('| seconds (best of 3) | kept | exact duplicates | near duplicates | candidates | Levenshtein calls | all-pairs estimate (s) | speed-up |');
  console.log('|---:|---:|---:|---:|---:|---:|---:|---:|');
  const best = Math.min(...times);
  console.log(`| ${best.toFixed(2)} | ${result.kept.length} | ${exact} | ${result.duplicates.length - exact} | ${result.stats.candidates.toLocaleString('en-US')} | ${result.stats.comparisons.toLocaleString('en-US')} | ${estimate.toFixed(0)} | ${(estimate / best).toFixed(0)}× |`);
  console.log('');
}
