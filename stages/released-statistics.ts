import { existsSync } from 'node:fs';
import { UserError } from '../core/errors.ts';
import type { ReleasedSamples } from '../core/pipeline.ts';
import { Sample } from '../core/records.ts';
import type { ScanStage, StageContext } from '../core/stage.ts';
import { formatTable } from '../core/table.ts';

/**
 * The closing statistics stage of every recipe: the figures of the run's samples beside the same
 * figures of the released benchmark the recipe regenerates. The recipe says what one sample
 * contributes and how contributions add up; the released set is read by the reader the recipe's
 * pipeline declares, from where the config puts it, from the start of the run (`prepare`, so that it
 * overlaps the stages before), and counted the same way. Samples pass through unchanged, tallied as
 * they come; at the end the stage reports to the manifest, prints its table in the run log and
 * attaches the recipe's files.
 */

/** Figures added up sample by sample: only what `add` keeps is held, never the set. */
export interface Tally<F, S> {
  add(figures: F): void;
  result(): S;
}

/** A tally that keeps each sample's figures (a compact projection) and summarises the list at the end. */
export function listTally<F, S>(summarise: (figures: readonly F[]) => S): () => Tally<F, S> {
  return () => {
    const list: F[] = [];
    return { add: (figures) => void list.push(figures), result: () => summarise(list) };
  };
}

/** The released set a statistics stage compares with. */
export interface ReleasedPlace {
  /** The set as the recipe's pipeline declares it (its reader). */
  set: ReleasedSamples;
  /** Where the config puts it; empty or null: no comparison. */
  path: string | null | undefined;
  /** The config key that gives `path`, for messages. */
  setting: string;
}

/** What the figures of both sides come to. */
export interface StatisticsClose {
  /** Manifest `stats` entries, by key. */
  reports: Record<string, unknown>;
  /** The table printed in the run log (formatted with core/table.ts). */
  table: string;
  /** Files published under the version's reports/, by name. */
  attach?: Record<string, string>;
}

export interface StatisticsSpec<F, S> {
  /** Default: `statistics`. */
  name?: string;
  version: number;
  /** The heading of the table in the run log. */
  title: string;
  /** One sample's figures; null: the sample is not counted (a task sample among the queries). */
  figures: (sample: Sample) => F | null;
  tally: () => Tally<F, S>;
  /** The released set (none: the run's figures alone), and its samples' figures when they are counted otherwise than the run's. */
  released?: ReleasedPlace & { figures?: (sample: Sample) => F | null };
  close: (ours: S, released: S | null, ctx: StageContext) => StatisticsClose;
}

/** The closing statistics stage of `spec` (see the top of this file). */
export function statisticsBesideReleased<F, S>(spec: StatisticsSpec<F, S>): ScanStage<Sample, Sample, Tally<F, S>> {
  let released: Promise<S | null> | undefined;
  const releasedFigures = (ctx: Pick<StageContext, 'resolvePath' | 'readReleased'>) => (released ??= countReleased(spec, ctx));
  return {
    kind: 'scan',
    name: spec.name ?? 'statistics',
    version: spec.version,
    input: Sample,
    output: Sample,
    // A missing released set fails here, when the run starts; a read that fails surfaces in `finish`.
    prepare: (ctx) => void releasedFigures(ctx).catch(() => {}),
    begin: () => spec.tally(),
    run: (sample, ctx) => {
      const figures = spec.figures(sample);
      if (figures !== null) ctx.state.add(figures);
      return sample;
    },
    finish: async (tally, ctx) => {
      const closed = spec.close(tally.result(), await releasedFigures(ctx), ctx);
      for (const [key, value] of Object.entries(closed.reports)) ctx.report(key, value);
      ctx.log(`${spec.title}\n${closed.table}`);
      for (const [name, content] of Object.entries(closed.attach ?? {})) ctx.attach(name, content);
    },
  };
}

/**
 * The released set's figures, or null when the config gives no place. Whether the set is there is
 * checked before this returns (a one-line error naming the setting); its samples are then read (or
 * taken from the run's read of the set) a few at a time, yielding to the run's other work.
 */
function countReleased<F, S>(spec: StatisticsSpec<F, S>, ctx: Pick<StageContext, 'resolvePath' | 'readReleased'>): Promise<S | null> {
  const place = spec.released;
  if (!place?.path) return Promise.resolve(null);
  const { resolvePath, readReleased } = ctx;
  const path = resolvePath(place.path);
  if (!existsSync(path)) throw new UserError(`${place.setting}: released ${place.set.name} not found at ${path}; put its files (${place.set.files}) there, or set ${place.setting} to "" to leave the comparison out`);
  const figuresOf = place.figures ?? spec.figures;
  // Read once for the run: the overlap gate's index of the same set read it already, or takes what this read.
  const samples = readReleased ? readReleased(place.set, path) : place.set.read(path, resolvePath).samples();
  const tally = spec.tally();
  const add = (sample: Sample) => {
    const figures = figuresOf(sample);
    if (figures !== null) tally.add(figures);
  };
  // Samples an earlier read kept (an array) are counted now: held while the stages run, they would
  // add the whole set to the run's memory. A read of the files goes a few samples at a time.
  if (Array.isArray(samples)) {
    for (const sample of samples as readonly Sample[]) add(sample);
    return Promise.resolve(tally.result());
  }
  return (async () => {
    let count = 0;
    for (const sample of samples) {
      add(sample);
      if (++count % 25 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    return tally.result();
  })();
}

/** A table of figures: one row per figure, the run's value beside the released set's (`-` where it has none). */
export function besideReleased(rows: readonly (readonly [string, string | number, (string | number | null)?])[], released: string | null): string {
  return formatTable(
    ['figure', 'this run', ...(released ? [`released ${released}`] : [])],
    rows.map(([figure, ours, theirs]) => [figure, String(ours), ...(released ? [theirs == null ? '-' : String(theirs)] : [])]),
  );
}
