import { availableParallelism } from 'node:os';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { UserError } from './errors.ts';
import type { JournalEntry } from './journal-line.ts';
import type { MapStage } from './stage.ts';

/**
 * Worker threads for the per-record stages whose work is pure computation (`MapStage.threads`),
 * so that parsing and checking do not hold the thread that sends and receives the LLM requests.
 * Each thread makes the stage again from its module (see stage-thread.ts) and sends back the
 * record's outcome with its outputs already checked and serialised: the main thread only
 * journals them. A stage's results do not depend on where a record ran.
 */

/** How many threads, and from how many input records they are worth starting. */
export interface StageThreadsOptions {
  /** Threads per stage; 0: none. Default: the cores but one, at most 4. */
  count?: number;
  /** A thread takes about a second to start (loading the stage's modules): a smaller input is done sooner on the main thread. Default 500. */
  from?: number;
}

export const DEFAULT_THREADS_FROM = 500;

export function defaultThreadCount(): number {
  return Math.max(0, Math.min(4, availableParallelism() - 1));
}

/** What a thread sends back for one record: its reject, or its outputs as lines of JSON. */
export interface ThreadOutcome {
  reject?: JournalEntry['reject'];
  outputs?: string[];
}

/** What the thread of a stage is started with (`workerData`). */
export interface StageThreadData {
  module: string;
  factory: string;
  options: unknown;
  name: string;
  version: number;
  seed: number;
  config: unknown;
  runDir: string;
}

/** An error thrown on a thread, as sent back: its message, and the exit code when it was a UserError. */
export interface ThreadError {
  message: string;
  userExitCode?: number;
}

type Message = { id: number; outcome?: ThreadOutcome; error?: ThreadError } | { ready: true } | { log: string } | { failed: string };

interface Slot {
  worker: Worker;
  inFlight: number;
}

/** The threads of one stage, for one run of it. */
export class StageThreads {
  private readonly slots: Slot[] = [];
  /** Every thread started, ready or not: all are stopped on close. */
  private readonly workers: Worker[] = [];
  private readonly pending = new Map<number, { resolve: (outcome: ThreadOutcome) => void; reject: (error: Error) => void }>();
  private nextId = 0;
  private failure: Error | undefined;
  /** Settles once every thread has started or failed to. */
  private readonly started: Promise<void>;

  private constructor(
    stage: MapStage<unknown, unknown>,
    count: number,
    data: Omit<StageThreadData, 'module' | 'factory' | 'options' | 'name' | 'version'>,
    log: (message: string) => void,
  ) {
    const workerData = { ...stage.threads!, name: stage.name, version: stage.version, ...data, entry: ENTRY, loader: LOADER } satisfies StageThreadData & { entry: string; loader: string | null };
    const starts: Promise<void>[] = [];
    for (let n = 0; n < count; n++) {
      const worker = new Worker(BOOTSTRAP, { eval: true, workerData });
      this.workers.push(worker);
      const slot: Slot = { worker, inFlight: 0 };
      let started!: () => void;
      starts.push(new Promise<void>((resolve) => (started = resolve)));
      worker.on('message', (message: Message) => {
        if ('ready' in message) {
          this.slots.push(slot);
          started();
        } else if ('log' in message) log(message.log);
        else if ('failed' in message) {
          log(`its worker thread could not start (${message.failed.split('\n')[0]}); records run on the main thread`);
          started();
          void worker.terminate();
        } else {
          slot.inFlight--;
          const waiting = this.pending.get(message.id);
          this.pending.delete(message.id);
          // Rebuilt as the thread threw it, so a record fails the same way wherever it ran.
          if (message.error !== undefined) waiting?.reject(message.error.userExitCode === undefined ? new Error(message.error.message) : new UserError(message.error.message, message.error.userExitCode));
          else waiting?.resolve(message.outcome!);
        }
      });
      worker.on('error', (error) => (started(), this.fail(new Error(`stage ${stage.name}: its worker thread failed: ${error.message}`))));
      worker.on('exit', (code) => {
        started();
        if (this.slots.includes(slot) && code !== 0) this.fail(new Error(`stage ${stage.name}: its worker thread stopped (exit code ${code})`));
      });
    }
    this.started = Promise.all(starts).then(() => {});
  }

  /** Threads for `stage` when it declares them, the options allow them and its input is large enough; else null. */
  static forStage(
    stage: MapStage<unknown, unknown>,
    inputCount: number,
    options: StageThreadsOptions | undefined,
    data: Omit<StageThreadData, 'module' | 'factory' | 'options' | 'name' | 'version'>,
    log: (message: string) => void,
  ): StageThreads | null {
    const count = options?.count ?? defaultThreadCount();
    if (!stage.threads || count <= 0 || inputCount < (options?.from ?? DEFAULT_THREADS_FROM)) return null;
    return new StageThreads(stage, count, data, log);
  }

  /**
   * The record's outcome from the least busy thread, once the threads have started (records wait
   * for them: the LLM stages before keep the endpoint busy meanwhile); null when none could start
   * (run it here).
   */
  async run(record: unknown, key: string): Promise<ThreadOutcome | null> {
    await this.started;
    if (this.failure) throw this.failure;
    const slot = this.slots.reduce<Slot | undefined>((best, s) => (!best || s.inFlight < best.inFlight ? s : best), undefined);
    if (!slot) return null;
    const id = this.nextId++;
    slot.inFlight++;
    return new Promise<ThreadOutcome>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      slot.worker.postMessage({ id, record, key });
    });
  }

  private fail(error: Error): void {
    this.failure ??= error;
    for (const waiting of this.pending.values()) waiting.reject(this.failure);
    this.pending.clear();
  }

  /** Stops every thread, also one still starting (a stage stopped early must not leave one holding the process). */
  async close(): Promise<void> {
    this.slots.splice(0);
    await Promise.all(this.workers.splice(0).map((worker) => worker.terminate()));
  }
}

/**
 * The thread's first code (CommonJS, as `eval` workers are). The thread runs what this process runs:
 * the compiled JavaScript (bin/compile.js) as it is, the TypeScript through tsx's loader registered
 * in the thread, as bin/toolkiln.js does for the process.
 */
const BOOTSTRAP = `
const { workerData, parentPort } = require('node:worker_threads');
(workerData.loader ? import(workerData.loader).then(({ register }) => register()) : Promise.resolve())
  .then(() => import(workerData.entry))
  .catch((error) => parentPort.postMessage({ failed: String(error && error.stack || error) }));
`;
const COMPILED = import.meta.url.endsWith('.js');
const LOADER = COMPILED ? null : pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api').replace(/\.cjs$/, '.mjs')).href;
const ENTRY = new URL(COMPILED ? './stage-thread.js' : './stage-thread.ts', import.meta.url).href;
