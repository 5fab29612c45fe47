import { z } from 'zod';
import { hashOf } from './hash.ts';
import { Rng } from './rng.ts';
import type { GenerateResult, LlmGateway } from './llm/types.ts';
import type { PromptFile } from './prompt.ts';
import type { LineageEntry, Rejection, Sample } from './records.ts';
import type { ReleasedSet } from './released-reads.ts';
import { DEFAULT_SEED } from './seed.ts';

/** What a stage says about one record it could not use. */
export interface RejectReason {
  reason: string;
  detail?: string;
  recordId?: string;
  duplicateOf?: string;
}

/** Who a stage is: what lineage names and the fingerprint counts. */
export interface StageIdentity {
  name: string;
  version: number;
  prompts?: readonly PromptFile<any, any>[];
}

export type { LineageEntry };

export interface AskOptions {
  /**
   * The request's key (it seeds the offline renderer and separates requests that must get
   * independent answers). Default: the record's key, with `/part` when given.
   */
  key?: string;
  /** A second request for the same record (`thought`, `observation`): keyed `<record key>/<part>`. */
  part?: string;
  temperature?: number;
  maxTokens?: number;
}

/** An LLM answer with the lineage entry that records it (this stage at its version, the prompt, the model). */
export interface Answer<O> {
  value: O;
  model: string;
  cached: boolean;
  lineage: LineageEntry;
}

/** A failed request, as the stage's reject: `reason` is the gateway's code (`schema_invalid`, `timeout`, …). */
export type AskFailure = { ok: false; reason: string; detail: string };

export interface StageContext {
  /** The stage running: its name and version (lineage), the prompts it declares. */
  stage: StageIdentity;
  /**
   * Asks one of the stage's declared prompts through the gateway, as this stage for this record.
   * A failed request throws a {@link StepRejected} that the runner turns into the record's reject
   * with the gateway's reason; `tryAsk` returns the failure instead, for a stage that falls back.
   */
  ask<V extends Record<string, unknown>, O>(this: StageContext & { key?: string }, prompt: PromptFile<V, O>, vars: V, options?: AskOptions): Promise<Answer<O>>;
  tryAsk<V extends Record<string, unknown>, O>(this: StageContext & { key?: string }, prompt: PromptFile<V, O>, vars: V, options?: AskOptions): Promise<({ ok: true } & Answer<O>) | AskFailure>;
  /**
   * This stage's lineage entry, for a record it changed without an answer of its own; with a
   * prompt (one it declares), the entry names it (a record relabelled by a prompt's answer about
   * many records).
   */
  lineage(this: StageContext, prompt?: PromptFile<any, any>): LineageEntry;
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
  /**
   * The samples of a released set in `dir`, read once for the run, whoever else reads it (the
   * overlap gate: core/released-reads.ts). Absent outside a run: the stage reads the set itself.
   */
  readReleased?: (set: ReleasedSet, dir: string) => Iterable<Sample>;
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
  /**
   * Bump when what the stage emits can change: it is part of the dataset fingerprint and of every
   * lineage entry the stage writes. stages.lock.json holds each recipe's code beside its stage
   * versions; test/stage-lock.test.ts fails when the code changes without it being recorded.
   */
  version: number;
  /** Checked only when it is not the previous stage's `output` (records were checked where they were made). */
  input: z.ZodType<I>;
  /**
   * Every record the stage emits is checked against it (zod's result is what is written). A record
   * already in zod's canonical form (defaults present, keys in schema order) is taken as it is,
   * without zod's copy: see core/validate.ts. What a record shares with its input record is not
   * walked again, nor a tool object (ToolSpec) found valid in an earlier record: hand on the
   * objects a record keeps (a library's tool itself, not a copy of it) and never edit them.
   */
  output: z.ZodType<O>;
  /**
   * The prompt files the stage asks (through `ctx.ask`): their hashes go into the fingerprint and
   * its answers' lineage. Asking a prompt not listed here is an error.
   */
  prompts?: readonly PromptFile<any, any>[];
  /**
   * Starts work that does not depend on the stage's input (reading the released set it compares
   * with) when the run starts, so that it overlaps the stages before this one instead of waiting at
   * the end of the run. The stage's own functions await what it started; a failure surfaces there.
   * Not called for a stage a resumed run finds complete.
   */
  prepare?: (ctx: Pick<StageContext, 'resolvePath' | 'readReleased'>) => void;
}

/**
 * One record in, zero or more out, or a rejection. Runs concurrently; each finished record is
 * journalled as it finishes (the entries of the records finished in one turn of the event loop
 * written together at its end), so a killed run resumes without recomputing it.
 *
 * Memory: the runner streams a per-record stage. It reads the stage's input line by line from the
 * previous stage's output file (holding only the records in flight), keeps where each record's
 * journal entry is rather than the entry, and writes the outputs in input order from the journal
 * when the stage completes. A stage of this kind is therefore bounded by its concurrency, not by
 * the size of the dataset: put per-record work here whenever the step allows it.
 *
 * CPU: each output is checked against `output` once, where it is made, and serialised once, into
 * the journal (the parts it shares with a record serialised before, its input's `dialogue` or a
 * library's tools, are not serialised again: core/json-texts.ts); `out.jsonl` gets a copy of those bytes. A stage running alongside takes the object
 * itself (one read back from a file is parsed) and does not check it again unless it declares
 * another `input` schema. A record returned as it came is not checked or serialised again: its
 * line is copied.
 */
export interface MapStage<I, O> extends StageBase<I, O> {
  kind: 'map';
  /** A stage that may emit several records per input declares it; otherwise it must emit exactly one. */
  fanOut?: boolean;
  /** Stable key of an input record (seeds its rng and names it in logs). Default: its content hash. */
  keyOf?: (record: I) => string;
  concurrency?: number;
  /**
   * Records are handed from stage to stage in memory: edit a copy, never the input record, and
   * return the input itself only to mean "unchanged" (its line is copied).
   */
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
 * A whole-set step that needs only a summary of the set, then works record by record: the runner
 * streams the input through `collect`, which keeps what the step needs (a tool library, counts,
 * compact projections of the records it decides on) and may call the LLM on that summary (tool
 * documentation, composed messages); then record by record through `run` with that state; then
 * `finish`, which reports and may emit records of its own (composed from several inputs) after all
 * the others. Its memory is its state, not the dataset.
 *
 * `collect` may iterate its input more than once (each pass reads the previous stage's file again).
 * It runs under the LLM gateway's batch mode and transport checks: in batch mode it runs again once
 * the batch settles, its answers then come from the cache. Its requests name their key
 * (`ctx.ask(prompt, vars, { key })`: there is no record). `run` and `finish` hold no LLM work. The stage is not journalled: a killed run runs it again, and the
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
   * far), in place of `collect`. Such a stage (and one with neither) works on each record as it
   * arrives: right behind the per-record stage before it while that stage still runs, and chained
   * with the scan stages after it, so the run does not wait for it at the end. It calls no LLM.
   */
  begin?: (ctx: StageContext) => S;
  /** Returning the input object itself means "unchanged": its input line is copied. Records come in memory from the stage before: never edit one in place. */
  run: (record: I, ctx: StageContext & { key: string; state: S }) => O | O[] | (RejectReason & { reject: true }) | Promise<O | O[] | (RejectReason & { reject: true })>;
  /**
   * Reports, attachments, and the records the stage makes of its own (written after the others),
   * with the rejects of records it made and did not keep. The records are taken one at a time: a
   * generator that makes each as it is asked for (reporting once it ends) holds none of them.
   */
  finish?: (state: S, ctx: StageContext) => void | Iterable<O> | ScanMade<O> | Promise<void | Iterable<O> | ScanMade<O>>;
  /**
   * Releases what the state holds (a server process, an open file) once the stage is over: after
   * `finish`, or when the run fails before it (a record that throws, a later stage of the chain that
   * throws). Without it a process the state started would outlive the failed run and keep it alive.
   */
  dispose?: (state: S) => void | Promise<void>;
}

/** What a scan stage's `finish` made of its own: records to write after the others, and the ones it dropped, with why. */
export interface ScanMade<O> {
  out?: Iterable<O>;
  rejects?: (RejectReason & { record: unknown })[];
}

/** A record a source could not make, with why: the raw input it read (or null), kept in the stage's rejects. */
export type SourceReject = RejectReason & { reject: true; record: unknown };

/**
 * The first stage of a pipeline: reads its inputs (files, a tool source, generated domains) and
 * yields records one at a time, or a `reject(…)` with the raw input for one it cannot use. The
 * runner writes them as they come, so a loader that yields (a generator over files) is never held
 * whole. A source may ask the LLM (`ctx.ask`, keyed by what it asks about): it runs under the
 * gateway's batch mode and transport checks like `collect` (in batch mode it loads again once the
 * batch settles, its answers then from the cache).
 */
export interface SourceStage<O> extends StageBase<unknown, O> {
  kind: 'source';
  load: (ctx: StageContext) => Iterable<O | SourceReject> | AsyncIterable<O | SourceReject> | Promise<Iterable<O | SourceReject>>;
}

export type Stage<I = any, O = any> = MapStage<I, O> | ScanStage<I, O, any> | SourceStage<O>;

export function reject(reason: string, detail?: string, extra: Omit<RejectReason, 'reason' | 'detail'> = {}): RejectReason & { reject: true } {
  return { reject: true, reason, detail, ...extra };
}

export function isReject(value: unknown): value is RejectReason & { reject: true } {
  return !!value && typeof value === 'object' && (value as { reject?: unknown }).reject === true;
}

export type { Rejection };

const zUnknown = z.unknown();

/** A loading stage: no input, yields the records it reads (the first stage of a pipeline); `load` sees a context that knows the stage (see {@link mapStage}). */
export function sourceStage<O>(spec: Omit<SourceStage<O>, 'kind' | 'input'>): SourceStage<O> {
  const stage = identityOf(spec);
  return { kind: 'source', input: zUnknown, ...spec, load: (ctx) => spec.load({ ...ctx, stage }) };
}

/** Loads a source stage in memory (tests, notebooks): its records and its rejects. */
export async function applySourceStage<O>(stage: SourceStage<O>, ctx: StageContext): Promise<{ out: O[]; rejects: SourceReject[] }> {
  const out: O[] = [];
  const rejects: SourceReject[] = [];
  for await (const item of await stage.load(ctx)) {
    if (isReject(item)) rejects.push(item as SourceReject);
    else out.push(item as O);
  }
  return { out, rejects };
}

/** What a stage constructor keeps of the declaration for the context it hands the stage's functions. */
function identityOf(spec: StageIdentity): StageIdentity {
  return { name: spec.name, version: spec.version, prompts: spec.prompts };
}

/**
 * A record's context as the stage sees it: the one given when it already knows this stage (the
 * runner's, made per record with the stage's name, version and prompts), else a copy that does. A
 * copy per record and stage costs a walk over the context's keys; Object.assign, not a spread with
 * an added key (see recordContext).
 */
function knowingStage<C extends { stage?: StageIdentity }>(ctx: C, stage: StageIdentity): C & { stage: StageIdentity } {
  const known = ctx.stage;
  if (known && known.name === stage.name && known.version === stage.version && known.prompts === stage.prompts) return ctx as C & { stage: StageIdentity };
  return Object.assign({}, ctx, { stage });
}

/**
 * A per-record stage from its declaration. Its `run` sees a context that knows the stage (so
 * `ctx.ask` sends only declared prompts, as this stage, and lineage carries this version), and a
 * failed request becomes the record's reject: whoever calls `run` (the runner, a worker, a test)
 * gets the same behaviour.
 */
export function mapStage<I, O>(spec: Omit<MapStage<I, O>, 'kind'>): MapStage<I, O> {
  const stage = identityOf(spec);
  return { kind: 'map', ...spec, run: (record, ctx) => runRecord(spec.run, record, knowingStage(ctx, stage)) };
}

/** A whole-set stage from its declaration: `collect`, `begin`, `run` and `finish` see a context that knows the stage (see {@link mapStage}). */
export function scanStage<I, O, S = void>(spec: Omit<ScanStage<I, O, S>, 'kind'>): ScanStage<I, O, S> {
  const stage = identityOf(spec);
  const made: ScanStage<I, O, S> = { kind: 'scan', ...spec, run: (record, ctx) => runRecord(spec.run, record, knowingStage(ctx, stage)) };
  const { collect, begin, finish } = spec;
  if (collect) made.collect = (records, ctx) => collect(records, { ...ctx, stage });
  if (begin) made.begin = (ctx) => begin({ ...ctx, stage });
  if (finish) made.finish = (state, ctx) => finish(state, { ...ctx, stage });
  return made;
}

/** A record the step passes on unchanged, without a request. */
export const PASS = Symbol('pass');

/**
 * The declared LLM step: one prompt, asked once per record. `variables` turns a record into the
 * prompt's variables (or `PASS`: the record needs no request and goes on unchanged; or a
 * `reject(…)`: the record cannot be asked about); `result` turns the answer into the record(s) the
 * step emits, or a reject, and sees the variables it was asked with. The step's fingerprint entry,
 * the gateway's `{ stage, key }`, the answer's lineage (this stage at its version, the prompt, the
 * model) and the reject of a failed request come from the declaration.
 */
export function promptStep<I, O, V extends Record<string, unknown>, A>(spec: Omit<MapStage<I, O>, 'kind' | 'run' | 'prompts'> & {
  prompt: PromptFile<V, A>;
  variables: (record: I, ctx: StageContext & { key: string }) => V | typeof PASS | (RejectReason & { reject: true });
  result: (answer: Answer<A>, record: I, ctx: StageContext & { key: string }, vars: V) => O | O[] | (RejectReason & { reject: true });
  /** Request options (temperature, token limit) for this record. */
  options?: (record: I) => AskOptions;
}): MapStage<I, O> {
  const { prompt, variables, result, options, ...rest } = spec;
  return mapStage<I, O>({
    ...rest,
    prompts: [prompt],
    run: async (record, ctx) => {
      const vars = variables(record, ctx);
      if (vars === PASS) return record as unknown as O;
      if (isReject(vars)) return vars;
      return result(await ctx.ask(prompt, vars, options?.(record)), record, ctx, vars);
    },
  });
}

/** A stage's prompt ids → hashes (the fingerprint and a resumed run's check). */
export function promptHashes(stages: readonly StageIdentity[]): Record<string, string> {
  const hashes: Record<string, string> = {};
  for (const stage of stages) for (const prompt of stage.prompts ?? []) hashes[prompt.id] = prompt.hash;
  return hashes;
}

/** A request failed: the runner turns it into the record's reject with the gateway's reason. */
export class StepRejected extends Error {
  constructor(
    readonly reason: string,
    readonly detail: string,
  ) {
    super(`${reason}: ${detail}`);
  }
}

/**
 * What a stage's context does for it from the stage's declaration: `ask` and `tryAsk` send a
 * declared prompt as this stage, keyed by the record, and give the answer with its lineage entry;
 * `lineage` names this stage at its version. Methods (they read `this`), so a context copied with
 * another gateway (`{ ...ctx, llm }`) asks through that gateway.
 */
export const stageContextMethods: Pick<StageContext, 'ask' | 'tryAsk' | 'lineage'> = {
  async ask(prompt, vars, options) {
    const answer = await this.tryAsk(prompt, vars, options);
    if (!answer.ok) throw new StepRejected(answer.reason, answer.detail);
    // The answer without `ok`, its keys written out (an object rest copies key by key, per request).
    return { value: answer.value, model: answer.model, cached: answer.cached, lineage: answer.lineage };
  },
  async tryAsk(prompt, vars, options = {}) {
    const stage = this.stage;
    if (!stage.prompts?.includes(prompt)) {
      throw new Error(`stage ${stage.name} asks prompt ${prompt.id}, which it does not declare: add it to the stage's \`prompts\` (its hash is part of the fingerprint)`);
    }
    const key = options.key ?? (this.key === undefined ? undefined : options.part ? `${this.key}/${options.part}` : this.key);
    if (key === undefined) throw new Error(`stage ${stage.name}: a request outside a record (collect, load, finish) names its key: ask(prompt, vars, { key })`);
    const result: GenerateResult<unknown> = await this.llm.generate(prompt, vars, { stage: stage.name, key, temperature: options.temperature, maxTokens: options.maxTokens });
    if (!result.ok) return { ok: false, reason: result.reason, detail: result.detail };
    const lineage: LineageEntry = { stage: stage.name, version: stage.version, prompt: prompt.id, promptHash: prompt.hash, model: result.model };
    return { ok: true, value: result.value as never, model: result.model, cached: result.cached, lineage };
  },
  lineage(prompt) {
    const entry: LineageEntry = { stage: this.stage.name, version: this.stage.version };
    if (!prompt) return entry;
    if (!this.stage.prompts?.includes(prompt)) throw new Error(`stage ${this.stage.name} names prompt ${prompt.id} in lineage, which it does not declare in \`prompts\``);
    return { ...entry, prompt: prompt.id, promptHash: prompt.hash };
  },
};

/** Runs a record through a stage's `run`, a failed request becoming the record's reject. */
export async function runRecord<I, O, C>(run: (record: I, ctx: C) => Promise<O> | O, record: I, ctx: C): Promise<O | (RejectReason & { reject: true })> {
  try {
    return await run(record, ctx);
  } catch (error) {
    if (error instanceof StepRejected) return reject(error.reason, error.detail);
    throw error;
  }
}

export interface StandaloneContextOptions {
  /** The stage to be called (what `ask` may send and lineage names); default: a stage named `standalone`. */
  stage?: StageIdentity;
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
    ...stageContextMethods,
    stage: options.stage ?? { name: 'standalone', version: 1 },
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
  try {
    for (const record of records) {
      const key = recordKey(stage, record);
      const result = await runRecord(stage.run, record, { ...ctx, key, state, rng: (...keys: (string | number)[]) => ctx.rng(key, ...keys) });
      if (isReject(result)) rejects.push(result);
      else out.push(...(Array.isArray(result) && stage.fanOut ? result : [result as O]));
    }
    const made = await stage.finish?.(state, ctx);
    if (made && Symbol.iterator in made) out.push(...made);
    else if (made) {
      out.push(...(made.out ?? []));
      rejects.push(...(made.rejects ?? []));
    }
  } finally {
    await stage.dispose?.(state);
  }
  return { out, rejects };
}

/** A record's stable key within a stage: the stage's `keyOf`, else the record's `id`, else its content hash. */
export function recordKey<I>(stage: { keyOf?: (record: I) => string }, record: I): string {
  if (stage.keyOf) return stage.keyOf(record);
  const id = (record as { id?: unknown })?.id;
  return typeof id === 'string' ? id : hashOf(record, 16);
}
