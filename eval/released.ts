import { existsSync } from 'node:fs';
import { UserError } from '../core/errors.ts';
import type { BenchmarkScorer, EvalItem } from '../core/eval.ts';
import { pipelines } from '../pipelines/index.ts';

/**
 * The released benchmarks `toolkiln eval compare` reads, as the recipes declare them (each
 * pipeline's `released` entries, scored by that pipeline's scorer): nothing here knows a benchmark.
 */

/** A released benchmark a scorer reads as items, to compare a generated version with. */
export interface ReleasedSet {
  /** The name `--reference` takes. */
  name: string;
  /** The scorer that reads it. */
  scorer: BenchmarkScorer;
  /** What is read, for the report. */
  files: string;
  /** Its default place, relative to the project folder. */
  path: string;
  items(dir: string, resolvePath: (path: string) => string): EvalItem[];
}

/** Every released set a recipe's scorer reads, in the order of the recipes. */
export function releasedSets(): ReleasedSet[] {
  return Object.values(pipelines).flatMap((pipeline) => {
    const scorer = pipeline.scorer;
    if (!scorer) return [];
    return (pipeline.released ?? []).flatMap((entry) =>
      entry.items === false
        ? []
        : [{ name: entry.name, scorer, files: entry.files, path: entry.path, items: entry.items ?? ((dir, resolvePath) => Array.from(entry.read(dir, resolvePath).samples()).flatMap((sample) => scorer.items(sample))) }],
    );
  });
}

/** The released set `name` (default: the first its scorer reads), or a one-line error saying what there is. */
export function releasedSetFor(benchmark: string, shownVersion: string, name?: string): ReleasedSet {
  const sets = releasedSets();
  const readable = sets.filter((set) => set.scorer.benchmark === benchmark);
  if (!readable.length) {
    const known = [...new Set(sets.map((set) => set.scorer.benchmark))].join(', ');
    throw new UserError(`${shownVersion} is scored by ${benchmark} rules, and no released set is read by that scorer; eval compare compares versions scored by ${known}`);
  }
  if (name === undefined) return readable[0];
  const set = readable.find((s) => s.name === name);
  if (!set) throw new UserError(`--reference ${name}: not a released set the ${benchmark} scorer reads; ${shownVersion} compares with ${readable.map((s) => s.name).join(', ')}`);
  return set;
}

/** The released set's items read from `dir` (default: its place, resolved as a config's paths are). */
export function releasedItems(set: ReleasedSet, resolvePath: (path: string) => string, dir = resolvePath(set.path)): EvalItem[] {
  if (!existsSync(dir)) throw new UserError(`released ${set.name} not found at ${dir}; put its files (${set.files}) there or give --reference-dir <folder>`);
  return set.items(dir, resolvePath);
}
