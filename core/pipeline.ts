import type { z } from 'zod';
import type { SampleAudit } from './audit.ts';
import type { BenchmarkScorer, EvalItem } from './eval.ts';
import type { Finding, InvariantOptions } from './invariants.ts';
import type { OverlapConfig } from './overlap/config.ts';
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
  /** Chat formats (trl): one tool call per assistant message, each followed by its result, for templates without parallel calls (Llama 3.1's). */
  oneCallPerMessage?: boolean;
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
 * and the native formats it exports, and what the rest of toolkiln reaches the recipe through
 * (review/ and eval/ never import its stage folder): its scorer, checks, audits, tool
 * questions and released sets. The first stage is a source (it loads the inputs); the last one
 * emits Samples.
 */
export interface PipelineDefinition<C = any> {
  name: string;
  benchmark: string;
  description: string;
  configSchema: z.ZodType<C>;
  /**
   * Files and folders the run reads, hashed into the fingerprint (paths as the config gives them:
   * relative against the current folder, then the project folder); one that is not there stops the
   * run before it starts.
   */
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
  /**
   * The released benchmarks this recipe knows, and how to read them: the one place toolkiln learns
   * of a released set. `toolkiln datasets audit --released <name>` audits its samples, `toolkiln eval
   * compare --reference <name>` scores its items, and the recipe's statistics stage (given the entry
   * by the recipe) counts its figures beside the run's.
   */
  released?: ReleasedSamples[];
  /**
   * How publishing measures the samples' overlap with test sets (core/overlap/gate.ts): the
   * recipe's `testOverlap` config key. Absent: not measured.
   */
  testOverlap?: (config: C) => OverlapConfig;
}

/** A released benchmark read as canonical samples. */
export interface ReleasedSamples {
  /** The name `--released` and `--reference` take. */
  name: string;
  /** Its default place, a folder relative to the project folder (like a config's default paths). */
  path: string;
  /** What is read, for messages. */
  files: string;
  /**
   * Its samples (read again on each call); when the release has one, its tool library (default: the
   * tools the samples offer); and the records it could not make into samples, each a finding of
   * check `record-readable` (known once the samples were read). `path` is the set's folder.
   */
  read(path: string, resolvePath: (path: string) => string): { samples: () => Iterable<Sample>; tools?: () => ToolSpec[]; unreadable?: () => Finding[] };
  /**
   * The set as items of the recipe's scorer (`toolkiln eval compare`). Default: the items the scorer
   * makes of each sample `read` gives. A function when the release is scored from its own records;
   * false when the set is not compared with (it is read for audits only).
   */
  items?: false | ((path: string, resolvePath: (path: string) => string) => EvalItem[]);
}

/**
 * An exporter whose module is loaded when it is first asked to export (`load` gives the exporter):
 * loading a recipe, as every run does, then loads no exporter, nor what they write with (yaml,
 * hyparquet-writer).
 */
export function exporterOnCall(load: () => Promise<Exporter>): Exporter {
  let loaded: Promise<Exporter> | undefined;
  return async (...args) => (await (loaded ??= load()))(...args);
}

export function definePipeline<C>(definition: PipelineDefinition<C>): PipelineDefinition<C> {
  return definition;
}
