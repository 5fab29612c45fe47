import { join } from 'node:path';
import type { BenchmarkScorer, EvalItem, JudgedItem, ReportTables } from '../core/eval.ts';
import { writeFileAtomic } from '../core/jsonl.ts';
import type { SampleSource } from '../core/sample-source.ts';
import { UnitTally } from '../core/eval-tally.ts';
import { bootstrapDifferences, type BootstrapOptions, type Interval } from './compare-bootstrap.ts';
import { unitOf } from './judged.ts';
import { evaluate, type ModelChoice } from './run.ts';

/** The two sides compared: a generated version and the released benchmark it belongs to. */
export const SIDES = ['generated', 'released'] as const;
export type Side = (typeof SIDES)[number];

/** One model as it answers each side (a predictions file names the items of one side only). */
export interface CompareModel {
  name: string;
  generated: ModelChoice;
  released: ModelChoice;
}

/** One metric of one category (`all`: the whole side) on both sides. */
export interface CompareRow {
  category: string;
  metric: string;
  generated: number | null;
  released: number | null;
  /** generated − released, when both sides have the figure. */
  difference: number | null;
  interval: Interval | null;
}

export interface ModelComparison {
  model: string;
  items: Record<Side, number>;
  missing: Record<Side, number>;
  rows: CompareRow[];
  files: string[];
}

export interface CompareOptions {
  scorer: BenchmarkScorer;
  /** The version's samples and folder. */
  samples: SampleSource;
  version: { dir: string };
  /** The released benchmark's items. */
  releasedItems: EvalItem[];
  model: CompareModel;
  resamples: number;
  seed: number;
  /** Score only the items of the first `limit` samples (units) of each side. */
  limit?: number;
  /** Where each side's results go (`<dir>/<side>/report.json` and `items.jsonl`). */
  outDir: string;
  onProgress?: (message: string) => void;
}

/** The name of the table a figure is in: `all` for the whole side, else the category. */
export const ALL = 'all';

/**
 * Runs one model on both sides, and per metric and category gives each side's figure, their
 * difference and its bootstrap 95 % interval (the units of each side resampled on their own).
 * Categories are matched by name: the five benchmarks' released sets and recipes name them alike
 * (a category on one side only, such as MTU's "hard", has no difference).
 */
export async function compareModel(options: CompareOptions): Promise<ModelComparison> {
  const { scorer } = options;
  const resampled: Partial<Record<Side, Resampled>> = {};
  const tables: Partial<Record<Side, ReportTables>> = {};
  const items = {} as Record<Side, number>;
  const missing = {} as Record<Side, number>;
  const files: string[] = [];
  for (const side of SIDES) {
    options.onProgress?.(`eval compare: ${options.model.name} on the ${side} side`);
    const result = await evaluate({
      scorer,
      ...(side === 'generated' ? { samples: options.samples, version: options.version, limit: options.limit } : { items: firstUnits(scorer, options.releasedItems, options.limit) }),
      model: options.model[side],
      outDir: join(options.outDir, side),
      onProgress: options.onProgress,
    });
    // With a tally the judged items go now: a side is kept as its units' terms.
    resampled[side] = scorer.tally ? UnitTally.of(scorer.tally, result.units) : result.units;
    tables[side] = result.report;
    items[side] = result.report.items;
    missing[side] = result.missing;
    files.push(...result.files);
  }
  // A resample's tables come from the judged figures (each unit drawn counts as its own dialogue): nothing is judged again.
  const intervals = resampledDifferences(scorer, resampled.generated!, resampled.released!, { resamples: options.resamples, seed: options.seed });
  return { model: options.model.name, items, missing, rows: rowsOf(tables.generated!, tables.released!, intervals), files };
}

/** A side as resamples draw it: its units' terms (a scorer with a tally), else its judged items. */
type Resampled = UnitTally | JudgedItem[][];

/** The bootstrap intervals of every figure's difference; units are drawn by index, so both forms draw alike. */
export function resampledDifferences(scorer: BenchmarkScorer, a: Resampled, b: Resampled, options: BootstrapOptions): Record<string, Interval> {
  const indexes = (side: Resampled) => Array.from({ length: side instanceof UnitTally ? side.units : side.length }, (_, i) => i);
  const tables = (drawn: number[], from: 'a' | 'b') => {
    const side = from === 'a' ? a : b;
    return flatTables(side instanceof UnitTally ? side.tablesOf(drawn) : scorer.tablesOf(drawn.map((i) => side[i])));
  };
  return bootstrapDifferences(indexes(a), indexes(b), tables, options);
}

/** A figure's key in a flat table: category and metric. */
const keyOf = (category: string, metric: string) => `${category}\u0000${metric}`;

function flatTables(tables: ReportTables): Record<string, number> {
  const flat: Record<string, number> = {};
  for (const [category, table] of [[ALL, tables.metrics] as const, ...Object.entries(tables.byCategory)]) {
    for (const [metric, value] of Object.entries(table)) flat[keyOf(category, metric)] = value;
  }
  return flat;
}

/** Rows in the order the generated side lists its tables and metrics, then what only the released side has. */
function rowsOf(generated: ReportTables, released: ReportTables, intervals: Record<string, Interval>): CompareRow[] {
  const [g, r] = [flatTables(generated), flatTables(released)];
  const keys = [...new Set([...Object.keys(g), ...Object.keys(r)])];
  return keys.map((key) => {
    const [category, metric] = key.split('\u0000');
    const both = key in g && key in r;
    return { category, metric, generated: g[key] ?? null, released: r[key] ?? null, difference: both ? g[key] - r[key] : null, interval: both ? (intervals[key] ?? null) : null };
  });
}

/** The items of the first `limit` units (all without a limit). */
function firstUnits(scorer: BenchmarkScorer, items: EvalItem[], limit?: number): EvalItem[] {
  if (limit === undefined) return items;
  const kept = new Set<string>();
  return items.filter((item) => {
    const unit = unitOf(scorer, item);
    if (!kept.has(unit) && kept.size < limit) kept.add(unit);
    return kept.has(unit);
  });
}

export interface ComparisonFile {
  dataset: string;
  reference: { name: string; dir: string; files: string };
  resamples: number;
  seed: number;
  models: ModelComparison[];
  agreement?: object;
}

/** Writes the comparison of `models` (their names joined by `+`) into `dir`: `<models>.json`. */
export function writeComparison(dir: string, models: string, comparison: ComparisonFile): string {
  const file = join(dir, `${models}.json`);
  writeFileAtomic(file, `${JSON.stringify(comparison, null, 2)}\n`);
  return file;
}
