import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { checkConfigKeys } from './config-keys.ts';
import { UserError, fileSystemMessage, messageOf } from './errors.ts';
import { hashFile, hashOf, stableStringify } from './hash.ts';
import { describeOwner, tryLock, type Lock } from './lock.ts';
import { writeFileAtomic } from './jsonl.ts';
import type { LlmGateway } from './llm/types.ts';
import { combineUsage } from './llm/usage.ts';
import type { PipelineDefinition, ToolLibraryTally } from './pipeline.ts';
import type { ProgressOptions } from './progress.ts';
import { describeGate, gateOverFiles, GATE_VERSION, PublishGate } from './publish-gate.ts';
import { createEmbedder } from './embed/index.ts';
import { describeOverlap, OVERLAP_STAGE, OVERLAP_VERSION, OverlapAtPublishing, overlapForPublishing, publishingReferences } from './overlap/gate.ts';
import { formatZodError, type Manifest, type Sample, type StageStats, type ToolSpec } from './records.ts';
import { ReleasedReads } from './released-reads.ts';
import { runStages, runTexts, type RemoteRecords } from './runner.ts';
import { RUN_LOCK, RUN_OUTCOME } from './run-folder.ts';
import { yieldShortfall } from './run-yield.ts';
import type { StageThreadsOptions } from './stage-threads.ts';
import { DatasetStore, type VersionRef } from './store.ts';
import { checkSourceFile, readSourceText } from './source-files.ts';
import { liveToolHashes } from './tool-server.ts';
import { makeFolder } from './folders.ts';
import { DEFAULT_SEED } from './seed.ts';
import { promptHashes } from './stage.ts';

export { DEFAULT_SEED };


/** What a run was started with; saved in the run folder so `--resume` continues the same run. */
export interface RunSpec {
  pipeline: string;
  name: string;
  config: unknown;
  seed: number;
  limit?: number;
  model: string;
  backend: string;
  /** What the run's output depends on besides its settings, compared again on `--resume`. */
  inputs?: RunInputs;
}

/** Source files (config path → relative file → sha256), stage versions and prompt hashes of a run. */
export interface RunInputs {
  sources: Record<string, Record<string, string>>;
  stages: [string, number][];
  prompts: Record<string, string>;
}

/** How a run ended, written to its folder (`toolkiln runs list` reads it). */
export interface RunOutcome {
  status: 'published' | 'existing' | 'dry-run';
  dataset: string | null;
  finishedAt: string;
}

export interface RunPipelineOptions {
  pipeline: PipelineDefinition;
  /** Overrides merged over the pipeline's defaults (from a config file). */
  configOverrides?: unknown;
  configFile?: string;
  name?: string;
  seed?: number;
  limit?: number;
  llm: LlmGateway;
  home: string;
  /** Folder the shipped default paths are relative to (the toolkiln project folder). */
  projectDir: string;
  cwd?: string;
  /** Continue this run (a folder under `<home>/.toolkiln/runs/`). */
  resume?: string;
  /** Publish even when a version with the same fingerprint exists. */
  force?: boolean;
  /** Run every stage but publish nothing. */
  dryRun?: boolean;
  concurrency?: number;
  /** Worker threads for the stages whose work is pure computation (default: the cores but one, from 500 records). */
  threads?: StageThreadsOptions;
  /** Remove each stage's records once the stage after it is complete, and the last stage's once published (see RunStagesOptions). */
  pruneStageFiles?: boolean;
  /** Stop before publishing when more than this share of a stage's records could not reach the endpoint (default 0.1). */
  maxTransportRejects?: number;
  /** Stop before publishing when the samples are fewer than this share of the records loaded (default 0.05; none is always too few). */
  minYield?: number;
  /** Publish even a version with no samples, or below `minYield`. */
  allowEmpty?: boolean;
  log?: (message: string) => void;
  progress?: ProgressOptions;
  /**
   * The version this run is the next of (a review re-running its recipe with decisions): its
   * manifest's `parent`, figures added to `stats`, and files added to the version's folder.
   */
  parent?: { version: string; stats: Record<string, unknown>; files?: Record<string, string> };
  /** Per-record stages run on workers (`--redis`): records of run `runId` are sent there. */
  distribute?: { forRun(runId: string, spec: RunSpec): Promise<RemoteRecords> };
}

export interface RunPipelineResult {
  runId: string;
  fingerprint: string;
  /** `published`: a new version; `existing`: an identical one was already there; `dry-run`: nothing written. */
  status: 'published' | 'existing' | 'dry-run';
  ref?: VersionRef;
  manifest?: Manifest;
  stats: StageStats[];
}

export function resolveConfig(pipeline: PipelineDefinition, overrides: unknown, source = 'config'): unknown {
  checkConfigKeys(pipeline.configSchema, overrides, source);
  const parsed = pipeline.configSchema.safeParse(overrides ?? {});
  if (!parsed.success) throw new UserError(`${source}: invalid ${pipeline.name} config: ${formatZodError(parsed.error)}`);
  return parsed.data;
}

/** Reads a JSON config file; `shown` is how the user wrote its path (for messages). */
export function readConfigFile(path: string, shown = path): unknown {
  if (!existsSync(path)) throw new UserError(`config file not found: ${shown}`);
  const text = readSourceText(path, `config file ${shown}`);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UserError(`${shown}: not valid JSON (${messageOf(error)})`);
  }
}

export function pathResolver(cwd: string, projectDir: string): (path: string) => string {
  return (path) => {
    const fromCwd = resolve(cwd, path);
    if (existsSync(fromCwd)) return fromCwd;
    const fromProject = resolve(projectDir, path);
    return existsSync(fromProject) ? fromProject : fromCwd;
  };
}

/** What run `runId` was started with (its `run.json`), or a clear error. */
export function readRunSpec(home: string, runId: string): RunSpec {
  const runsDir = join(home, '.toolkiln', 'runs');
  if (/[\/\\]|\.\./.test(runId) || !runId) throw new UserError(`invalid run id "${runId}"`);
  const specPath = join(runsDir, runId, 'run.json');
  if (!existsSync(specPath)) throw new UserError(`no run "${runId}" to resume in ${runsDir} (see: toolkiln runs list)`);
  try {
    return JSON.parse(readFileSync(specPath, 'utf8')) as RunSpec;
  } catch (error) {
    throw new UserError(`${specPath}: not readable JSON (${messageOf(error)}); the run folder is damaged: start a new run`);
  }
}

/**
 * One `toolkiln run`: resolve the config, fingerprint the inputs, skip if an identical version
 * exists, run (or resume) the stages with journals, and publish the next version atomically.
 * The run's folder is locked while it runs, so no two processes ever work in one.
 */
export async function runPipeline(options: RunPipelineOptions): Promise<RunPipelineResult> {
  const log = options.log ?? (() => {});
  const runsDir = join(options.home, '.toolkiln', 'runs');
  const resolvePath = pathResolver(options.cwd ?? process.cwd(), options.projectDir);

  let spec: RunSpec;
  if (options.resume) {
    spec = readRunSpec(options.home, options.resume);
    const runId = options.resume;
    if (options.seed !== undefined && options.seed !== spec.seed) throw new UserError(`run ${runId} was started with seed ${spec.seed}; a resumed run keeps its seed`);
    if (spec.pipeline !== options.pipeline.name) throw new UserError(`run ${runId} is a ${spec.pipeline} run, not ${options.pipeline.name}`);
    if (spec.model !== options.llm.model) throw new UserError(`run ${runId} was started with model ${spec.model}; resume it with --model ${spec.model} (now: ${options.llm.model})`);
  } else {
    const config = resolveConfig(options.pipeline, options.configOverrides, options.configFile);
    spec = {
      pipeline: options.pipeline.name,
      name: DatasetStore.checkName(options.name ?? options.pipeline.name),
      config,
      seed: options.seed ?? DEFAULT_SEED,
      limit: options.limit,
      model: options.llm.model,
      backend: options.llm.backend,
    };
  }

  const stages = options.pipeline.stages(spec.config);
  const inputs: RunInputs = {
    // A live tool server is an input too: what it lists now (a changed server is a changed input).
    sources: { ...(await hashSources(options.pipeline.sourceFiles(spec.config), resolvePath, options.projectDir)), ...(await liveToolHashes(spec.config, { log })) },
    stages: stages.map((s) => [s.name, s.version]),
    prompts: promptHashes(stages),
  };
  if (options.resume) assertSameInputs(options.resume, spec, inputs, options.pipeline);
  const sources = Object.fromEntries(Object.entries(inputs.sources).map(([file, files]) => [file, combinedHash(files)]));
  const fingerprint = hashOf({
    pipeline: spec.pipeline,
    config: spec.config,
    seed: spec.seed,
    limit: spec.limit ?? null,
    model: spec.model,
    stages: inputs.stages,
    prompts: inputs.prompts,
    sources,
    gate: GATE_VERSION,
    ...(options.pipeline.testOverlap ? { testOverlap: OVERLAP_VERSION } : {}),
  });

  const store = new DatasetStore(options.home, { warn: log });
  if (!options.force && !options.dryRun) {
    const existing = store.findByFingerprint(spec.name, fingerprint);
    if (existing) {
      log(`${spec.name}@${existing.version} already has fingerprint ${fingerprint.slice(0, 12)}: nothing new to publish (--force publishes anyway)`);
      const manifest = store.manifest(existing);
      return { runId: options.resume ?? '-', fingerprint, status: 'existing', ref: existing, manifest, stats: manifest.stages };
    }
  }

  // Resolved before the run: a reference the config names that is not there stops it before any work.
  const overlapConfig = options.pipeline.testOverlap?.(spec.config);
  // A released set the gate compares with is read once for the run: the statistics stage counts the same samples.
  const releasedReads = new ReleasedReads();
  const overlapReferences = overlapConfig && publishingReferences(overlapConfig, options.pipeline.released ?? [], { store, resolvePath, cwd: options.cwd ?? process.cwd(), reads: releasedReads });

  const { runId, lock } = options.resume ? { runId: options.resume, lock: lockRun(runsDir, options.resume) } : createRun(runsDir, { ...spec, inputs }, fingerprint);
  const runDir = join(runsDir, runId);
  try {
    log(`run ${runId} (resume with --resume ${runId})`);
    const remote = await options.distribute?.forRun(runId, { ...spec, inputs });
    const resumeCommand = `toolkiln run ${spec.pipeline} --resume ${runId}`;
    // The shared invariants, checked as the last stage writes its samples (no pass over them after
    // it): a sample that breaks one is not published.
    const { pipeline } = options;
    const gateOptions = {
      mode: pipeline.invariants?.gate?.(spec.config) ?? ('reject' as const),
      toolLibrary: pipeline.toolLibrary ?? (() => new DistinctTools()),
      invariants: { offeredOutsideLibrary: pipeline.invariants?.offeredOutsideLibrary },
      audits: pipeline.audits?.(spec.config, resolvePath) ?? [],
      dir: join(runDir, 'publish'),
      // One for the run: what the stages serialised, the gate does not serialise again.
      texts: runTexts(),
    };
    // Overlap with test sets: measured as the early gate writes the samples when it can be (OverlapAtPublishing), else over its files.
    const overlapOptions = overlapConfig && overlapReferences && !options.dryRun && {
      config: overlapConfig,
      ...overlapReferences,
      embedder: createEmbedder(overlapConfig.embedder, { gateway: options.llm, stage: OVERLAP_STAGE, resolvePath }),
      dir: join(runDir, 'publish'),
      toolLibrary: gateOptions.toolLibrary,
    };
    const overlapEarly = overlapOptions ? await OverlapAtPublishing.start(overlapOptions) : null;
    const early = options.dryRun ? null : new PublishGate({ ...gateOptions, library: null, onPublished: overlapEarly ? (sample) => overlapEarly.add(sample) : undefined });
    const result = await runStages({
      onSample: early ? (sample) => early.add(sample) : undefined,
      texts: gateOptions.texts,
      releasedReads,
      pipeline: options.pipeline,
      config: spec.config,
      seed: spec.seed,
      llm: options.llm,
      runDir,
      limit: spec.limit,
      concurrency: options.concurrency,
      threads: options.threads,
      pruneStageFiles: options.pruneStageFiles,
      maxTransportRejects: options.maxTransportRejects,
      resumeCommand,
      resolvePath,
      log,
      progress: options.progress,
      remote,
    }).catch((error) => {
      early?.discard();
      overlapEarly?.discard();
      throw error;
    });
    if (!early) {
      writeOutcome(runDir, { status: 'dry-run', dataset: null, finishedAt: new Date().toISOString() });
      return { runId, fingerprint, status: 'dry-run', stats: result.stats };
    }
    const shortfall = yieldShortfall(result.stats, { minYield: options.minYield ?? options.pipeline.minYield?.(spec.config), allowEmpty: options.allowEmpty, resumeCommand });
    if (shortfall) {
      early.discard();
      overlapEarly?.discard();
      throw shortfall;
    }
    // The last stage ran in an earlier process (or the library found what the early checks could not): the gate reads its file.
    const ended = result.sawEverySample ? early.end() : (early.discard(), null);
    const earlyHolds = !!ended && !('redo' in ended);
    if (!earlyHolds) overlapEarly?.discard();
    if (ended && 'redo' in ended) log("the samples' tools clash with the version's tool library: the invariants are checked again over the last stage's file");
    const gate = ended && !('redo' in ended) ? ended : gateOverFiles(result.samples, { ...gateOptions, library: ended?.library });
    log(describeGate(gate.summary));
    // Overlap with test sets: reported in the manifest, or rejected when the config says so.
    const overlap = overlapOptions ? await (earlyHolds && overlapEarly ? overlapEarly.end(gate.prepared) : overlapForPublishing(gate.prepared, overlapOptions)) : undefined;
    if (overlap) log(describeOverlap(overlap.summary));
    releasedReads.release();
    // The data files the gate wrote, or (samples rejected for overlap) the ones written again without them.
    const data = overlap?.prepared ?? gate.prepared;
    // Requests workers sent count as much as this process's own.
    const usage = remote ? combineUsage(options.llm.usage(), remote.usage()) : options.llm.usage();
    const extraFiles = { ...Object.fromEntries(Object.entries(result.attachments).sort().map(([name, path]) => [`reports/${name}`, readFileSync(path, 'utf8')])), ...options.parent?.files };
    const published = store.publish({
      name: spec.name,
      force: options.force,
      extraFiles,
      prepared: data,
      tools: overlap?.tools ?? gate.tools,
      rejects: (function* () {
        yield* result.rejects();
        yield* gate.rejects();
        if (overlap) yield* overlap.rejects();
      })(),
      manifest: {
        pipeline: spec.pipeline,
        config: spec.config,
        fingerprint,
        parent: options.parent?.version ?? null,
        stages: result.stats,
        usage,
        models: Object.keys(usage.byModel).length ? Object.keys(usage.byModel).sort() : [spec.model],
        prompts: inputs.prompts,
        sources,
        stats: { ...result.reports, audit: gate.summary, ...(overlap ? { testOverlap: overlap.summary } : {}), seed: spec.seed, limit: spec.limit ?? null, ...options.parent?.stats },
      },
    });
    if (published.status === 'existing') log(`${spec.name}@${published.ref.version} with the same fingerprint was published meanwhile: nothing new to publish`);
    // Data files a version that was there already did not take.
    rmSync(data.dir, { recursive: true, force: true });
    writeOutcome(runDir, { status: published.status, dataset: `${published.ref.name}@${published.ref.version}`, finishedAt: new Date().toISOString() });
    result.pruneLast();
    return { runId, fingerprint, status: published.status, ref: published.ref, manifest: published.manifest, stats: published.status === 'existing' ? published.manifest.stages : result.stats };
  } catch (error) {
    const disk = fileSystemMessage(error);
    throw disk ? new UserError(`${disk}; then resume with: toolkiln run ${spec.pipeline} --resume ${runId}`, 1) : error;
  } finally {
    lock.release();
  }
}

/** A new run folder with a name no other run has (time, fingerprint and randomness), locked by this process. */
function createRun(runsDir: string, spec: RunSpec, fingerprint: string): { runId: string; lock: Lock } {
  makeFolder(runsDir);
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '').replace('T', '-');
  for (;;) {
    const runId = `${spec.pipeline}-${stamp}-${fingerprint.slice(0, 8)}-${randomBytes(3).toString('hex')}`;
    try {
      mkdirSync(join(runsDir, runId)); // fails if the name is taken: two processes never share a folder
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') continue;
      throw error;
    }
    const lock = lockRun(runsDir, runId);
    writeFileAtomic(join(runsDir, runId, 'run.json'), JSON.stringify(spec, null, 2));
    return { runId, lock };
  }
}

/** Locks a run folder for this process, or refuses while another live process works in it. */
function lockRun(runsDir: string, runId: string): Lock {
  const taken = tryLock(join(runsDir, runId, RUN_LOCK), `run ${runId}`);
  if ('lock' in taken) return taken.lock;
  throw new UserError(`run ${runId} is in progress in ${describeOwner(taken.heldBy)}; wait for it to end (or stop it) before resuming`);
}

function writeOutcome(runDir: string, outcome: RunOutcome): void {
  writeFileAtomic(join(runDir, RUN_OUTCOME), JSON.stringify(outcome, null, 2) + '\n');
}

/**
 * A resumed run must see the inputs it started with: the records already journalled came from
 * them. The first difference is an error naming it.
 */
function assertSameInputs(runId: string, spec: RunSpec, now: RunInputs, pipeline: PipelineDefinition): void {
  const restart = 'start a new run';
  const then = spec.inputs;
  if (!then) throw new UserError(`run ${runId} did not record its inputs (an older toolkiln started it), so a resume cannot check them; ${restart}`);
  for (const [entry, files] of Object.entries(now.sources)) {
    const before = then.sources[entry];
    if (!before) throw new UserError(`source ${entry} is new since run ${runId} started; ${restart}`);
    for (const file of new Set([...Object.keys(before), ...Object.keys(files)])) {
      const shown = file ? join(entry, file) : entry;
      if (!(file in files)) throw new UserError(`${shown} was removed since run ${runId} started; ${restart}`);
      if (!(file in before)) throw new UserError(`${shown} was added since run ${runId} started; ${restart}`);
      if (before[file] !== files[file]) throw new UserError(`${shown} changed since run ${runId} started; ${restart}`);
    }
  }
  for (const entry of Object.keys(then.sources)) {
    if (!(entry in now.sources)) throw new UserError(`source ${entry} is no longer read by the ${pipeline.name} recipe since run ${runId} started; ${restart}`);
  }
  const versionsThen = new Map(then.stages);
  for (const [name, version] of now.stages) {
    if (!versionsThen.has(name)) throw new UserError(`stage ${name} is new in the ${pipeline.name} recipe since run ${runId} started; ${restart}`);
    if (versionsThen.get(name) !== version) throw new UserError(`stage ${name} is at version ${version}, but run ${runId} started with version ${versionsThen.get(name)}; ${restart}`);
  }
  if (then.stages.length !== now.stages.length) throw new UserError(`the ${pipeline.name} recipe's stages changed since run ${runId} started; ${restart}`);
  for (const id of new Set([...Object.keys(then.prompts), ...Object.keys(now.prompts)])) {
    if (then.prompts[id] !== now.prompts[id]) throw new UserError(`prompt ${id} changed since run ${runId} started; ${restart}`);
  }
  let resolved: unknown;
  try {
    resolved = resolveConfig(pipeline, spec.config, `run ${runId}`);
  } catch (error) {
    throw new UserError(`the ${pipeline.name} config schema changed since run ${runId} started (${messageOf(error)}); ${restart}`);
  }
  if (stableStringify(resolved) !== stableStringify(spec.config)) throw new UserError(`the ${pipeline.name} config schema changed since run ${runId} started (its defaults or fields differ); ${restart}`);
}

/** Every distinct tool the samples offer, by name (first definition wins), sorted by name. */
export function distinctTools(samples: Iterable<Sample>): ToolSpec[] {
  const tally = new DistinctTools();
  for (const sample of samples) tally.add(sample);
  return tally.tools();
}

/** The default tool library of a version (see {@link distinctTools}), made one sample at a time. */
export class DistinctTools implements ToolLibraryTally {
  private readonly byName = new Map<string, ToolSpec>();

  add(sample: Sample): void {
    for (const tool of sample.tools) if (!this.byName.has(tool.name)) this.byName.set(tool.name, tool);
  }

  tools(): ToolSpec[] {
    return [...this.byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }
}

/** Each source path of the config → its files (relative path, `''` for a single file) → sha256. */
async function hashSources(paths: string[], resolvePath: (path: string) => string, projectDir: string): Promise<Record<string, Record<string, string>>> {
  const out: Record<string, Record<string, string>> = {};
  for (const file of paths) {
    const path = resolvePath(file);
    if (!existsSync(path)) throw new UserError(`source file not found: ${file} (looked in the current folder and ${projectDir}); fix the path in the config`);
    out[file] = await hashFiles(path, file);
  }
  return out;
}

/** A file's hash (under `''`), or every file under a folder by relative path, sorted. */
async function hashFiles(path: string, shown: string): Promise<Record<string, string>> {
  if (!statSync(path).isDirectory()) {
    // Refused before hashing: a device such as /dev/zero would never end, a 10 GB file is over the limit.
    checkSourceFile(path, { shown: `source ${shown}` });
    return { '': await hashFile(path) };
  }
  const entries = readdirSync(path, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name))
    .sort();
  const hashes: Record<string, string> = {};
  for (const file of entries) {
    checkSourceFile(file, { shown: `source ${join(shown, file.slice(path.length + 1))}` });
    hashes[file.slice(path.length + 1)] = await hashFile(file);
  }
  return hashes;
}

/** The manifest's hash of one source path: the file's own, or for a folder the hash of its file list. */
function combinedHash(files: Record<string, string>): string {
  const keys = Object.keys(files);
  return keys.length === 1 && keys[0] === '' ? files[''] : hashOf(files);
}
