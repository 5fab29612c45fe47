import { closeSync, existsSync, openSync, readFileSync, readSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import PQueue from 'p-queue';
import { countBy } from './collections.ts';
import { UserError, fileSystemMessage, messageOf } from './errors.ts';
import { eachJsonl, eachJsonlLine, Journal, JsonlWriter, jsonlLines, lineString, parseJsonLine, writeFileAtomic, type LineText } from './jsonl.ts';
import { appendJournalLine, isConsistent, outputBytes, type JournalEntry } from './journal-line.ts';
import { JsonTexts } from './json-texts.ts';
import { BatchRound, checkBatchesInFlight } from './llm/batch-round.ts';
import { observeResults } from './llm/observe.ts';
import { TRANSPORT_FAILURES, type LlmGateway, type UsageReport } from './llm/types.ts';
import type { PipelineDefinition } from './pipeline.ts';
import { Progress, type ProgressOptions } from './progress.ts';
import { Rejection, Sample, StageStats, formatZodError } from './records.ts';
import { Rng } from './rng.ts';
import { ReleasedReads, type ReleasedSet } from './released-reads.ts';
import { StageThreads, type StageThreadsOptions } from './stage-threads.ts';
import { entryOf, parsedRecord, prepareRecord, recordContext, returnsInput, validateInput, validateOutputs, type StageRecord } from './stage-records.ts';
import { parseRecord } from './validate.ts';
import { isReject, recordKey, runRecord, stageContextMethods, StepRejected, type MapStage, type RejectReason, type ScanMade, type ScanStage, type SourceReject, type SourceStage, type Stage, type StageContext } from './stage.ts';

export interface RunStagesOptions {
  pipeline: PipelineDefinition;
  /** The resolved, validated pipeline config. */
  config: unknown;
  seed: number;
  llm: LlmGateway;
  /** The run's folder: stage journals and outputs live here; the same folder resumes the run. */
  runDir: string;
  /** Process only n of the records the loading stage emits, spread evenly over them. */
  limit?: number;
  /** Records in flight at once in per-record stages (a stage may ask for fewer). */
  concurrency?: number;
  resolvePath: (path: string) => string;
  log?: (message: string) => void;
  progress?: ProgressOptions;
  /**
   * Stop before publishing when more than this share of a stage's records failed to reach the LLM
   * endpoint (connection, timeout, HTTP error, rate limit after every retry). Default 0.1.
   */
  maxTransportRejects?: number;
  /** The command that resumes this run, quoted in messages of a run that stops. */
  resumeCommand?: string;
  /** Per-record stages run each record here (workers behind a queue) instead of in this process. */
  remote?: RemoteRecords;
  /** Worker threads for the stages whose work is pure computation (`MapStage.threads`). */
  threads?: StageThreadsOptions;
  /**
   * Remove a stage's records (`out.jsonl`, `journal.jsonl`) once the stage after it is complete:
   * no stage still to run, nor a resumed run, reads them again. The run folder then holds about
   * the records of the stages running rather than of every stage (a large run fits its disk);
   * stats, rejects and attachments stay.
   */
  pruneStageFiles?: boolean;
  /**
   * Sees each Sample a whole-set last stage writes, as it writes it (a tool library made on the way
   * needs no pass over the samples); `RunStagesResult.sawEverySample` says whether all went by.
   */
  onSample?: (sample: Sample) => void;
  /** The run's record texts (shared with whoever writes the samples again, the publish gate); default: the runner's own. */
  texts?: JsonTexts;
  /** The run's reads of released sets (shared with the overlap gate, which reads the same sets); default: the runner's own. */
  releasedReads?: ReleasedReads;
}

/** One record of a per-record stage, sent to be run elsewhere. */
export interface RecordJob {
  stageIndex: number;
  stage: string;
  i: number;
  key: string;
  raw: unknown;
}

/** What one record came to: its journal entry, and why its LLM requests failed to reach the endpoint, if they did. */
export interface RecordOutcome {
  entry: JournalEntry;
  transport?: string;
}

/** Runs records of per-record stages somewhere else; the outcome is journalled as if run here. */
export interface RemoteRecords {
  run(job: RecordJob): Promise<RecordOutcome>;
  /** The LLM usage of the records run there so far. */
  usage(): UsageReport;
}

export const DEFAULT_MAX_TRANSPORT_REJECTS = 0.1;
/** Fields whose list items records share: samples offer tools of one library. */
const SHARED_ITEMS = ['tools'];

/**
 * The record texts of one run. `TOOLKILN_FREEZE_RECORDS=1` freezes every record once serialised, so
 * a stage that edits a record in place fails there (the test suite sets it; see JsonTexts).
 */
export function runTexts(env: NodeJS.ProcessEnv = process.env): JsonTexts {
  return new JsonTexts({ sharedItems: SHARED_ITEMS, freeze: env.TOOLKILN_FREEZE_RECORDS === '1' });
}
/** Records of a per-record stage in flight at once unless the run sets a concurrency. */
export const DEFAULT_RECORDS_IN_FLIGHT = 16;

export interface RunStagesResult {
  /** The Samples of the last stage, one at a time, read from its output file (never all in memory). */
  samples: () => Generator<Sample>;
  /** Every stage's rejects, stage by stage, read from their files. */
  rejects: () => Generator<Rejection>;
  stats: StageStats[];
  /** Figures stages reported for the manifest, by key. */
  reports: Record<string, unknown>;
  /** Files stages attached: name → path of the copy in the run folder. */
  attachments: Record<string, string>;
  /** With `pruneStageFiles`, removes the last stage's records too (once they are published); otherwise does nothing. */
  pruneLast: () => void;
  /** Every sample of the last stage went through `onSample` (it ran in this process). */
  sawEverySample: boolean;
}

export type { JournalEntry };

/** What a stage runner wrote to the stage's folder (`out.jsonl`, `rejects.jsonl`), counted. */
interface StageCounts {
  in: number;
  out: number;
  rejected: number;
  rejectsByReason: Record<string, number>;
}

/** Records of one stage whose LLM requests failed for transport reasons, and by which reason. */
export class TransportTally {
  readonly keys = new Set<string>();
  readonly byReason: Record<string, number> = {};
  /**
   * Keys a loading or whole-set stage asked about: its requests are keyed by what it asks about,
   * not by its input records. (A record's requests are counted among the stage's input records:
   * their keys are not kept.)
   */
  readonly asked = new Set<string>();

  /** The gateway a stage (or one record of it) sees: transport failures are counted under `key`. */
  watch(llm: LlmGateway, key?: string): LlmGateway {
    return observeResults(llm, (result, _prompt, _vars, options) => {
      if (key === undefined) this.asked.add(options.key);
      if (!result.ok && TRANSPORT_FAILURES.has(result.reason)) this.add(key ?? options.key, result.reason);
    });
  }

  add(key: string, reason: string): void {
    if (!this.keys.has(key)) this.byReason[reason] = (this.byReason[reason] ?? 0) + 1;
    this.keys.add(key);
  }

  /** A UserError when more than `share` of `total` records failed, else null. */
  excess(stage: string, total: number, share: number, resumeCommand: string): UserError | null {
    if (this.keys.size === 0 || this.keys.size <= share * total) return null;
    const reasons = Object.entries(this.byReason).map(([reason, n]) => `${reason} ${n}`).join(', ');
    return new UserError(
      `stage ${stage}: ${this.keys.size} of ${total} records could not reach the LLM endpoint (${reasons}), more than the ${Math.round(share * 1000) / 10} % that --max-transport-rejects allows; nothing was published. ` +
        `Answers already received are cached: check the endpoint, then resume with: ${resumeCommand}`,
      1,
    );
  }
}

/** Removes a complete stage's records (its journal and output), once no stage reads them again. */
function pruneRecords(folder: string): void {
  for (const file of ['journal.jsonl', 'out.jsonl']) rmSync(join(folder, file), { force: true });
}

/** Folder name of stage `index`, e.g. `02-decode-slots`. */
function stageFolder(runDir: string, index: number, stage: Stage): string {
  return join(runDir, 'stages', `${String(index + 1).padStart(2, '0')}-${stage.name}`);
}

/**
 * Runs a pipeline's stages in order. Records flow from file to file: a per-record stage reads its
 * input from the previous stage's `out.jsonl` as a stream, journals each record as it finishes and
 * writes its outputs in input order when it completes, so the runner never holds a stage's records
 * (a whole-set stage gets its input as one array). Calling this again on the same `runDir`
 * resumes: completed stages are read back, a stage cut off mid-way continues with the records it
 * had not finished, and nothing journalled is recomputed.
 */
export async function runStages(options: RunStagesOptions): Promise<RunStagesResult> {
  const log = options.log ?? (() => {});
  const stages = options.pipeline.stages(options.config);
  checkBatchesInFlight(options.runDir, options.llm, resumeCommandOf(options));
  const reports: Record<string, unknown> = {};
  const attachments: Record<string, string> = {};
  const stats: StageStats[] = [];
  const rejectFiles: string[] = [];
  let sawEverySample = false;
  let input: StageInput | null = null;
  // Consecutive per-record stages run together, each taking the records of the one before as they
  // finish (in order), so the endpoint is not left idle at stage boundaries. Not in batch mode,
  // where a stage's requests wait for its batch.
  const pipelined = !options.llm.batch;
  // Stages still running with the next one; each finishes (writes its files) after the one before it.
  let previous: Promise<void> = Promise.resolve();
  const running: Promise<void>[] = [];
  // The first failure among stages running together stops them all, and is the one reported.
  const abort = new AbortController();
  const fail = (error: unknown) => abort.signal.aborted || abort.abort(error);
  // Records handed on in memory keep most of their parts: each part's text is made once for the run.
  const texts = options.texts ?? runTexts();
  const statsPathOf = (index: number) => join(stageFolder(options.runDir, index, stages[index]), 'stats.json');
  const releasedReads = options.releasedReads ?? new ReleasedReads();
  const readReleased = (set: ReleasedSet, dir: string) => releasedReads.samples(set, dir, options.resolvePath);
  stages.forEach((stage, index) => {
    if (stage.prepare && !existsSync(statsPathOf(index))) stage.prepare({ resolvePath: options.resolvePath, readReleased });
  });
  // The stages that take a released set the gate read (a statistics stage) took it as they were
  // prepared: one the gate read that none took (another file of it, a stage already complete) is
  // not held through the run.
  releasedReads.release();

  /** What running stage `index` takes: its folder and files, its context, and how it completes. */
  const stageRun = (index: number): StageRun => {
    const stage = stages[index];
    const folder = stageFolder(options.runDir, index, stage);
    const ctx: StageContext = {
      ...stageContextMethods,
      stage: { name: stage.name, version: stage.version, prompts: stage.prompts },
      seed: options.seed,
      rng: (...keys) => Rng.derive(options.seed, stage.name, ...keys),
      llm: options.llm,
      config: options.config,
      runDir: options.runDir,
      resolvePath: options.resolvePath,
      readReleased,
      log: (message) => log(`[${stage.name}] ${message}`),
      report: (key, value) => {
        reports[key] = value;
      },
      reported: () => structuredClone(reports),
      attach: (name, content) => {
        if (!/^[\w.-]+(\/[\w.-]+)*$/.test(name) || name.split('/').includes('..')) throw new Error(`stage ${stage.name}: attachment name "${name}" must be a relative path of letters, digits, '.', '-', '_'`);
        const path = join(folder, 'attachments', name);
        writeFileAtomic(path, content);
        attachments[name] = path;
      },
    };
    const files = { out: join(folder, 'out.jsonl'), rejects: join(folder, 'rejects.jsonl') };
    const statsPath = statsPathOf(index);
    const started = Date.now();
    const stageReports: Record<string, unknown> = {};
    const stageAttachments = new Set<string>();
    const stageCtx: StageContext = {
      ...ctx,
      // Merged into the run's reports when the stage completes, in stage order.
      report: (key, value) => {
        stageReports[key] = value;
      },
      reported: () => structuredClone({ ...reports, ...stageReports }),
      attach: (name, content) => (ctx.attach(name, content), stageAttachments.add(name)),
    };
    const tally = new TransportTally();
    return {
      stage,
      folder,
      files,
      statsPath,
      stageCtx,
      tally,
      // Records were validated against the previous stage's output schema; parse again only when
      // this stage expects another schema.
      checkInput: index > 0 && stages[index - 1].output !== stage.input,
      /** Checks the stage's transport failures, then writes its stats (last: their presence means the stage is complete). */
      complete: (counts: StageCounts) => {
        // A loading or whole-set stage asks about things of its own (60 domains from no input record).
        const excess = tally.excess(stage.name, Math.max(counts.in, tally.asked.size, 1), options.maxTransportRejects ?? DEFAULT_MAX_TRANSPORT_REJECTS, resumeCommandOf(options));
        if (excess) throw excess;
        const stageStats: StageStats = {
          stage: stage.name,
          version: stage.version,
          in: counts.in,
          out: counts.out,
          rejected: counts.rejected,
          fanned: counts.out + counts.rejected - counts.in,
          rejectsByReason: counts.rejectsByReason,
          seconds: Math.round((Date.now() - started) / 10) / 100,
        };
        writeFileAtomic(statsPath, JSON.stringify({ stats: stageStats, reports: stageReports, attachments: [...stageAttachments].sort() }, null, 2));
        Object.assign(reports, stageReports);
        stats.push(stageStats);
        rejectFiles.push(files.rejects);
        if (options.pruneStageFiles && index > 0) pruneRecords(stageFolder(options.runDir, index - 1, stages[index - 1]));
      },
    };
  };

  for (let index = 0; index < stages.length; index++) {
    const run = stageRun(index);
    const { stage, folder, files, statsPath, stageCtx, tally, checkInput, complete } = run;

    if (existsSync(statsPath)) {
      // Completed before the run was interrupted: read back, do not recompute.
      const done = JSON.parse(readFileSync(statsPath, 'utf8')) as { stats: StageStats; reports: Record<string, unknown>; attachments?: string[] };
      Object.assign(reports, done.reports);
      for (const name of done.attachments ?? []) attachments[name] = join(folder, 'attachments', name);
      stats.push(done.stats);
      rejectFiles.push(files.rejects);
      input = { path: files.out, count: done.stats.out };
      log(`${stage.name}: already complete (${done.stats.out} out), reused`);
      continue;
    }

    if (stage.kind !== 'source' && !input) throw new Error(`pipeline ${options.pipeline.name}: its first stage ${stage.name} is a per-record stage; a pipeline starts with a loading stage`);

    if (stage.kind === 'map' && pipelined && takesRecordsAsTheyFinish(stages[index + 1])) {
      const release = new OrderedRelease(join(folder, 'journal.jsonl'));
      const done = runMapStage(stage, index, input as StageInput, stageCtx, folder, files, options, checkInput, tally, { release, before: previous, signal: abort.signal, texts }).then(complete);
      release.watch(done);
      done.catch(fail);
      running.push(done);
      previous = done;
      input = { path: files.out, count: (input as StageInput).count, piped: release };
      continue;
    }

    /** A failure of this stage stops the stages still running with it; the first failure is the one reported. */
    const stopAll = async (error: unknown): Promise<never> => {
      fail(error);
      await Promise.allSettled(running);
      throw abort.signal.reason;
    };
    let counts: StageCounts;
    if (stage.kind === 'source') {
      counts = await runSourceStage(stage, { ...stageCtx, llm: tally.watch(stageCtx.llm) }, files, options, index === 0 ? options.limit : undefined);
    } else if (stage.kind === 'scan') {
      // The scan stages after it that need no pass over their input take its records as they come.
      const chain: StageRun[] = [run];
      while (needsNoPass(stages[index + chain.length]) && !existsSync(statsPathOf(index + chain.length))) chain.push(stageRun(index + chain.length));
      const last = index + chain.length === stages.length;
      const onSample = last && chain.at(-1)!.stage.output === Sample ? options.onSample : undefined;
      const chainCounts: StageCounts[] = await runScanChain(chain, input as StageInput, options, { signal: abort.signal, texts }, onSample).catch(stopAll);
      sawEverySample = !!onSample;
      // The stages still running before the chain complete first: stats are kept in stage order.
      await Promise.all(running);
      chain.forEach((member, k) => member.complete(chainCounts[k]));
      index += chain.length - 1;
      running.length = 0;
      previous = Promise.resolve();
      input = { path: chain.at(-1)!.files.out, count: chainCounts.at(-1)!.out };
      continue;
    } else {
      counts = await runMapStage(stage, index, input as StageInput, stageCtx, folder, files, options, checkInput, tally, { before: previous, signal: abort.signal, texts }).catch(stopAll);
    }
    complete(counts);
    running.length = 0;
    previous = Promise.resolve();
    input = { path: files.out, count: counts.out };
  }

  const batchCounts = options.llm.batch?.counts(options.runDir);
  if (batchCounts) reports.batch = batchCounts;
  const last = input?.path;
  // The last stage's output schema already validated its records when it is the Sample schema.
  const validated = stages.at(-1)?.output === Sample;
  const name = options.pipeline.name;
  function* samples(): Generator<Sample> {
    if (!last) return;
    let i = 0;
    for (const value of eachJsonl(last)) {
      const parsed = validated ? { success: true as const, data: value as Sample } : parseRecord(Sample, value);
      if (!parsed.success) throw new Error(`pipeline ${name}: its last stage emitted record ${i} that is not a Sample: ${formatZodError(parsed.error)}`);
      yield parsed.data;
      i++;
    }
  }
  function* rejects(): Generator<Rejection> {
    for (const file of rejectFiles) yield* eachJsonl<Rejection>(file);
  }
  const pruneLast = () => {
    if (options.pruneStageFiles && last) pruneRecords(dirname(last));
  };
  return { samples, rejects, stats, reports, attachments, pruneLast, sawEverySample };
}

function resumeCommandOf(options: RunStagesOptions): string {
  return options.resumeCommand ?? 'toolkiln run <pipeline> --resume <runId>';
}

/** Where each finished record's journal entry is (byte offset and length, and a hash of the record's key), by input index. */
class JournalIndex {
  private starts = new Float64Array(1024).fill(-1);
  private lengths = new Float64Array(1024);
  private keys = new Uint32Array(1024);
  size = 0;

  set(i: number, start: number, length: number, key?: string): void {
    if (i >= this.starts.length) {
      const size = Math.max(i + 1, this.starts.length * 2);
      const starts = new Float64Array(size).fill(-1);
      starts.set(this.starts);
      const lengths = new Float64Array(size);
      lengths.set(this.lengths);
      const keys = new Uint32Array(size);
      keys.set(this.keys);
      [this.starts, this.lengths, this.keys] = [starts, lengths, keys];
    }
    if (this.starts[i] < 0) this.size++;
    this.starts[i] = start;
    this.lengths[i] = length;
    this.keys[i] = key === undefined ? 0 : keyHash(key);
  }

  delete(i: number): void {
    if (i < this.starts.length && this.starts[i] >= 0) {
      this.starts[i] = -1;
      this.size--;
    }
  }

  has(i: number): boolean {
    return i < this.starts.length && this.starts[i] >= 0;
  }

  /** Whether entry `i` was made for the record with `key` (entries of journals that did not record keys are taken as made for it). */
  madeFor(i: number, key: string): boolean {
    return this.keys[i] === 0 || this.keys[i] === keyHash(key);
  }

  /** The entry's line, read from the journal file (valid until the reader's next read). */
  readLine(reader: JournalReader, i: number): Buffer {
    return reader.read(this.starts[i], this.lengths[i]);
  }
}

/**
 * Reads a journal's entries by position through a 1 MiB window: entries are written about in
 * input order, so reading them in input order takes one read(2) per window, not one per entry.
 */
class JournalReader {
  private readonly fd: number;
  private buffer = Buffer.alloc(0);
  /** The window: `filled` bytes of the file from byte `from`. */
  private from = 0;
  private filled = 0;

  constructor(path: string) {
    this.fd = openSync(path, 'r');
  }

  /** `length` bytes at `start` (a view: valid until the next read). */
  read(start: number, length: number): Buffer {
    if (start < this.from || start + length > this.from + this.filled) {
      if (this.buffer.length < length) this.buffer = Buffer.allocUnsafe(Math.max(length, 1 << 20));
      else if (!this.buffer.length) this.buffer = Buffer.allocUnsafe(1 << 20);
      let got = 0;
      for (let n = -1; got < length && n !== 0; got += n) n = readSync(this.fd, this.buffer, got, this.buffer.length - got, start + got);
      if (got < length) throw new Error(`the journal ends before its entry at byte ${start} (${length} bytes)`);
      this.from = start;
      this.filled = got;
    }
    return this.buffer.subarray(start - this.from, start - this.from + length);
  }

  close(): void {
    closeSync(this.fd);
  }
}

/** A non-zero 32-bit FNV-1a hash of a record key (zero means "not recorded"). */
function keyHash(key: string): number {
  let hash = 0x811c9dc5;
  for (let c = 0; c < key.length; c++) hash = Math.imul(hash ^ key.charCodeAt(c), 0x01000193);
  return hash >>> 0 || 1;
}

/**
 * How far a per-record stage may run ahead of the stage taking its records (input records started
 * and not yet taken): what it finishes meanwhile is handed over in memory, not read back from the
 * journal and parsed.
 */
const AHEAD = 256;
/** Finished entries kept in memory for the next stage at most (records in flight when it waits add to AHEAD); beyond, they are read back from the journal. */
const RECENT_ENTRIES = 1024;

/** A finished stage's output file, with its record count. */
interface FileInput {
  path: string;
  count: number;
}

/** A per-record stage's input: a finished stage's file, or (`piped`) the outputs of the per-record stage before it while it runs. */
interface StageInput extends FileInput {
  piped?: OrderedRelease;
}

/** One stage as the run loop runs it: where its files go, the context it sees, and how it completes. */
interface StageRun {
  stage: Stage;
  folder: string;
  files: { out: string; rejects: string };
  statsPath: string;
  stageCtx: StageContext;
  tally: TransportTally;
  /** Its input is parsed against its input schema (the stage before emits another). */
  checkInput: boolean;
  complete: (counts: StageCounts) => void;
}

/** A scan stage that needs no pass over its input (it starts from `begin`, or from nothing): it works on records as they come. */
function needsNoPass(stage: Stage | undefined): stage is ScanStage<unknown, unknown, unknown> {
  return stage?.kind === 'scan' && (!!stage.begin || !stage.collect);
}

/** A stage that can take the records of the per-record stage before it as they finish. */
function takesRecordsAsTheyFinish(stage: Stage | undefined): boolean {
  return stage?.kind === 'map' || needsNoPass(stage);
}

/**
 * The outputs of a per-record stage that is still running, handed to the next stage in the order
 * of its input as soon as every record before them has finished: the next stage's record
 * indexes are then the same as if it read the finished file, so journals and resume work
 * unchanged. Only journal offsets are held; records are read back from the journal when taken.
 */
class OrderedRelease {
  readonly done = new JournalIndex();
  /** The stage's input count, once it has read its whole input. */
  total: number | undefined;
  private failure: { error: unknown } | undefined;
  private wake: (() => void) | undefined;
  /** Entries the next stage has taken. */
  private taken = 0;
  private halted = false;
  private wakeWriter: (() => void) | undefined;
  /**
   * The outputs of entries just finished, handed over in memory (a few: the rest are read back from
   * the journal): the object the stage made and checked, with its line of JSON.
   */
  private readonly recent = new Map<number, readonly StageRecord[]>();
  /** Entries below this index are known to be made for the records now at their index (a resumed run's entries are checked as the stage reaches them). */
  private confirmed = 0;
  /** The stage's journal, once open: what it holds in its buffer is written out before an entry is read back. */
  journal: { flush(): void } | undefined;

  /** The stage has checked its journal entries for its first `count` records. */
  checked(count: number): void {
    this.confirmed = count;
    this.changed();
  }

  constructor(private readonly journalPath: string) {}

  /** Record `i` was journalled with these outputs (made only when they are kept here). */
  finished(i: number, outputs: () => readonly StageRecord[]): void {
    if (this.recent.size < RECENT_ENTRIES) this.recent.set(i, outputs());
    this.changed();
  }

  /** The stage stops starting records (it failed): it no longer waits for room. */
  halt(): void {
    this.halted = true;
    const wakeWriter = this.wakeWriter;
    this.wakeWriter = undefined;
    wakeWriter?.();
  }

  /** A record finished (or the stage ended, or failed): the reader looks again. */
  changed(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  /** Resolves once the stage may start input record `i`: it is not more than AHEAD records ahead of what the next stage took (or the run stops). */
  async room(i: number, signal: AbortSignal): Promise<void> {
    while (i - this.taken >= AHEAD && !signal.aborted && !this.failure && !this.halted) {
      const onAbort = () => this.wakeWriter?.();
      signal.addEventListener('abort', onAbort, { once: true });
      await new Promise<void>((resolve) => (this.wakeWriter = resolve));
      signal.removeEventListener('abort', onAbort);
    }
  }

  ended(total: number): void {
    this.total = total;
    this.confirmed = total;
    this.changed();
  }

  watch(done: Promise<unknown>): void {
    done.catch((error) => {
      this.failure = { error };
      this.changed();
    });
  }

  /** The outputs, in order, as they become available, each with its line of JSON; stops when `signal` aborts. */
  async *records(signal: AbortSignal): AsyncGenerator<StageRecord> {
    const reader = new JournalReader(this.journalPath);
    const onAbort = () => this.changed();
    signal.addEventListener('abort', onAbort);
    try {
      for (let next = 0; ; ) {
        if (this.failure) throw this.failure.error;
        if (signal.aborted) return;
        if (next < this.confirmed && this.done.has(next)) {
          const recent = this.recent.get(next);
          this.recent.delete(next);
          if (recent) yield* recent;
          else {
            this.journal?.flush();
            for (const bytes of outputBytes(this.done.readLine(reader, next)).outputs) yield parsedRecord(bytes.toString('utf8'));
          }
          this.taken = ++next;
          const wakeWriter = this.wakeWriter;
          this.wakeWriter = undefined;
          wakeWriter?.();
          continue;
        }
        if (this.total !== undefined && next >= this.total) return;
        await new Promise<void>((resolve) => (this.wake = resolve));
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      reader.close();
    }
  }
}

async function runMapStage(
  stage: MapStage<unknown, unknown>,
  stageIndex: number,
  input: StageInput,
  ctx: StageContext,
  folder: string,
  files: { out: string; rejects: string },
  options: RunStagesOptions,
  checkInput: boolean,
  tally: TransportTally,
  flow: { release?: OrderedRelease; before: Promise<void>; signal: AbortSignal; texts: JsonTexts },
): Promise<StageCounts> {
  const journalPath = join(folder, 'journal.jsonl');
  // The last entry of a record wins; one whose requests never reached the endpoint is done again.
  const done = flow.release?.done ?? new JournalIndex();
  const journal = Journal.open<JournalEntry>(journalPath, (entry, start, length, line) => {
    if (!isConsistent(entry, line)) return false;
    if (entry.transport) done.delete(entry.i);
    else done.set(entry.i, start, length, entry.k);
  });
  if (flow.release) flow.release.journal = journal;
  // A record taken in memory from the stage before may finish here before that stage's entry is written out.
  journal.writesAfter(() => input.piped?.journal?.flush());
  if (done.size) ctx.log(`resuming: ${done.size} records already done`);
  const count = () => input.piped?.total ?? input.count;
  const progress = new Progress(stage.name, count(), options.progress);
  progress.tick(done.size);
  const concurrency = Math.max(1, Math.min(stage.concurrency ?? Infinity, options.concurrency ?? DEFAULT_RECORDS_IN_FLIGHT));
  const queue = new PQueue({ concurrency });
  const share = options.maxTransportRejects ?? DEFAULT_MAX_TRANSPORT_REJECTS;
  let failure: UserError | undefined;

  // A record the stage returns as it came was checked where it was made: its line is copied.
  const copiesUnchanged = !checkInput && stage.output === stage.input;
  const runOne = async (i: number, { value: raw, text }: StageRecord, batch: BatchRound) => {
    if (stop()) return;
    let key = `#${i}`;
    try {
      const prepared = prepareRecord(stage, raw, i, checkInput);
      key = prepared.key;
      let entry: JournalEntry;
      // Outputs already serialised (by a worker thread, or the input's own line).
      let texts: readonly LineText[] | undefined;
      const onThread = threads && (await threads.run(prepared.record, key));
      if (options.remote) {
        const outcome = await options.remote.run({ stageIndex, stage: stage.name, i, key, raw });
        if (outcome.transport) tally.add(key, outcome.transport);
        entry = { ...outcome.entry, i };
      } else if (onThread) {
        entry = onThread.reject ? { i, reject: onThread.reject } : { i };
        texts = onThread.outputs;
      } else {
        const result = await runRecord(stage.run, prepared.record, recordContext(ctx, key, batch.watch(tally.watch(ctx.llm, key), key)));
        if (batch.deferred(key)) return;
        if (copiesUnchanged && returnsInput(stage, result, raw)) {
          entry = { i, out: [raw] };
          texts = [text];
        } else entry = entryOf(stage, i, key, result, copiesUnchanged ? raw : undefined);
      }
      if (tally.keys.has(key)) entry.transport = true;
      // A result delivered twice (a redelivered job) is journalled once.
      if (done.has(i)) return;
      // Serialised once, here: the journal keeps this text, and `out.jsonl` gets a copy of its bytes.
      const out = entry.out;
      const outputs = texts ?? (out ?? []).map((record) => flow.texts.line(record));
      const { start, length } = appendJournalLine(journal, withoutOutputs(entry, key), outputs);
      done.set(i, start, length, key);
      // The next stage takes the objects made here (a thread's outputs are parsed from their text).
      flow.release?.finished(i, () => outputs.map((output, k) => (out ? { value: out[k], text: output } : parsedRecord(lineString(output)))));
      progress.tick();
      // An endpoint that is down fails every record: stop as soon as that is clear, not after all of them.
      // Piped from a stage still running, the input's count is an estimate until it ends: a stage that fans out sends more.
      const excess = tally.excess(stage.name, Math.max(count(), read), share, resumeCommandOf(options));
      if (excess) {
        failure ??= excess;
        queue.clear();
        flow.release?.halt();
      }
    } catch (error) {
      if (batch.deferred(key)) return;
      failure ??= new UserError(
        `stage ${stage.name} failed on record ${key}: ${fileSystemMessage(error) ?? messageOf(error)} (finished records are kept; fix the cause, then resume with: ${resumeCommandOf(options)})`,
        error instanceof UserError ? error.exitCode : 1,
      );
      queue.clear();
      flow.release?.halt();
    }
  };

  const threads = options.remote ? null : StageThreads.forStage(stage, count(), options.threads, { seed: ctx.seed, config: ctx.config, runDir: ctx.runDir }, ctx.log);
  // Batch mode: a record that waits for a batch answer is not journalled; it runs again once the batch settles.
  const batch = new BatchRound(ctx.llm);
  const stop = () => failure ?? (flow.signal.aborted ? flow.signal.reason : undefined);
  let total = 0;
  /** Input records read so far. */
  let read = 0;
  try {
    for (;;) {
      let i = 0;
      for await (const record of input.piped ? input.piped.records(flow.signal) : eachJsonlLine(input.path)) {
        if (stop()) break;
        read = Math.max(read, i + 1);
        // A journalled entry stands for this record only if it was made for it: records of a stage
        // still running can shift when a resumed run redoes one that could not reach the endpoint.
        if (done.has(i) && !done.madeFor(i, prepareRecord(stage, record.value, i, checkInput).key)) done.delete(i);
        flow.release?.checked(i + 1);
        if (!done.has(i)) {
          // Backpressure: only a few records wait in the queue, so the input is never all in memory;
          // and the stage stays close enough to the next one that its records go over in memory.
          await queue.onSizeLessThan(concurrency);
          await flow.release?.room(i, flow.signal);
          queue.add(runOne.bind(null, i, record, batch));
        }
        i++;
      }
      total = i;
      await queue.onIdle();
      if (failure || !batch.waiting) break;
      await batch.settle({ runDir: options.runDir, stage: stage.name, log: ctx.log, resumeCommand: resumeCommandOf(options) });
    }
  } finally {
    journal.close();
    await threads?.close();
  }
  if (stop()) throw stop();
  flow.release?.ended(total);
  progress.finish();
  // The stage before writes its files first: this stage's rejects quote its input records from them.
  await flow.before;
  return writeInInputOrder(stage, input, journalPath, done, files);
}

/**
 * A stage's `out.jsonl` and `rejects.jsonl`, written side by side in one pass and counted; both
 * appear whole (renamed into place by `commit`) or not at all.
 */
class StageOutputs {
  readonly counts: StageCounts = { in: 0, out: 0, rejected: 0, rejectsByReason: {} };
  private readonly out: JsonlWriter;
  private readonly rejects: JsonlWriter;

  constructor(private readonly files: { out: string; rejects: string }) {
    this.out = new JsonlWriter(`${files.out}.tmp-${process.pid}`);
    this.rejects = new JsonlWriter(`${files.rejects}.tmp-${process.pid}`);
  }

  output(record: unknown): void {
    this.out.write(record);
    this.counts.out++;
  }

  /** A record already serialised as one line of JSON. */
  outputText(text: LineText): void {
    this.out.writeText(text);
    this.counts.out++;
  }

  /** A record as the bytes of its line of JSON. */
  outputBytes(bytes: Uint8Array): void {
    this.out.writeBytes(bytes);
    this.counts.out++;
  }

  reject(rejection: Rejection): void {
    this.rejects.write(rejection);
    this.counts.rejected++;
    this.counts.rejectsByReason[rejection.reason] = (this.counts.rejectsByReason[rejection.reason] ?? 0) + 1;
  }

  /** Writes `fill`'s records, then renames both files into place; on any error removes them. */
  write(fill: (outputs: StageOutputs) => void | Promise<void>): Promise<StageCounts> {
    const close = () => (this.out.close(), this.rejects.close());
    return (async () => {
      try {
        await fill(this);
      } catch (error) {
        close();
        rmSync(this.out.path, { force: true });
        rmSync(this.rejects.path, { force: true });
        throw error;
      }
      close();
      renameSync(this.out.path, this.files.out);
      renameSync(this.rejects.path, this.files.rejects);
      return this.counts;
    })();
  }
}

/**
 * The stage's outputs and rejects, in the order of its input, from the journal entries (one pass):
 * outputs are copied as the bytes the journal holds; an input record is parsed only when it was
 * rejected (its reject quotes it).
 */
function writeInInputOrder(stage: MapStage<unknown, unknown>, input: { path: string }, journalPath: string, done: JournalIndex, files: { out: string; rejects: string }): Promise<StageCounts> {
  const reader = new JournalReader(journalPath);
  return new StageOutputs(files)
    .write((outputs) => {
      let i = 0;
      // An input line is decoded only to be quoted by its reject.
      for (const inputLine of jsonlLines(input.path)) {
        const line = outputBytes(done.readLine(reader, i++));
        outputs.counts.in++;
        for (const bytes of line.outputs) outputs.outputBytes(bytes);
        const rejected = line.entry?.reject;
        if (rejected) {
          const raw = parseJsonLine(inputLine.text(), input.path, inputLine.number);
          outputs.reject(Rejection.parse({ stage: stage.name, ...rejected, recordId: rejected.recordId ?? recordKey(stage, raw), record: raw }));
        }
      }
    })
    .finally(() => reader.close());
}

/** The entry's fields but its outputs, in its order, with the record's key (the fields a journal line leads with); copied key by key, cheaper than an object rest. */
function withoutOutputs(entry: JournalEntry, key: string): Omit<JournalEntry, 'out'> {
  const rest: Record<string, unknown> = {};
  for (const field in entry) if (field !== 'out') rest[field] = entry[field as keyof JournalEntry];
  rest.k = key;
  return rest as Omit<JournalEntry, 'out'>;
}

/** A loading stage: its records written as they are yielded; with `limit`, n of them spread evenly, in a second pass. */
async function runSourceStage(stage: SourceStage<unknown>, ctx: StageContext, files: { out: string; rejects: string }, options: RunStagesOptions, limit: number | undefined): Promise<StageCounts> {
  const progress = new Progress(stage.name, 0, options.progress);
  const all = limit === undefined ? files : { out: `${files.out}.all`, rejects: files.rejects };
  // Batch mode: a load that deferred requests is discarded and run again once the batch settles.
  const batch = new BatchRound(ctx.llm);
  let counts: StageCounts;
  for (;;) {
    const loaded = await new StageOutputs(all)
      .write(async (outputs) => {
        let i = 0;
        for await (const item of await stage.load({ ...ctx, llm: batch.watch(ctx.llm, stage.name) })) {
          if (isReject(item)) {
            const { reject: _flag, ...rest } = item as SourceReject;
            outputs.reject(Rejection.parse({ stage: stage.name, ...rest }));
          } else for (const output of validateOutputs(stage, [item], `record ${i}`)) outputs.output(output);
          i++;
        }
        if (batch.waiting) throw new BatchWaiting();
      })
      .catch((error) => (batch.waiting ? null : Promise.reject(sourceError(stage, error))));
    if (loaded) {
      counts = loaded;
      break;
    }
    await batch.settle({ runDir: options.runDir, stage: stage.name, log: ctx.log, resumeCommand: resumeCommandOf(options) });
  }
  if (limit !== undefined) {
    const total = counts.out;
    const rejected = counts;
    counts = await new StageOutputs({ out: files.out, rejects: `${files.rejects}.none` }).write((outputs) => {
      let i = 0;
      let next = 0;
      for (const line of jsonlLines(all.out)) {
        if (next < Math.min(limit, total) && i === evenlySpacedIndex(next, total, limit)) {
          outputs.outputText(line.text());
          next++;
        }
        i++;
      }
    });
    counts = { ...counts, rejected: rejected.rejected, rejectsByReason: rejected.rejectsByReason };
    rmSync(all.out, { force: true });
    rmSync(`${files.rejects}.none`, { force: true });
  }
  progress.finish(counts.out);
  return { ...counts, in: 0 };
}

/** Thrown to discard a source's pass that left requests waiting for a batch. */
class BatchWaiting extends Error {}

/** A request that failed outside a record stops the load with the gateway's reason. */
function sourceError(stage: Stage, error: unknown): unknown {
  if (!(error instanceof StepRejected)) return error;
  return new UserError(`stage ${stage.name}: a request it makes while loading failed (${error.reason}: ${error.detail}); nothing was published. Check the endpoint and run again (answers received are cached).`, 1);
}

/**
 * Scan stages in a row: the first one's input streamed (from its file, or from the per-record
 * stage before it as its records finish) through `collect` when it has one (under batch mode and
 * transport checks), then record by record through `run`. Each record a stage emits goes straight
 * on to the next stage of the chain, which needs no pass over its input (`begin`); at the end each
 * stage's `finish`, in order, its records going on to the stages after it. Every stage writes its
 * own files, with the same bytes as when run one after the other. `onLastOutput` sees each record
 * the last one writes.
 */
async function runScanChain(chain: StageRun[], input: StageInput, options: RunStagesOptions, { signal, texts }: { signal: AbortSignal; texts: JsonTexts }, onLastOutput?: (sample: Sample) => void): Promise<StageCounts[]> {
  const members = chain.map(({ stage, stageCtx, tally, files, checkInput }) => {
    const scan = stage as ScanStage<unknown, unknown, unknown>;
    const plain = { ...stageCtx, llm: withoutLlm(stageCtx.llm, scan.name) };
    return {
      stage: scan,
      files,
      checkInput,
      plain,
      // A record passed on unchanged was checked where it was made: its line is copied, not validated and written again.
      copyUnchanged: !checkInput && scan.output === scan.input,
      progress: new Progress(scan.name, input.count, options.progress),
      collectCtx: { ...stageCtx, llm: tally.watch(stageCtx.llm) },
      state: undefined as unknown,
    };
  });
  for (const { stage } of members) if (stage.begin && stage.collect) throw new Error(`stage ${stage.name} has both begin and collect: a scan stage starts from one of them`);
  const [first] = members;
  if (first.stage.collect) {
    // Each pass of `collect` over its input reads the file again.
    const passes: Iterable<unknown> = {
      *[Symbol.iterator]() {
        let i = 0;
        for (const { value } of eachJsonlLine(input.path)) yield validateInput(first.stage, value, i++, first.checkInput);
      },
    };
    first.state = await collectState(first.stage, passes, first.collectCtx, options);
  }
  for (const member of members) if (member.stage.begin) member.state = member.stage.begin(member.plain);

  const outputs: StageOutputs[] = [];
  /** Record `raw` (its line of JSON: `text`) through stage `k` and on. */
  const feed = async (k: number, raw: unknown, text: LineText): Promise<void> => {
    if (k === members.length) return;
    const { stage, checkInput, plain, copyUnchanged, state } = members[k];
    const out = outputs[k];
    const record = validateInput(stage, raw, out.counts.in++, checkInput);
    const key = recordKey(stage, record);
    // Object.assign, not a spread with added keys (see recordContext).
    const result = await runRecord(stage.run, record, Object.assign({}, plain, { key, state, rng: (...keys: (string | number)[]) => plain.rng(key, ...keys) }));
    if (copyUnchanged && returnsInput(stage, result, record)) {
      out.outputText(text);
      if (k === members.length - 1) onLastOutput?.(raw as Sample);
      await feed(k + 1, raw, text);
    } else if (isReject(result)) {
      const { reject: _flag, ...reason } = result;
      out.reject(Rejection.parse({ stage: stage.name, ...reason, recordId: reason.recordId ?? key, record: raw }));
    } else {
      const produced = Array.isArray(result) && stage.fanOut ? result : [result];
      if (produced.length > 1 && !stage.fanOut) throw new Error(`stage ${stage.name} emitted ${produced.length} records for one input without declaring fanOut`);
      await emit(k, produced, `record ${key}`, copyUnchanged ? record : undefined);
    }
  };
  /** Stage `k`'s records, each checked and written, then handed to the stages after it as it is (not parsed again from its line). */
  const emit = async (k: number, produced: Iterable<unknown>, where: string, base?: unknown): Promise<void> => {
    for (const made of produced) {
      const [output] = validateOutputs(members[k].stage, [made], where, base);
      const text = texts.line(output);
      outputs[k].outputText(text);
      if (k + 1 < members.length) await feed(k + 1, output, text);
      else onLastOutput?.(output as Sample);
    }
  };
  const records = (): AsyncIterable<StageRecord> | Iterable<StageRecord> => (input.piped ? input.piped.records(signal) : eachJsonlLine(input.path));
  const fill = async () => {
    for await (const { value, text } of records()) await feed(0, value, text);
    for (const [k, { stage, plain, state }] of members.entries()) {
      const finished = await stage.finish?.(state, plain);
      const made = isIterable(finished) ? { out: finished } : finished && typeof finished === 'object' ? (finished as ScanMade<unknown>) : {};
      // Records it makes of its own are taken one at a time: a stage may make them as they are written.
      const noFanOut = () => new Error(`stage ${stage.name} made records of its own in finish without declaring fanOut`);
      const ownRecords = function* (records: Iterable<unknown>) {
        for (const record of records) {
          if (!stage.fanOut) throw noFanOut();
          yield record;
        }
      };
      await emit(k, ownRecords(made.out ?? []), 'finish');
      for (const { reject: _flag, ...rejected } of (made.rejects ?? []) as (RejectReason & { record: unknown; reject?: boolean })[]) {
        if (!stage.fanOut) throw noFanOut();
        outputs[k].reject(Rejection.parse({ stage: stage.name, ...rejected }));
      }
    }
  };
  // Every stage's files appear whole when the chain completes, or not at all.
  const open = async (k: number): Promise<void> => {
    if (k === members.length) return fill();
    await new StageOutputs(members[k].files).write(async (stageOutputs) => {
      outputs.push(stageOutputs);
      await open(k + 1);
    });
  };
  try {
    await open(0);
  } finally {
    // Also when a record or a later stage of the chain threw: what a state holds must not outlive the run.
    for (const { stage, state } of members) if (state !== undefined) await Promise.resolve(stage.dispose?.(state)).catch((error) => members[0].plain.log(`stage ${stage.name}: could not release its state: ${messageOf(error)}`));
  }
  members.forEach((member, k) => member.progress.finish(outputs[k].counts.in));
  return outputs.map((stageOutputs) => stageOutputs.counts);
}

function isIterable(value: unknown): value is Iterable<unknown> {
  return !!value && typeof value === 'object' && typeof (value as Iterable<unknown>)[Symbol.iterator] === 'function';
}

/** A scan stage's state; in batch mode, collected again once the batch its requests went to has settled. */
async function collectState(stage: ScanStage<unknown, unknown, unknown>, records: Iterable<unknown>, ctx: StageContext, options: RunStagesOptions): Promise<unknown> {
  const batch = new BatchRound(ctx.llm);
  for (;;) {
    const state = await Promise.resolve(stage.collect!(records, { ...ctx, llm: batch.watch(ctx.llm, stage.name) })).catch((error) => (batch.waiting ? null : Promise.reject(error)));
    if (!batch.waiting) return state;
    // The pass runs again once the batch settles: what this one's state holds (files kept for later passes) is released first.
    if (state != null) await stage.dispose?.(state);
    await batch.settle({ runDir: options.runDir, stage: stage.name, log: ctx.log, resumeCommand: resumeCommandOf(options) });
  }
}

/** The gateway a scan stage's `run` and `finish` see: its LLM work belongs in `collect`, where batch mode and resume cover it. */
function withoutLlm(llm: LlmGateway, stage: string): LlmGateway {
  const refuse = (): never => {
    throw new Error(`stage ${stage}: a scan stage calls the LLM only in collect (its run and finish are not journalled)`);
  };
  return { backend: llm.backend, model: llm.model, dryRun: llm.dryRun, generate: refuse, embed: refuse, usage: () => llm.usage(), close: () => llm.close() };
}

/**
 * `limit` records spread evenly over the list, in order: a trial run with `--limit` sees every
 * source and split the full run would, not just the first file.
 */
export function evenlySpaced<T>(records: readonly T[], limit: number): T[] {
  if (limit >= records.length) return records.slice();
  return Array.from({ length: limit }, (_, k) => records[evenlySpacedIndex(k, records.length, limit)]);
}

/** The index of the `k`-th of `limit` records spread evenly over `total`. */
function evenlySpacedIndex(k: number, total: number, limit: number): number {
  return limit >= total ? k : Math.floor((k * total) / limit);
}
