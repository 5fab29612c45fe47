import { z } from 'zod';
import { hashOf } from './hash.ts';
import { Rng } from './rng.ts';
import type { LlmGateway } from './llm/types.ts';
import type { Rejection } from './records.ts';
import { DEFAULT_SEED } from './seed.ts';

/** What a stage says about one record it could not use. */
export interface RejectReason {
  reason: string;
  detail?: string;
  recordId?: string;
  duplicateOf?: string;
}

export interface StageContext {
  /** The run seed; use `rng(...)` for randomness so results do not depend on scheduling. */
  seed: number;
  rng: (...keys: (string | number)[]) => Rng;
  llm: LlmGateway;
  /** The resolved pipeline config. */
  config: unknown;
  /** Where the run keeps its files (stage journals, summaries). */
  runDir: string;
  /**
   * Resolves a path from the config: absolute as is; relative against the current folder, falling
   * back to the toolkiln project folder (where the shipped defaults such as `../shared/data/…` live).
   */
  resolvePath: (path: string) => string;
  log: (message: string) => void;
  /** Figures a stage wants in the manifest's `stats` (merged by key). */
  report: (key: string, value: unknown) => void;
  /** What the stages before this one reported (read-only), e.g. for a closing statistics stage. */
  reported: () => Readonly<Record<string, unknown>>;
  /**
   * A file published with the dataset version under `reports/<name>` (a plot, a proposals table).
   * Kept in the run folder until then, so a resumed run still publishes it.
   */
  attach: (name: string, content: string) => void;
}

interface StageBase<I, O> {
  name: string;
  /** Bump when the stage's logic changes: it is part of the dataset fingerprint. */
  version: number;
  /** Checked only when it is not the previous stage's `output` (records were checked where they were made). */
  input: z.ZodType<I>;
  /**
   * Every record the stage emits is checked against it (zod's result is what is written). A record
   * already in zod's canonical form (defaults present, keys in schema order) is taken as it is,
   * without zod's copy: see core/validate.ts.
   */
  output: z.ZodType<O>;
  /** Prompt ids → hashes this stage uses (fingerprint and lineage). */
  prompts?: Record<string, string>;
  /**
   * Starts work that does not depend on the stage's input (reading the released set it compares
   * with) when the run starts, so that it overlaps the stages before this one instead of waiting at
   * the end of the run. The stage's own functions await what it started; a failure surfaces there.
   * Not called for a stage a resumed run finds complete.
   */
  prepare?: (ctx: Pick<StageContext, 'resolvePath'>) => void;
}

/**
 * One record in, zero or more out, or a rejection. Runs concurrently; each finished record is
 * journalled at once, so a killed run resumes without recomputing it.
 *
 * Memory: the runner streams a per-record stage. It reads the stage's input line by line from the
 * previous stage's output file (holding only the records in flight), keeps where each record's
 * journal entry is rather than the entry, and writes the outputs in input order from the journal
 * when the stage completes. A stage of this kind is therefore bounded by its concurrency, not by
 * the size of the dataset: put per-record work here whenever the step allows it.
 *
 * CPU: each output is checked against `output` once, where it is made, and serialised once, into
 * the journal; `out.jsonl` gets a copy of those bytes. The next stage parses it and does not check
 * it again unless it declares another `input` schema.
 */
export interface MapStage<I, O> extends StageBase<I, O> {
  kind: 'map';
  /** A stage that may emit several records per input declares it; otherwise it must emit exactly one. */
  fanOut?: boolean;
  /** Stable key of an input record (seeds its rng and names it in logs). Default: its content hash. */
  keyOf?: (record: I) => string;
  concurrency?: number;
  run: (record: I, ctx: StageContext & { key: string }) => Promise<O | O[] | RejectReason & { reject: true }>;
  /**
   * `run` is pure computation (no LLM, files, or state shared between records): the runner may run
   * records on worker threads, so that the thread sending LLM requests is not held. A thread
   * makes the stage again by calling `factory` exported by `module` with `options` (structured-
   * cloneable), e.g. `{ module: import.meta.url, factory: 'checkGeneratedStage', options }`.
   */
  threads?: { module: string; factory: string; options: unknown };
}

/**
 * Works on the whole set at once (loading, clustering, splitting, de-duplicating). The runner hands
 * it its whole input as one array and writes its outputs as a stream: its memory grows with the
 * dataset, so a whole-set stage should keep only what it needs of each record (ids and the few
 * fields it decides on) and leave per-record work to map stages.
 */
export interface BatchStage<I, O> extends StageBase<I, O> {
  kind: 'batch';
  /** `fan-out` or `fan-in` when out + rejected may differ from in (e.g. a loader, or tools from samples). */
  cardinality?: 'one-to-one' | 'fan-out' | 'fan-in' | 'any';
  run: (records: I[], ctx: StageContext) => Promise<{ out: O[]; rejects?: (RejectReason & { record: unknown })[] }>;
}

/**
 * A whole-set step that needs only a summary of the set, then works record by record: the runner
 * streams the input through `collect`, which keeps what the step needs (a tool library, counts,
 * compact projections of the records it decides on) and may call the LLM on that summary (tool
 * documentation, composed messages); then record by record through `run` with that state; then
 * `finish`, which reports and may emit records of its own (composed from several inputs) after all
 * the others. Its memory is its state, not the dataset.
 *
 * `collect` may iterate its input more than once (each pass reads the previous stage's file again).
 * It runs under the LLM gateway's batch mode and transport checks like a whole-set stage: in batch
 * mode it runs again once the batch settles, its answers then come from the cache. `run` and
 * `finish` hold no LLM work. The stage is not journalled: a killed run runs it again, and the
 * LLM cache makes that free.
 */
export interface ScanStage<I, O, S = void> extends StageBase<I, O> {
  kind: 'scan';
  /** A stage that may emit several records per input (or records of its own in `finish`) declares it; otherwise it emits exactly one per input (or rejects). */
  fanOut?: boolean;
  /** Stable key of an input record (seeds its rng, names it in rejects). Default: its id, else its content hash. */
  keyOf?: (record: I) => string;
  collect?: (records: Iterable<I>, ctx: StageContext) => S | Promise<S>;
  /**
   * The state of a stage that needs no pass over its input (a running tally, the keys seen so
   * far), in place of `collect`. Such a stage works on each record as it arrives: right behind the
   * per-record stage before it while that stage still runs, and chained with the scan stages after
   * it, so the run does not wait for it at the end. It calls no LLM.
   */
  begin?: (ctx: StageContext) => S;
  /** Returning the input object itself means "unchanged": its input line is copied, so return it only if it was not edited in place. */
  run: (record: I, ctx: StageContext & { key: string; state: S }) => O | O[] | (RejectReason & { reject: true }) | Promise<O | O[] | (RejectReason & { reject: true })>;
  /**
   * Reports, attachments, and the records the stage makes of its own (written after the others),
   * with the rejects of records it made and did not keep.
   */
  finish?: (state: S, ctx: StageContext) => void | O[] | ScanMade<O> | Promise<void | O[] | ScanMade<O>>;
}

/** What a scan stage's `finish` made of its own: records to write after the others, and the ones it dropped, with why. */
export interface ScanMade<O> {
  out?: O[];
  rejects?: (RejectReason & { record: unknown })[];
}

/**
 * The first stage of a pipeline: reads its inputs and yields records one at a time. The runner
 * writes them as they come, so a loader that yields (a generator over files) is never held whole.
 */
export interface SourceStage<O> extends StageBase<unknown, O> {
  kind: 'source';
  load: (ctx: StageContext) => Iterable<O> | AsyncIterable<O> | Promise<Iterable<O>>;
}

export type Stage<I = any, O = any> = MapStage<I, O> | BatchStage<I, O> | ScanStage<I, O, any> | SourceStage<O>;

export function reject(reason: string, detail?: string, extra: Omit<RejectReason, 'reason' | 'detail'> = {}): RejectReason & { reject: true } {
  return { reject: true, reason, detail, ...extra };
}

export function isReject(value: unknown): value is RejectReason & { reject: true } {
  return !!value && typeof value === 'object' && (value as { reject?: unknown }).reject === true;
}

export type { Rejection };

const zUnknown = z.unknown();

/** A loading stage: no input, yields the records it reads (the first stage of a pipeline). */
export function sourceStage<O>(spec: { name: string; version: number; output: z.ZodType<O>; load: SourceStage<O>['load'] }): SourceStage<O> {
  return { kind: 'source', name: spec.name, version: spec.version, input: zUnknown, output: spec.output, load: spec.load };
}

export interface StandaloneContextOptions {
  seed?: number;
  llm: LlmGateway;
  runDir: string;
  config?: unknown;
  resolvePath?: (path: string) => string;
  log?: (message: string) => void;
  key?: string;
}

/**
 * A context for calling one stage directly (tests, notebooks): what it reports and attaches is
 * kept in memory and returned alongside.
 */
export function standaloneContext(options: StandaloneContextOptions): StageContext & { key: string; reports: Record<string, unknown>; attachments: Record<string, string> } {
  const seed = options.seed ?? DEFAULT_SEED;
  const reports: Record<string, unknown> = {};
  const attachments: Record<string, string> = {};
  return {
    seed,
    rng: (...keys) => Rng.derive(seed, ...keys),
    llm: options.llm,
    config: options.config ?? {},
    runDir: options.runDir,
    resolvePath: options.resolvePath ?? ((path) => path),
    log: options.log ?? (() => {}),
    report: (key, value) => void (reports[key] = value),
    reported: () => structuredClone(reports),
    attach: (name, content) => void (attachments[name] = content),
    key: options.key ?? 'standalone',
    reports,
    attachments,
  };
}

/**
 * Runs a scan stage over records in memory, as the runner does over its files (tests, notebooks):
 * `begin` or `collect`, then `run` per record (keyed by its id, else its content hash), then `finish`.
 */
export async function applyScanStage<I, O, S>(stage: ScanStage<I, O, S>, records: I[], ctx: StageContext): Promise<{ out: O[]; rejects: RejectReason[] }> {
  const state = (stage.begin ? stage.begin(ctx) : stage.collect ? await stage.collect(records, ctx) : undefined) as S;
  const out: O[] = [];
  const rejects: RejectReason[] = [];
  for (const record of records) {
    const key = recordKey(stage, record);
    const result = await stage.run(record, { ...ctx, key, state, rng: (...keys) => ctx.rng(key, ...keys) });
    if (isReject(result)) rejects.push(result);
    else out.push(...(Array.isArray(result) && stage.fanOut ? result : [result as O]));
  }
  const made = await stage.finish?.(state, ctx);
  if (Array.isArray(made)) out.push(...made);
  else if (made) {
    out.push(...(made.out ?? []));
    rejects.push(...(made.rejects ?? []));
  }
  return { out, rejects };
}

/** A record's stable key within a stage: the stage's `keyOf`, else the record's `id`, else its content hash. */
export function recordKey<I>(stage: { keyOf?: (record: I) => string }, record: I): string {
  if (stage.keyOf) return stage.keyOf(record);
  const id = (record as { id?: unknown })?.id;
  return typeof id === 'string' ? id : hashOf(record, 16);
}
