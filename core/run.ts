import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { UserError, messageOf } from './errors.ts';
import { hashFile, hashOf } from './hash.ts';
import { writeFileAtomic } from './jsonl.ts';
import type { LlmGateway } from './llm/types.ts';
import type { PipelineDefinition } from './pipeline.ts';
import type { ProgressOptions } from './progress.ts';
import { formatZodError, type Manifest, type Sample, type StageStats, type ToolSpec } from './records.ts';
import { runStages } from './runner.ts';
import { DatasetStore, type VersionRef } from './store.ts';

export const DEFAULT_SEED = 42;

/** What a run was started with; saved in the run folder so `--resume` continues the same run. */
export interface RunSpec {
  pipeline: string;
  name: string;
  config: unknown;
  seed: number;
  limit?: number;
  model: string;
  backend: string;
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
  log?: (message: string) => void;
  progress?: ProgressOptions;
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
  const parsed = pipeline.configSchema.safeParse(overrides ?? {});
  if (!parsed.success) throw new UserError(`${source}: invalid ${pipeline.name} config: ${formatZodError(parsed.error)}`);
  return parsed.data;
}

/** Reads a JSON config file; `shown` is how the user wrote its path (for messages). */
export function readConfigFile(path: string, shown = path): unknown {
  if (!existsSync(path)) throw new UserError(`config file not found: ${shown}`);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new UserError(`config file not readable: ${shown} (${(error as NodeJS.ErrnoException).code ?? messageOf(error)})`);
  }
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
  if (/[\/\\]|\.\./.test(runId)) throw new UserError(`invalid run id "${runId}"`);
  const specPath = join(runsDir, runId, 'run.json');
  if (!existsSync(specPath)) throw new UserError(`no run "${runId}" to resume in ${runsDir}`);
  return JSON.parse(readFileSync(specPath, 'utf8')) as RunSpec;
}

/**
 * One `toolkiln run`: resolve the config, fingerprint the inputs, skip if an identical version
 * exists, run (or resume) the stages with journals, and publish the next version atomically.
 */
export async function runPipeline(options: RunPipelineOptions): Promise<RunPipelineResult> {
  const log = options.log ?? (() => {});
  const runsDir = join(options.home, '.toolkiln', 'runs');
  const resolvePath = pathResolver(options.cwd ?? process.cwd(), options.projectDir);

  let spec: RunSpec;
  let runId: string;
  if (options.resume) {
    runId = options.resume;
    spec = readRunSpec(options.home, runId);
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
    runId = '';
  }

  const stages = options.pipeline.stages(spec.config);
  const sources: Record<string, string> = {};
  for (const file of options.pipeline.sourceFiles(spec.config)) {
    const path = resolvePath(file);
    if (!existsSync(path)) throw new UserError(`source file not found: ${file} (looked in the current folder and ${options.projectDir}); fix the path in the config`);
    sources[file] = await hashPath(path);
  }
  const prompts: Record<string, string> = Object.assign({}, ...stages.map((s) => s.prompts ?? {}));
  const fingerprint = hashOf({
    pipeline: spec.pipeline,
    config: spec.config,
    seed: spec.seed,
    limit: spec.limit ?? null,
    model: spec.model,
    stages: stages.map((s) => [s.name, s.version]),
    prompts,
    sources,
  });

  const store = new DatasetStore(options.home);
  if (!options.force && !options.dryRun) {
    const existing = store.findByFingerprint(spec.name, fingerprint);
    if (existing) {
      log(`${spec.name}@${existing.version} already has fingerprint ${fingerprint.slice(0, 12)}: nothing new to publish (--force publishes anyway)`);
      return { runId: runId || '-', fingerprint, status: 'existing', ref: existing, manifest: store.manifest(existing), stats: store.manifest(existing).stages };
    }
  }

  if (!runId) {
    runId = `${spec.pipeline}-${new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '').replace('T', '-')}-${fingerprint.slice(0, 8)}`;
    writeFileAtomic(join(runsDir, runId, 'run.json'), JSON.stringify(spec, null, 2));
  }
  log(`run ${runId} (resume with --resume ${runId})`);

  const result = await runStages({
    pipeline: options.pipeline,
    config: spec.config,
    seed: spec.seed,
    llm: options.llm,
    runDir: join(runsDir, runId),
    limit: spec.limit,
    concurrency: options.concurrency,
    resolvePath,
    log,
    progress: options.progress,
  });
  if (options.dryRun) return { runId, fingerprint, status: 'dry-run', stats: result.stats };

  const tools = (options.pipeline.toolLibrary ?? distinctTools)(result.samples);
  const usage = options.llm.usage();
  const extraFiles = Object.fromEntries(Object.entries(result.attachments).sort().map(([name, path]) => [`reports/${name}`, readFileSync(path, 'utf8')]));
  const { ref, manifest } = store.publish({
    name: spec.name,
    extraFiles,
    samples: result.samples,
    tools,
    rejects: result.rejects,
    manifest: {
      pipeline: spec.pipeline,
      config: spec.config,
      fingerprint,
      parent: null,
      stages: result.stats,
      usage,
      models: Object.keys(usage.byModel).length ? Object.keys(usage.byModel).sort() : [spec.model],
      prompts,
      sources,
      stats: { ...result.reports, seed: spec.seed, limit: spec.limit ?? null },
    },
  });
  return { runId, fingerprint, status: 'published', ref, manifest, stats: result.stats };
}

/** Every distinct tool the samples offer, by name (first definition wins), sorted by name. */
export function distinctTools(samples: Sample[]): ToolSpec[] {
  const byName = new Map<string, ToolSpec>();
  for (const sample of samples) for (const tool of sample.tools) if (!byName.has(tool.name)) byName.set(tool.name, tool);
  return [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** A file's hash, or for a folder the hash of every file under it (sorted by relative path). */
async function hashPath(path: string): Promise<string> {
  if (!statSync(path).isDirectory()) return hashFile(path);
  const entries = readdirSync(path, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name))
    .sort();
  const hashes: Record<string, string> = {};
  for (const file of entries) hashes[file.slice(path.length + 1)] = await hashFile(file);
  return hashOf(hashes);
}
