import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Embedder } from '../embed/types.ts';
import { mapIterable } from '../collections.ts';
import { eachJsonl, eachJsonlLine, JsonlWriter } from '../jsonl.ts';
import { overlapSampleFromLine, sampleFromLine, SharedDecodes } from '../line-form.ts';
import type { ReleasedSamples, ToolLibraryTally } from '../pipeline.ts';
import type { Rejection, Sample, ToolSpec } from '../records.ts';
import { SampleFiles, type PreparedSamples } from '../store.ts';
import { describeThresholds, type OverlapTable } from './format.ts';
import type { OverlapConfig } from './config.ts';
import { measureOverlap, type OverlapHit } from './measure.ts';
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
    references: present.map((entry) => releasedReference(entry, sources.resolvePath(entry.path), sources.resolvePath, entry.path)),
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
 * where it was read; `decode`: how (what the overlap measures, or the whole sample).
 */
function* preparedLines(prepared: PreparedSamples, decode: (line: unknown, where: string, shared: SharedDecodes) => Sample = sampleFromLine): Generator<{ text: string; sample: Sample; path: string }> {
  // The samples are only read: the tools they share are decoded once.
  const shared = new SharedDecodes();
  for (const split of Object.keys(prepared.splits)) {
    const path = join(prepared.dir, `${split}.jsonl`);
    for (const { value, text } of eachJsonlLine(path)) yield { text, sample: decode(value, path, shared), path };
  }
}

/**
 * Measures the samples of the data files the publish gate wrote (read once, a sample at a time)
 * and applies the config's mode: in `reject` mode, when some overlap, the files are written again
 * without them (a second pass, copying the kept lines as they are).
 */
export async function overlapForPublishing(prepared: PreparedSamples, options: OverlapGateOptions): Promise<OverlapGateResult> {
  const rejectsPath = join(options.dir, 'overlap-rejects.jsonl');
  rmSync(rejectsPath, { force: true });
  const rejected = new Set<number>();
  const writer = new JsonlWriter(rejectsPath);
  let report;
  // Samples are measured on what overlap reads of them; one rejected is decoded whole from its line.
  const lines = new WeakMap<Sample, { text: string; path: string }>();
  try {
    let i = 0;
    report = await measureOverlap(mapIterable(preparedLines(prepared, overlapSampleFromLine), ({ sample, text, path }) => (lines.set(sample, { text, path }), sample)), options.references, {
      config: options.config,
      embedder: options.embedder,
      onSample: (sample, hits) => {
        if (hits.length && options.config.mode === 'reject') {
          rejected.add(i);
          const { text, path } = lines.get(sample)!;
          const record = sampleFromLine(JSON.parse(text), path);
          writer.write({ stage: OVERLAP_STAGE, reason: `overlap_${hits[0].level.replace(/-/g, '_')}`, detail: hits.map(describeHit).join('; '), recordId: sample.id, duplicateOf: hits[0].match, record } satisfies Rejection);
        }
        i++;
      },
    });
  } finally {
    writer.close();
  }
  const kept = rejected.size ? keptFiles(prepared, rejected, join(options.dir, 'overlap-data'), options.toolLibrary()) : { prepared };
  return {
    ...kept,
    rejects: () => eachJsonl<Rejection>(rejectsPath),
    summary: {
      mode: options.config.mode,
      rejected: rejected.size,
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

/** The data files again in `dir` without the samples at the positions `rejected` (in reading order), with the library of the ones kept; the files given are removed. */
function keptFiles(prepared: PreparedSamples, rejected: ReadonlySet<number>, dir: string, library: ToolLibraryTally): { prepared: PreparedSamples; tools: ToolSpec[] } {
  rmSync(dir, { recursive: true, force: true });
  const files = new SampleFiles(dir);
  try {
    let i = 0;
    for (const { text, sample } of preparedLines(prepared)) {
      if (rejected.has(i++)) continue;
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
