import { countBy } from '../../core/collections.ts';
import type { Sample } from '../../core/records.ts';
import type { ScanStage } from '../../core/stage.ts';
import { formatTable } from '../../core/table.ts';
import { listTally, statisticsBesideReleased, type ReleasedPlace, type Tally } from '../released-statistics.ts';
import { MULTI_TOOL_SPLIT, SINGLE_TOOL_SPLIT } from './records.ts';
import { wordCount } from './text.ts';

/**
 * Dataset statistics (paper Appendix A.5, Table 11, Figure 12): queries per generation method and
 * per tool, and the distribution of query lengths — next to the same figures of the released
 * `all_clean_data.csv` and the paper's own counts, in the manifest and the run log. The closing
 * stage of the recipe: the task samples the stage before adds are not counted.
 */

/** Table 11 of the paper: queries per method before checking, and after it. */
export const PAPER_TABLE_11 = {
  beforeChecking: { direct: 11700, emotional: 7800, keyword: 1950, details: 7800, 'multi-tool': 1624 },
  afterChecking: { singleTool: 20630, multiTool: 497 },
};

const BUCKETS: [number, number][] = [
  [0, 10],
  [11, 20],
  [21, 30],
  [31, 40],
  [41, 60],
  [61, 80],
  [81, Infinity],
];

export interface QueryFigures {
  queries: number;
  tools: number;
  perTool: { min: number; median: number; mean: number; max: number; top: { tool: string; queries: number }[] };
  words: { mean: number; median: number; p90: number; max: number; shareUpTo40: number; histogram: Record<string, number> };
}

function quantile(sorted: number[], q: number): number {
  if (!sorted.length) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;

/** Per-tool and length figures of a list of (query, tool) rows. */
export function queryFigures(rows: { query: string; tool: string }[]): QueryFigures {
  const perTool = countBy(rows.map((r) => r.tool));
  const counts = Object.values(perTool).sort((a, b) => a - b);
  const lengths = rows.map((r) => wordCount(r.query)).sort((a, b) => a - b);
  const histogram: Record<string, number> = {};
  for (const [lo, hi] of BUCKETS) histogram[hi === Infinity ? `${lo}+` : `${lo}-${hi}`] = lengths.filter((n) => n >= lo && n <= hi).length;
  return {
    queries: rows.length,
    tools: counts.length,
    perTool: {
      min: counts[0] ?? 0,
      median: quantile(counts, 0.5),
      mean: round(counts.length ? rows.length / counts.length : 0),
      max: counts[counts.length - 1] ?? 0,
      top: Object.entries(perTool)
        .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
        .slice(0, 10)
        .map(([tool, queries]) => ({ tool, queries })),
    },
    words: {
      mean: round(lengths.length ? lengths.reduce((a, b) => a + b, 0) / lengths.length : 0),
      median: quantile(lengths, 0.5),
      p90: quantile(lengths, 0.9),
      max: lengths[lengths.length - 1] ?? 0,
      shareUpTo40: round(lengths.length ? lengths.filter((n) => n <= 40).length / lengths.length : 0, 4),
      histogram,
    },
  };
}

/** The side-by-side table printed in the run log. */
export function comparisonTable(ours: QueryFigures, released: QueryFigures | null): string {
  const row = (label: string, pick: (f: QueryFigures) => number | string) => [label, String(pick(ours)), released ? String(pick(released)) : '-'];
  return formatTable(['single-tool queries', 'this run', 'released'], [
    row('queries', (f) => f.queries),
    row('tools', (f) => f.tools),
    row('queries per tool: min / median / max', (f) => `${f.perTool.min} / ${f.perTool.median} / ${f.perTool.max}`),
    row('queries per tool: mean', (f) => f.perTool.mean),
    row('words: mean / median / p90 / max', (f) => `${f.words.mean} / ${f.words.median} / ${f.words.p90} / ${f.words.max}`),
    row('share with ≤ 40 words', (f) => f.words.shareUpTo40),
    ...Object.keys(ours.words.histogram).map((bucket) => row(`words ${bucket}`, (f) => f.words.histogram[bucket] ?? 0)),
  ]);
}

/** What the statistics need of one single- or multi-tool sample. */
export interface StatisticsRow {
  split: string;
  query: string;
  labels: string[];
  method: string;
  emotion: string;
  usage: string;
}

/** The statistics row of a ToolE sample, or null for a sample of another split (a task set's). */
export function statisticsRow(sample: Sample): StatisticsRow | null {
  if (sample.split !== SINGLE_TOOL_SPLIT && sample.split !== MULTI_TOOL_SPLIT) return null;
  return { split: sample.split, query: sample.dialogue[0].content, labels: sample.expected.labels!, method: String(sample.meta.method), emotion: String(sample.meta.emotion), usage: String(sample.meta.usage ?? 'unmarked') };
}

export interface TooleStatistics {
  perMethod: Record<string, number>;
  perEmotion: Record<string, number>;
  multiTool: { queries: number; pairs: number; usage: Record<string, number> };
  singleTool: QueryFigures;
}

/** The figures of the single- and multi-tool samples' rows. */
export function summarise(rows: readonly StatisticsRow[]): TooleStatistics {
  const single = rows.filter((s) => s.split === SINGLE_TOOL_SPLIT);
  const multi = rows.filter((s) => s.split === MULTI_TOOL_SPLIT);
  return {
    perMethod: countBy([...single, ...multi].map((s) => s.method)),
    perEmotion: countBy(single.filter((s) => s.method === 'emotional').map((s) => s.emotion)),
    multiTool: { queries: multi.length, pairs: new Set(multi.map((s) => [...s.labels].sort().join('+'))).size, usage: countBy(multi.map((s) => s.usage)) },
    singleTool: queryFigures(single.map((s) => ({ query: s.query, tool: s.labels[0] }))),
  };
}

/**
 * Reports the figures of the finished dataset (manifest `stats["toole.statistics"]`: the released
 * set's single-tool figures beside the run's) and logs the comparison table.
 */
export function statisticsStage(options: { released?: ReleasedPlace }): ScanStage<Sample, Sample, Tally<StatisticsRow, TooleStatistics>> {
  return statisticsBesideReleased({
    version: 1,
    title: 'ToolE statistics',
    figures: statisticsRow,
    tally: listTally(summarise),
    released: options.released,
    close: (ours, released) => ({
      reports: {
        'toole.statistics': {
          ...ours,
          released: released && { file: options.released!.path, ...released.singleTool },
          paper: PAPER_TABLE_11,
        },
      },
      table: [`queries per method: ${Object.entries(ours.perMethod).map(([m, n]) => `${m} ${n}`).join(', ')}`, comparisonTable(ours.singleTool, released?.singleTool ?? null)].join('\n'),
    }),
  });
}
