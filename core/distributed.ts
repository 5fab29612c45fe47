import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Queue, QueueEvents, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { UserError, messageOf } from './errors.ts';
import type { SharedPermit } from './llm/limiter.ts';
import { emptyUsage, type LlmGateway, type UsageReport } from './llm/types.ts';
import { combineUsage } from './llm/usage.ts';
import type { PipelineDefinition } from './pipeline.ts';
import { Rng } from './rng.ts';
import type { RunSpec } from './run.ts';
import { TransportTally, type RecordJob, type RecordOutcome, type RemoteRecords } from './runner.ts';
import { entryOf, prepareRecord, recordContext } from './stage-records.ts';
import { promptHashes, runRecord, stageContextMethods, type MapStage, type Stage, type StageContext } from './stage.ts';

/** The BullMQ queue every coordinator sends per-record work to and every worker takes it from. */
export const RECORD_QUEUE = 'toolkiln-records';

/** One job: a record of a per-record stage of run `runId`. */
export interface RecordJobData extends RecordJob {
  runId: string;
}

/** A job's result: the record's outcome, and the worker's LLM usage for the run since its last result. */
interface RecordJobResult extends RecordOutcome {
  usage?: UsageReport;
}

/** Where a coordinator leaves a run's spec for workers (they may not share its TOOLKILN_HOME). */
const runSpecKey = (runId: string) => `toolkiln:run:${runId}`;
const RUN_SPEC_TTL_S = 30 * 24 * 3600;

/** One job per run, stage and record: enqueueing it again (a resumed coordinator) finds the same job. */
export function jobIdOf(job: RecordJobData): string {
  // BullMQ job ids may not contain ':'.
  return `${job.runId}/${job.stageIndex}/${job.i}`;
}

/** The URL without its password, for messages. */
export function shownUrl(url: string): string {
  return url.replace(/\/\/([^@/]*)@/, '//***@');
}

/** A connected Redis client, or a UserError saying which server could not be reached. */
export async function connectRedis(url: string, log: (message: string) => void = () => {}): Promise<Redis> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UserError(`--redis takes a URL such as redis://127.0.0.1:6379, not "${url}"`);
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') throw new UserError(`--redis takes a redis:// or rediss:// URL, not "${shownUrl(url)}"`);
  let connected = false;
  // BullMQ's blocking commands need maxRetriesPerRequest: null. Once connected, a lost connection is retried (every second at most).
  const redis = new Redis(url, { maxRetriesPerRequest: null, lazyConnect: true, retryStrategy: (times) => (connected ? Math.min(times * 200, 1000) : null) });
  let lastError = '';
  let lostAt = 0;
  redis.on('error', (error) => {
    if (connected && messageOf(error) !== lastError) log(`redis ${shownUrl(url)}: ${messageOf(error)}`);
    lastError = messageOf(error);
  });
  // Said once per outage, whoever holds the connection (a coordinator, a worker); not when closed on purpose.
  redis.on('reconnecting', () => {
    if (!connected || lostAt) return;
    lostAt = Date.now();
    log(`lost the connection to Redis at ${shownUrl(url)}: reconnecting`);
  });
  redis.on('ready', () => {
    if (!lostAt) return;
    log(`Redis at ${shownUrl(url)} answers again after ${Math.round((Date.now() - lostAt) / 1000)} s`);
    lostAt = 0;
    lastError = '';
  });
  const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no answer within 5 s')), 5000).unref());
  try {
    await Promise.race([redis.connect(), timeout]);
  } catch (error) {
    redis.disconnect();
    throw new UserError(`cannot reach Redis at ${shownUrl(url)} (${lastError || messageOf(error)}): start redis-server there, or check --redis`);
  }
  connected = true;
  return redis;
}

/** How long a coordinator waits for a lost Redis to return before it stops the run (`--redis-wait`). */
export const DEFAULT_REDIS_WAIT_MS = 60_000;

export interface CoordinatorOptions {
  /** Stop the run when Redis has been unreachable this long (default `DEFAULT_REDIS_WAIT_MS`). */
  maxDownMs?: number;
  /** How often the connection and the run's keys are checked (default 2 s). */
  checkEveryMs?: number;
}

/** A record sent to the workers, waiting for its outcome. */
interface WaitingJob {
  data: RecordJobData;
  resolve: (result: RecordJobResult) => void;
  reject: (error: unknown) => void;
}

/**
 * The coordinator's side: each record of a per-record stage becomes a job; its outcome comes back
 * through BullMQ's queue events and is then removed from Redis (the run's journal holds it). The
 * coordinator keeps every record in flight until its outcome is in, so a Redis that goes away is
 * survived: when it answers again, the run's spec and the jobs it no longer holds (restarted empty)
 * are sent again, and outcomes that came while no event could arrive are read from the jobs. A Redis
 * that stays away longer than `maxDownMs` stops the run (its records in flight fail with the reason).
 */
export class Coordinator {
  private readonly waiting = new Map<string, WaitingJob>();
  /** Each run's spec as sent to Redis, sent again when Redis lost it. */
  private readonly specs = new Map<string, string>();
  private downSince = 0;
  private lost: UserError | null = null;
  private giveUpNow: () => void = () => {};
  /** Resolves when the coordinator gives up on Redis. */
  private readonly givenUp = new Promise<void>((resolve) => (this.giveUpNow = resolve));
  private resumeCommand = 'toolkiln run <pipeline> --resume <runId>';
  private checking = false;
  private readonly timer: NodeJS.Timeout;
  private readonly maxDownMs: number;

  private constructor(
    private readonly redis: Redis,
    private readonly queue: Queue,
    private readonly events: QueueEvents,
    private readonly eventsConnection: Redis,
    private readonly url: string,
    private readonly log: (message: string) => void,
    options: CoordinatorOptions,
  ) {
    this.maxDownMs = options.maxDownMs ?? DEFAULT_REDIS_WAIT_MS;
    // The main connection says what goes wrong with Redis, once; the queue's and the events' errors are the same.
    const quiet = () => {};
    queue.on('error', quiet);
    events.on('error', quiet);
    eventsConnection.on('error', quiet);
    events.on('completed', ({ jobId, returnvalue }) => this.settle(jobId, { value: returnvalue }));
    events.on('failed', ({ jobId, failedReason }) => this.settle(jobId, { error: new Error(failedReason) }));
    redis.on('reconnecting', () => {
      if (this.downSince || this.lost) return;
      this.downSince = Date.now();
      if (this.waiting.size) this.log(`${this.waiting.size} records in flight wait for Redis; the run stops if it is not back within ${Math.round(this.maxDownMs / 1000)} s (--redis-wait)`);
    });
    redis.on('ready', () => {
      if (!this.downSince) return;
      this.downSince = 0;
      void this.recover();
    });
    this.timer = setInterval(() => void this.check(), options.checkEveryMs ?? 2000);
    this.timer.unref();
  }

  static async open(url: string, log: (message: string) => void = () => {}, options: CoordinatorOptions = {}): Promise<Coordinator> {
    const redis = await connectRedis(url, log);
    const queue = new Queue(RECORD_QUEUE, { connection: redis });
    const eventsConnection = redis.duplicate();
    const events = new QueueEvents(RECORD_QUEUE, { connection: eventsConnection });
    await events.waitUntilReady();
    return new Coordinator(redis, queue, events, eventsConnection, url, log, options);
  }

  /**
   * The rate budget this coordinator's own requests share with the workers. Its requests wait for
   * Redis like the records do, and fail with the run's resume command when the coordinator gives up.
   */
  sharedRate(scope: string): SharedPermit {
    const permit = sharedRateLimit(this.redis, scope);
    return (request) => (this.lost ? Promise.reject(this.stopped()) : Promise.race([permit(request), this.givenUp.then(() => Promise.reject(this.stopped()))]));
  }

  /** Why the run stops, with its resume command (said where no record's failure carries it). */
  private stopped(): UserError {
    return new UserError(`${this.lost!.message}; then resume with: ${this.resumeCommand}`, 1);
  }

  /** Records of run `runId` go to the workers, which read the run's spec from Redis. */
  async forRun(runId: string, spec: RunSpec): Promise<RemoteRecords> {
    this.specs.set(runId, JSON.stringify(spec));
    this.resumeCommand = `toolkiln run ${spec.pipeline} --resume ${runId}`;
    await this.redis.set(runSpecKey(runId), this.specs.get(runId)!, 'EX', RUN_SPEC_TTL_S);
    const workers = await this.queue.getWorkersCount();
    this.log(workers ? `${workers} worker${workers > 1 ? 's' : ''} connected to ${shownUrl(this.url)}` : `no worker is connected to ${shownUrl(this.url)} yet: records wait in the queue until one starts (toolkiln worker --redis <url>)`);
    let usage: UsageReport = { total: emptyUsage(), byStage: {}, byModel: {} };
    return {
      run: async (job) => {
        const outcome = await this.runJob({ ...job, runId });
        if (outcome.usage) usage = combineUsage(usage, outcome.usage);
        return outcome;
      },
      usage: () => usage,
    };
  }

  private async runJob(data: RecordJobData): Promise<RecordJobResult> {
    if (this.lost) throw this.lost;
    const id = jobIdOf(data);
    const outcome = new Promise<RecordJobResult>((resolve, reject) => this.waiting.set(id, { data, resolve, reject }));
    // Not awaited: while Redis is away the command waits for it, and the outcome may come (or fail) first.
    this.enqueue(data).catch((error) => this.settle(id, { error }));
    try {
      return await outcome;
    } finally {
      // Its outcome is journalled by the caller; a run resumed later enqueues it afresh.
      this.queue.remove(id).catch(() => {});
    }
  }

  /** Adds the job (the same id finds the job already there); an outcome it already has is taken. */
  private async enqueue(data: RecordJobData): Promise<void> {
    const id = jobIdOf(data);
    await this.queue.add(data.stage, data, { jobId: id });
    const state = await this.queue.getJobState(id);
    // A job that failed under an earlier coordinator of this run is tried again, not reported again.
    if (state === 'failed') await (await this.queue.getJob(id))?.retry('failed');
    else if (state === 'completed') await this.takeResult(id, state);
  }

  /** The outcome of a job that ended (read after its state: read before, it could predate the outcome). */
  private async takeResult(id: string, state: 'completed' | 'failed'): Promise<void> {
    const job = await this.queue.getJob(id);
    if (!job) return; // removed meanwhile: its event settled it
    this.settle(id, state === 'completed' ? { value: job.returnvalue } : { error: new Error(job.failedReason) });
  }

  private settle(jobId: string, outcome: { value: unknown } | { error: unknown }): void {
    const waiting = this.waiting.get(jobId);
    if (!waiting) return;
    this.waiting.delete(jobId);
    if ('error' in outcome) waiting.reject(outcome.error);
    else waiting.resolve((typeof outcome.value === 'string' ? JSON.parse(outcome.value) : outcome.value) as RecordJobResult);
  }

  /** Every few seconds: stop after too long without Redis; notice a Redis that lost the run's keys without dropping the connection. */
  private async check(): Promise<void> {
    if (this.lost || this.checking) return;
    if (this.downSince) {
      const away = Date.now() - this.downSince;
      if (away < this.maxDownMs) return;
      return this.giveUp(
        new UserError(`Redis at ${shownUrl(this.url)} has been unreachable for ${Math.round(away / 1000)} s (--redis-wait ${Math.round(this.maxDownMs / 1000)}), with ${this.waiting.size} records in flight; start redis-server there again`, 1),
      );
    }
    if (!this.specs.size || this.redis.status !== 'ready') return;
    this.checking = true;
    try {
      const present = await this.redis.exists(...[...this.specs.keys()].map(runSpecKey));
      if (present < this.specs.size) await this.recover();
    } catch {
      // The connection's own events say what went wrong.
    } finally {
      this.checking = false;
    }
  }

  /**
   * Redis answers again: the runs' specs and the jobs in flight that it no longer holds are sent
   * again (what the run's journal lacks is exactly what is in flight); outcomes it holds are taken.
   */
  private async recover(): Promise<void> {
    try {
      const lostSpecs = [];
      for (const [runId, spec] of this.specs) {
        if (await this.redis.set(runSpecKey(runId), spec, 'EX', RUN_SPEC_TTL_S, 'NX')) lostSpecs.push(runId);
      }
      let sent = 0;
      for (const [id, { data }] of [...this.waiting]) {
        if (await this.queue.getJob(id)) continue;
        sent++;
        this.enqueue(data).catch((error) => this.settle(id, { error }));
      }
      if (lostSpecs.length || sent) this.log(`Redis at ${shownUrl(this.url)} lost the run's queue (restarted empty, or flushed): sent ${sent} record${sent === 1 ? '' : 's'} in flight again`);
      // Outcomes that came while no event could arrive.
      for (const [id] of [...this.waiting]) {
        const state = await this.queue.getJobState(id);
        if (state === 'completed' || state === 'failed') await this.takeResult(id, state);
      }
    } catch (error) {
      this.log(`redis ${shownUrl(this.url)}: could not check the jobs in flight (${messageOf(error)}); checking again`);
    }
  }

  /** Fails every record in flight (the run stops with the reason and its resume command) and refuses new ones. */
  private giveUp(error: UserError): void {
    this.lost = error;
    this.giveUpNow();
    this.log(error.message);
    for (const id of [...this.waiting.keys()]) this.settle(id, { error });
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    // With Redis away, closing cleanly would wait for it: a few seconds, then the connections are dropped.
    const closed = Promise.allSettled([this.events.close(), this.queue.close()]);
    await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, this.redis.status === 'ready' ? 10_000 : 1000).unref())]);
    this.redis.disconnect();
    this.eventsConnection.disconnect();
  }
}

export interface RecordWorkerOptions {
  redisUrl: string;
  /** TOOLKILN_HOME: stages that read the run folder (`ctx.runDir`) need the coordinator's. */
  home: string;
  /** Jobs worked on at once. */
  concurrency: number;
  pipelineOf: (name: string) => PipelineDefinition;
  /** The gateway for a run's backend, model and seed; `sharedPermit` keeps rpm / tpm global. */
  gatewayFor: (spec: RunSpec, sharedPermit: SharedPermit) => LlmGateway;
  resolvePath: (path: string) => string;
  /** How long a job stays locked to this worker without renewal (default 30 s): a killed worker's jobs go to another after it. */
  lockDurationMs?: number;
  log?: (message: string) => void;
}

interface WorkerRun {
  spec: RunSpec;
  stages: Stage[];
  /** The run's own gateway, so that its usage is the run's. */
  llm: LlmGateway;
  /** Usage already sent back with a result. */
  reported: UsageReport;
  /** Jobs of the run in hand. */
  inHand: number;
}

/** Runs a worker keeps (spec, stages, gateway) once it has no job of them in hand. */
const IDLE_RUNS_KEPT = 4;

/** The rate scope requests of a model share across processes. */
export function rateScope(model: string): string {
  return `model:${model}`;
}

/** A worker: takes per-record jobs of any run from the queue, runs the stage on the record, returns the journal entry. */
export class RecordWorker {
  private readonly runs = new Map<string, Promise<WorkerRun>>();
  /** The runs of `runs` that are loaded, oldest first. */
  private readonly loaded = new Map<string, WorkerRun>();
  private readonly worker: Worker;
  private readonly log: (message: string) => void;
  processed = 0;

  private constructor(
    private readonly options: RecordWorkerOptions,
    private readonly redis: Redis,
  ) {
    this.log = options.log ?? (() => {});
    const lockDuration = options.lockDurationMs ?? 30_000;
    this.worker = new Worker(RECORD_QUEUE, (job: Job<RecordJobData>) => this.process(job.data), {
      connection: redis,
      concurrency: options.concurrency,
      lockDuration,
      stalledInterval: lockDuration,
      // A job whose worker died is taken up again this many times before it fails.
      maxStalledCount: 5,
    });
    this.worker.on('failed', (job, error) => this.log(`job ${job?.id}: ${messageOf(error)}`));
    let lastError = '';
    this.worker.on('error', (error) => {
      // A result for a job Redis no longer holds (restarted empty, or flushed while the job ran).
      const dropped = /^Missing (?:lock|key) for job (\S+)\. moveToFinished/.exec(messageOf(error));
      const message = dropped ? `job ${dropped[1]}: Redis no longer holds it (restarted or flushed), so its result is dropped; its coordinator sends it again` : `worker: ${messageOf(error)}`;
      // Retried connections fail with the same error every second: said once.
      if (message !== lastError) this.log(message);
      lastError = message;
    });
    redis.on('ready', () => (lastError = ''));
  }

  static async start(options: RecordWorkerOptions): Promise<RecordWorker> {
    const worker = new RecordWorker(options, await connectRedis(options.redisUrl, options.log));
    await worker.worker.waitUntilReady();
    return worker;
  }

  private async process(job: RecordJobData): Promise<RecordJobResult> {
    const run = await this.runOf(job.runId);
    run.inHand++;
    try {
      return await this.processIn(run, job);
    } finally {
      run.inHand--;
    }
  }

  private async processIn(run: WorkerRun, job: RecordJobData): Promise<RecordJobResult> {
    const stage = run.stages[job.stageIndex];
    if (!stage || stage.kind !== 'map' || stage.name !== job.stage) {
      throw new Error(`run ${job.runId}: stage ${job.stageIndex + 1} of the ${run.spec.pipeline} recipe on this worker is ${stage ? stage.name : 'missing'}, not the per-record stage ${job.stage}: run the same toolkiln version on every machine`);
    }
    const mapStage = stage as MapStage<unknown, unknown>;
    const checkInput = job.stageIndex > 0 && run.stages[job.stageIndex - 1].output !== stage.input;
    const { record, key } = prepareRecord(mapStage, job.raw, job.i, checkInput);
    const tally = new TransportTally();
    const result = await runRecord(mapStage.run, record, recordContext(this.stageContext(job.runId, run, stage), key, tally.watch(run.llm, key)));
    const entry = entryOf(mapStage, job.i, key, result);
    this.processed++;
    // Requests of records still in hand go with a later result; every request is counted once.
    const usage = run.llm.usage();
    const delta = combineUsage(usage, run.reported, -1);
    run.reported = usage;
    return { entry, transport: Object.keys(tally.byReason)[0], usage: delta };
  }

  private stageContext(runId: string, run: WorkerRun, stage: Stage): StageContext {
    const unavailable = (what: string) => () => {
      throw new Error(`stage ${stage.name}: ${what} is not available to a per-record stage run by a worker`);
    };
    return {
      ...stageContextMethods,
      stage: { name: stage.name, version: stage.version, prompts: stage.prompts },
      seed: run.spec.seed,
      rng: (...keys) => Rng.derive(run.spec.seed, stage.name, ...keys),
      llm: run.llm,
      config: run.spec.config,
      runDir: join(this.options.home, '.toolkiln', 'runs', runId),
      resolvePath: this.options.resolvePath,
      log: (message) => this.log(`[${stage.name}] ${message}`),
      report: unavailable('ctx.report'),
      reported: unavailable('ctx.reported'),
      attach: unavailable('ctx.attach'),
    };
  }

  /** The run's spec (from Redis), its stages as this worker builds them, and a gateway for it; once per run. */
  private runOf(runId: string): Promise<WorkerRun> {
    let run = this.runs.get(runId);
    if (!run) {
      run = this.loadRun(runId);
      this.runs.set(runId, run);
      run.then(
        (loaded) => this.loaded.set(runId, loaded),
        () => this.runs.delete(runId),
      );
    }
    return run;
  }

  private async loadRun(runId: string): Promise<WorkerRun> {
    const text = await this.redis.get(runSpecKey(runId));
    if (!text) throw new Error(`run ${runId}: its spec is not in Redis (${runSpecKey(runId)}); resume the run to send it again`);
    const spec = JSON.parse(text) as RunSpec;
    const pipeline = this.options.pipelineOf(spec.pipeline);
    const stages = pipeline.stages(spec.config);
    const here = stages.map((s) => `${s.name}@${s.version}`).join(', ');
    const there = (spec.inputs?.stages ?? []).map(([name, version]) => `${name}@${version}`).join(', ');
    if (here !== there) throw new Error(`run ${runId} has stages ${there}, this worker's ${spec.pipeline} recipe has ${here}: run the same toolkiln version on every machine`);
    const prompts = promptHashes(stages);
    for (const [id, hash] of Object.entries(spec.inputs?.prompts ?? {})) {
      if (prompts[id] !== hash) throw new Error(`run ${runId}: prompt ${id} differs on this worker: run the same toolkiln version on every machine`);
    }
    await this.forgetIdleRuns();
    const llm = this.options.gatewayFor(spec, sharedRateLimit(this.redis, rateScope(spec.model)));
    this.log(`run ${runId}: ${spec.pipeline}, ${spec.backend} ${spec.model}, seed ${spec.seed}`);
    return { spec, stages, llm, reported: llm.usage(), inHand: 0 };
  }

  /** Closes the gateways of the oldest runs with no job in hand, keeping a few (a long-lived worker serves many runs). */
  private async forgetIdleRuns(): Promise<void> {
    const idle = [...this.loaded].filter(([, run]) => run.inHand === 0);
    for (const [runId, run] of idle.slice(0, Math.max(0, idle.length - IDLE_RUNS_KEPT))) {
      this.runs.delete(runId);
      this.loaded.delete(runId);
      await run.llm.close();
    }
  }

  /** Stops taking jobs, lets the ones in hand finish, and disconnects. */
  async close(): Promise<void> {
    await this.worker.close();
    await Promise.allSettled(this.runs.values());
    await Promise.all([...this.loaded.values()].map((run) => run.llm.close()));
    this.redis.disconnect();
  }

  /** Stops at once, leaving jobs in hand to other workers once their locks expire (as if killed). */
  async abandon(): Promise<void> {
    await this.worker.close(true);
    this.redis.disconnect();
  }
}

/**
 * A sliding-window rate budget in Redis, kept by one Lua script (atomic, on the Redis server's
 * clock): a request may start when fewer than `rpm` starts and, with `tpm`, fewer than `tpm`
 * estimated tokens fall in the last `span` ms. Members are `<id>/<tokens>`, scored by start time.
 */
const PERMIT_SCRIPT = `
local starts, spentKey = KEYS[1], KEYS[2]
local span, rpm, tpm, tokens, id = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local expired = redis.call('ZRANGEBYSCORE', starts, '-inf', now - span)
if #expired > 0 then
  local freed = 0
  for _, member in ipairs(expired) do freed = freed + tonumber(string.match(member, '/(%d+)$')) end
  redis.call('ZREMRANGEBYSCORE', starts, '-inf', now - span)
  redis.call('DECRBY', spentKey, freed)
end
local count = redis.call('ZCARD', starts)
local wait = 0
if rpm > 0 and count >= rpm then
  local oldest = redis.call('ZRANGE', starts, count - rpm, count - rpm, 'WITHSCORES')
  wait = tonumber(oldest[2]) + span - now
end
if tpm > 0 then
  local spent = tonumber(redis.call('GET', spentKey) or '0')
  local over = spent + tokens - tpm
  if spent > 0 and over > 0 then
    local members = redis.call('ZRANGE', starts, 0, -1, 'WITHSCORES')
    local free = nil
    for k = 1, #members, 2 do
      over = over - tonumber(string.match(members[k], '/(%d+)$'))
      free = tonumber(members[k + 1]) + span - now
      if over <= 0 then break end
    end
    if free and free > wait then wait = free end
  end
end
if wait > 0 then return wait end
redis.call('ZADD', starts, now, id .. '/' .. tokens)
redis.call('INCRBY', spentKey, tokens)
redis.call('PEXPIRE', starts, span * 2)
redis.call('PEXPIRE', spentKey, span * 2)
return 0
`;

/** A limiter's permit function backed by the budget `scope` in Redis, shared by every process that uses the same scope. */
export function sharedRateLimit(redis: Redis, scope: string): SharedPermit {
  const keys = [`toolkiln:rate:${scope}:starts`, `toolkiln:rate:${scope}:spent`];
  const me = randomBytes(6).toString('hex');
  let n = 0;
  return async ({ tokens, rpm, tpm, spanMs }) =>
    Number(await redis.eval(PERMIT_SCRIPT, 2, keys[0], keys[1], Math.ceil(spanMs), rpm ?? 0, tpm ?? 0, Math.max(0, Math.ceil(tokens)), `${me}.${n++}`));
}
