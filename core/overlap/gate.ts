import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Embedder } from '../embed/types.ts';
import { mapIterable } from '../collections.ts';
import { eachJsonl, eachJsonlLine, JsonlWriter } from '../jsonl.ts';
import { overlapSampleFromLine, sampleFromLine, sampleToLine, SharedDecodes } from '../line-form.ts';
import type { ReleasedSamples, ToolLibraryTally } from '../pipeline.ts';
import type { Rejection, Sample, ToolSpec } from '../records.ts';
import { SampleFiles, type PreparedSamples } from '../store.ts';
import { describeThresholds, type OverlapTable } from './format.ts';
import type { OverlapConfig } from './config.ts';
import { measureOverlap, OverlapMeasurement, type OverlapHit, type OverlapReport } from './measure.ts';
import type { ReferenceSet } from './reference-index.ts';
import { referenceSets, releasedReference, type ReferenceSources } from './references.ts';

/**
 * Overlap at publishing: the samples about to be published measured against the recipe's
 * reference sets (its config's `testOverlap`). In `report` mode (the default) every sample is
 * published and the table goes to the manifest (`stats.testOverlap`) and the dataset card; in
 * `reject` mode a sample at or over any level's threshold goes to the version's rejects instead
 * (reason `overlap_<level>`, `duplicateOf` the reference sample matched, every hit in the detail).
 *
 * Report is the default because a sample is not wrong for resembling a test item: what to do with
 * overlap depends on what the version is for (a fresh test set, training data, a regeneration of
 * the released set itself, which overlaps by design), and the rejecting levels' precision is
 * measured on plants (docs/overlap.md), not known for every domain.
 */

export const OVERLAP_STAGE = 'test-overlap';
/** Bump when what the gate measures or rejects changes: it is part of a dataset's fingerprint. */
export const OVERLAP_VERSION = 1;

/** What the manifest records (`stats.testOverlap`): the table, the mode, what was rejected, and the released sets that were not there to compare with. */
export type OverlapSummary = OverlapTable & { mode: OverlapConfig['mode']; rejected: number; embedder: string | null; missing: string[] };

/**
 * The reference sets publishing compares with: the config's `against`, or by default every
 * released set the recipe reads that is in its place (one that is not is named in `missing`, and
 * the run goes on: a machine without the released data still runs every recipe).
 */
export function publishingReferences(config: OverlapConfig, released: readonly ReleasedSamples[], sources: Omit<ReferenceSources, 'released'>): { references: ReferenceSet[]; missing: string[] } {
  if (config.against.length) return { references: referenceSets(config.against, { ...sources, released }), missing: [] };
  const present = released.filter((entry) => existsSync(sources.resolvePath(entry.path)));
  return {
    references: present.map((entry) => releasedReference(entry, sources.resolvePath(entry.path), sources, entry.path)),
    missing: released.filter((entry) => !present.includes(entry)).map((entry) => `${entry.name} (${entry.path})`),
  };
}

export interface OverlapGateOptions {
  config: OverlapConfig;
  references: ReferenceSet[];
  missing: string[];
  embedder?: Embedder;
  /** A folder of the run where the rejects (and, when some are rejected, the data files kept) wait to be published. */
  dir: string;
  /** The dataset's tool library from its samples (made again from the samples kept when some are rejected). */
  toolLibrary: () => ToolLibraryTally;
}

export interface OverlapGateResult {
  /** The data files to publish: the ones given when none was rejected, otherwise new ones without the rejected samples. */
  prepared: PreparedSamples;
  /** The tool library of the samples kept, when some were rejected (otherwise the gate's stands). */
  tools?: ToolSpec[];
  rejects: () => Generator<Rejection>;
  summary: OverlapSummary;
}

/** One hit in a reject's detail: `ngram-8 0.83 with mtu-bench M-S_eval.jsonl#M-S_31_1`. */
export function describeHit(hit: OverlapHit): string {
  return `${hit.level} ${hit.score} with ${hit.reference} ${hit.match}`;
}

/**
 * The lines of the data files, split by split, each with its sample (read from the line form), and
 * where it was read (its file, its split and its position there); `decode`: how (what the overlap measures, or the whole sample).
 */
function* preparedLines(prepared: PreparedSamples, decode: (line: unknown, where: string, shared: SharedDecodes) => Sample = sampleFromLine): Generator<{ text: string; sample: Sample; path: string; split: string; position: number }> {
  // The samples are only read: the tools they share are decoded once.
  const shared = new SharedDecodes();
  for (const split of Object.keys(prepared.splits)) {
    const path = join(prepared.dir, `${split}.jsonl`);
    let position = 0;
    for (const { value, text } of eachJsonlLine(path)) yield { text, sample: decode(value, path, shared), path, split, position: position++ };
  }
}

/**
 * What the gate does with each sample's hits, wherever the samples come from: in `reject` mode one
 * with hits goes to the rejects, and its position in its split's data file is remembered (to write
 * the files again without it). The rejects wait in a file per split, read back split after split in
 * the order of the data files: the order of the samples read from them, whatever order the samples
 * were measured in (the gate writes the splits' files side by side).
 */
class OverlapVerdicts {
  private readonly splits = new Map<string, { writer: JsonlWriter; rejected: Set<number>; position: number }>();
  private readonly rejectsDir: string;

  constructor(private readonly options: OverlapGateOptions) {
    this.rejectsDir = join(options.dir, 'overlap-rejects');
    rmSync(this.rejectsDir, { recursive: true, force: true });
  }

  private rejectsPath(split: string): string {
    return join(this.rejectsDir, `${split}.jsonl`);
  }

  /** A sample's hits; `record`: the sample whole, as the data files hold it (asked for only when it is rejected). */
  take(sample: Sample, hits: OverlapHit[], record: () => Sample): void {
    if (this.options.config.mode !== 'reject') return;
    let split = this.splits.get(sample.split);
    if (!split) this.splits.set(sample.split, (split = { writer: new JsonlWriter(this.rejectsPath(sample.split)), rejected: new Set(), position: 0 }));
    if (hits.length) {
      split.rejected.add(split.position);
      split.writer.write({ stage: OVERLAP_STAGE, reason: `overlap_${hits[0].level.replace(/-/g, '_')}`, detail: hits.map(describeHit).join('; '), recordId: sample.id, duplicateOf: hits[0].match, record: record() } satisfies Rejection);
    }
    split.position++;
  }

  private close(): void {
    for (const { writer } of this.splits.values()) writer.close();
  }

  discard(): void {
    try {
      this.close();
    } catch {
      // Closed already, or the disk failed: the files go either way.
    }
    rmSync(this.rejectsDir, { recursive: true, force: true });
  }

  result(prepared: PreparedSamples, report: OverlapReport): OverlapGateResult {
    this.close();
    const { options } = this;
    const rejected = new Map([...this.splits].filter(([, split]) => split.rejected.size).map(([name, split]) => [name, split.rejected]));
    const count = [...rejected.values()].reduce((sum, positions) => sum + positions.size, 0);
    const kept = count ? keptFiles(prepared, rejected, join(options.dir, 'overlap-data'), options.toolLibrary()) : { prepared };
    const paths = Object.keys(prepared.splits)
      .filter((split) => rejected.has(split))
      .map((split) => this.rejectsPath(split));
    return {
      ...kept,
      rejects: function* () {
        for (const path of paths) yield* eachJsonl<Rejection>(path);
      },
      summary: {
        mode: options.config.mode,
        rejected: count,
        embedder: report.embedder,
        missing: options.missing,
        samples: report.samples,
        levels: report.levels,
        references: report.references.map(({ name, kind, path, samples }) => ({ name, kind, path, samples })),
        rows: report.rows,
        total: report.total,
      },
    };
  }
}

/**
 * Measures the samples of the data files the publish gate wrote (read once, a sample at a time)
 * and applies the config's mode: in `reject` mode, when some overlap, the files are written again
 * without them (a second pass, copying the kept lines as they are). For a gate that ran over
 * files (the last stage ran in an earlier process, or its checks were made again); otherwise
 * `OverlapAtPublishing` measures the samples as the gate writes them.
 */
export async function overlapForPublishing(prepared: PreparedSamples, options: OverlapGateOptions): Promise<OverlapGateResult> {
  const verdicts = new OverlapVerdicts(options);
  let report;
  // Samples are measured on what overlap reads of them; one rejected is decoded whole from its line.
  const lines = new WeakMap<Sample, { text: string; path: string }>();
  try {
    report = await measureOverlap(mapIterable(preparedLines(prepared, overlapSampleFromLine), ({ sample, text, path }) => (lines.set(sample, { text, path }), sample)), options.references, {
      config: options.config,
      embedder: options.embedder,
      onSample: (sample, hits) =>
        verdicts.take(sample, hits, () => {
          const { text, path } = lines.get(sample)!;
          return sampleFromLine(JSON.parse(text), path);
        }),
    });
  } catch (error) {
    verdicts.discard();
    throw error;
  }
  return verdicts.result(prepared, report);
}

/**
 * Overlap measured as the publish gate writes the samples it keeps (`add`, in the order of the data
 * files), while they are in memory: the data files are not read again, unless some are rejected (then
 * they are written again without them). Made only when every sample can be measured at once (the
 * lexical embedder, or no embedding level): `start` gives null otherwise, and the gate's files are
 * measured after it (`overlapForPublishing`).
 */
export class OverlapAtPublishing {
  private constructor(
    private readonly measurement: OverlapMeasurement,
    private readonly verdicts: OverlapVerdicts,
  ) {}

  static async start(options: OverlapGateOptions): Promise<OverlapAtPublishing | null> {
    if (!OverlapMeasurement.measuresAtOnce(options)) return null;
    let verdicts: OverlapVerdicts | undefined;
    const measurement = await OverlapMeasurement.start(options.references, {
      config: options.config,
      embedder: options.embedder,
      // The line the data files hold, decoded: what a rejected sample's record is when read from them.
      onSample: (sample, hits) => verdicts!.take(sample, hits, () => sampleFromLine(JSON.parse(JSON.stringify(sampleToLine(sample))), `${sample.split}.jsonl`)),
    });
    if (!measurement.synchronous) return null;
    verdicts = new OverlapVerdicts(options);
    return new OverlapAtPublishing(measurement, verdicts);
  }

  /** The next sample the gate wrote to its data files. */
  add(sample: Sample): void {
    this.measurement.add(sample);
  }

  /** After the gate's last sample: the result, with `prepared` the data files the gate wrote. */
  async end(prepared: PreparedSamples): Promise<OverlapGateResult> {
    let report;
    try {
      report = await this.measurement.finish();
    } catch (error) {
      this.verdicts.discard();
      throw error;
    }
    return this.verdicts.result(prepared, report);
  }

  /** Drops what was measured (a gate not used: its samples are measured again from files). */
  discard(): void {
    this.verdicts.discard();
  }
}

/** The data files again in `dir` without the samples at the positions `rejected` (by split, in its file), with the library of the ones kept; the files given are removed. */
function keptFiles(prepared: PreparedSamples, rejected: ReadonlyMap<string, ReadonlySet<number>>, dir: string, library: ToolLibraryTally): { prepared: PreparedSamples; tools: ToolSpec[] } {
  rmSync(dir, { recursive: true, force: true });
  const files = new SampleFiles(dir);
  try {
    for (const { text, sample, split, position } of preparedLines(prepared)) {
      if (rejected.get(split)?.has(position)) continue;
      files.addLineText(sample, text);
      library.add(sample);
    }
  } catch (error) {
    files.discard();
    throw error;
  }
  const kept = files.close();
  rmSync(prepared.dir, { recursive: true, force: true });
  return { prepared: kept, tools: library.tools() };
}

/** One line for the run's log: per reference set, the samples overlapping at any level, and what was done with them. */
export function describeOverlap(summary: OverlapSummary): string {
  const missing = summary.missing.length ? `; not found, not compared: ${summary.missing.join(', ')}` : '';
  if (!summary.references.length) return `test overlap: nothing to compare with${missing}`;
  const per = summary.references.map((r) => `${r.name} ${summary.total[r.name]?.any ?? 0}`).join(', ');
  const verdict = summary.mode === 'reject' ? `${summary.rejected} rejected` : 'reported, none rejected';
  return `test overlap: of ${summary.samples} samples, at or over a threshold (${describeThresholds(summary)}): ${per}; ${verdict}${missing}`;
}
