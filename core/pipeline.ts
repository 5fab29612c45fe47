import type { z } from 'zod';
import type { SampleAudit } from './audit.ts';
import type { BenchmarkScorer } from './eval.ts';
import type { Finding, InvariantOptions } from './invariants.ts';
import type { Check, Sample, ToolSpec } from './records.ts';
import type { SampleSource } from './sample-source.ts';
import type { Stage } from './stage.ts';
import type { ToolReview } from './tool-review.ts';

/**
 * Writes one native format of a version's samples; returns the paths it wrote. The samples are a
 * stream read again on each pass, never an array: an exporter keeps at most a projection of them.
 * `version.dir` is the published version's folder, for a format that also writes files a stage
 * attached (reports/). `options` are the export command's switches (a format ignores those it has no use for).
 */
export type Exporter = (samples: SampleSource, tools: ToolSpec[], outDir: string, version?: { dir: string }, options?: ExportOptions) => Promise<string[]>;

export interface ExportOptions {
  /** Keep toolkiln's own fields a format has no slot for (`x-toolkiln` in OpenAI chat tools), and records a benchmark's own code cannot load (ACEBench agent records over toolkiln's classes). */
  keepExtensions?: boolean;
  /** Told, one line each, what the format left out. */
  notice?: (line: string) => void;
}

/** A tool library made from samples one at a time: `add` each, then `tools()`. */
export interface ToolLibraryTally {
  add(sample: Sample): void;
  tools(): ToolSpec[];
}

/**
 * A benchmark recipe: an ordered list of named stages, its config schema (every field defaulted)
 * and the native formats it exports. The first stage is a source (it loads the inputs);
 * the last one emits Samples.
 */
export interface PipelineDefinition<C = any> {
  name: string;
  benchmark: string;
  description: string;
  configSchema: z.ZodType<C>;
  /** Files the run reads, hashed into the fingerprint (paths relative to the project folder). */
  sourceFiles: (config: C) => string[];
  stages: (config: C) => Stage[];
  exports: Record<string, Exporter>;
  /**
   * The share of the loaded records the samples must reach for a run to publish (`--min-yield`
   * overrides it); undefined: the default of core/run-yield.ts. A recipe that selects a configured
   * number of samples from many loaded records declares its own.
   */
  minYield?: (config: C) => number | undefined;
  /**
   * The dataset's tool library, made from its samples one at a time (as the last stage writes them,
   * or in a pass over them); default: every distinct tool the samples offer (see core/run.ts).
   */
  toolLibrary?: () => ToolLibraryTally;
  /**
   * The recipe's checks, run again on a sample a reviewer edited (`toolkiln review import`); `tools`
   * is the version's tool library. A failing hard check (`soft` not true) refuses the edit; soft
   * results are stored in `meta.checks`. Default: review/'s generic check (calls name tools the
   * sample offers, arguments valid against each tool's parameters schema).
   */
  recheck?: (sample: Sample, tools: ToolSpec[]) => Check[];
  /** The benchmark's own scoring rules (`toolkiln eval`); several recipes may share one. */
  scorer?: BenchmarkScorer;
  /** Questions about tools its runs leave (review/ writes them to a tool sheet, not the sample queue). */
  toolReview?: ToolReview<C>;
  /**
   * The recipe's own audits of a sample (the benchmark's own checks: programs parsed, calls
   * executed again): run by `toolkiln datasets audit` and counted when a version is published.
   */
  audits?: (config: C, resolvePath: (path: string) => string) => SampleAudit[];
  /**
   * How publishing applies the shared invariants (core/invariants.ts). `gate`: `reject` (default)
   * rejects a sample that breaks one; `record` publishes it and counts it (an import of a released
   * benchmark keeps every record as released).
   */
  invariants?: Pick<InvariantOptions, 'offeredOutsideLibrary'> & { gate?: (config: C) => 'reject' | 'record' };
  /** Released benchmarks this recipe reads as samples (`toolkiln datasets audit --released <name>`). */
  released?: ReleasedSamples[];
}

/** A released benchmark read as canonical samples. */
export interface ReleasedSamples {
  /** The name `--released` takes. */
  name: string;
  /** Its default place, relative to the project folder (like a config's default paths). */
  path: string;
  /** What is read, for messages. */
  files: string;
  /**
   * Its samples (read again on each call); when the release has one, its tool library (default: the
   * tools the samples offer); and the records it could not make into samples, each a finding of
   * check `record-readable` (known once the samples were read).
   */
  read(path: string, resolvePath: (path: string) => string): { samples: () => Iterable<Sample>; tools?: () => ToolSpec[]; unreadable?: () => Finding[] };
}

export function definePipeline<C>(definition: PipelineDefinition<C>): PipelineDefinition<C> {
  return definition;
}
