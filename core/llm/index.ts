import { join, resolve } from 'node:path';
import { UserError } from '../errors.ts';
import { BatchController, type BatchOptions } from './batch.ts';
import { loadBatchResults } from './batch-jsonl.ts';
import { ResponseCache } from './cache.ts';
import { DryRunGateway } from './dryrun.ts';
import { CachedGateway } from './gateway.ts';
import { RequestLimiter, type LimiterOptions } from './limiter.ts';
import { OfflineGateway } from './offline.ts';
import { OpenAiTransport } from './openai.ts';
import { loadPriceTable, type PriceTable } from './pricing.ts';
import type { ChatCacheEntry } from './request.ts';
import { keyMasker, redactor } from './secrets.ts';
import type { Backend, LlmGateway } from './types.ts';
import { UsageMeter } from './usage.ts';
import { DEFAULT_SEED } from '../seed.ts';

export type { Backend, BatchCounts, EmbedOptions, FailureReason, GenerateOptions, GenerateResult, LlmGateway, UsageReport } from './types.ts';
export { ReplayMissError } from './gateway.ts';
export { BatchFileWritten, formatBatchCounts, type BatchOptions } from './batch.ts';
export { formatUsage } from './usage.ts';
export { DEFAULT_PRICE_TABLE_PATH, type PriceTable } from './pricing.ts';

export const BACKENDS: readonly Backend[] = ['offline', 'openai', 'replay'];
export const DEFAULT_OPENAI_MODEL = 'gpt-4o-mini';
export const DEFAULT_EMBEDDING_MODEL = 'text-embedding-3-small';
/** Requests in flight at once, and retries of one request, unless set. */
export const DEFAULT_CONCURRENCY = 8;
export const DEFAULT_MAX_RETRIES = 6;

export interface GatewayOptions {
  /** Default: `openai` when OPENAI_API_KEY or OPENAI_BASE_URL is set (or for a dry run), else `offline`. */
  backend?: Backend | string;
  /** Chat model. Default: TOOLKILN_MODEL; for OpenAI itself gpt-4o-mini; for replay the one model in the cache. */
  model?: string;
  /** Default: TOOLKILN_EMBEDDING_MODEL, else text-embedding-3-small. */
  embeddingModel?: string;
  /** The run seed: seeds offline renderings and the per-record `seed` sent with each request. */
  seed?: number;
  /** TOOLKILN_HOME; default: env TOOLKILN_HOME, else the current folder. */
  home?: string;
  /** Default `<home>/.toolkiln/cache` (chat and embedding answers go to its `llm/` folder). */
  cacheDir?: string;
  /** Neither read nor write the cache. */
  noCache?: boolean;
  /** Requests in flight at once (default 8). */
  concurrency?: number;
  /** Requests per minute (default: no limit). */
  rpm?: number;
  /** Tokens per minute (default: no limit). */
  tpm?: number;
  /** Retries of one request after 429 / 5xx / timeout / reset / unreadable body (default 6). */
  maxRetries?: number;
  /** Per attempt, covering the whole answer (default 120,000 ms). */
  requestTimeoutMs?: number;
  /** Cap on one wait, including a server's Retry-After (default 60,000 ms). */
  maxRetryWaitMs?: number;
  /** First backoff step (default 1,000 ms; doubles per attempt, with jitter). */
  retryBaseMs?: number;
  /** Follow-up requests sending a failed answer's errors back (default 2). */
  maxRepairs?: number;
  /** Largest max_tokens a truncated answer is retried with (default 16,384). */
  maxTokensCap?: number;
  /** A price table file or object, merged over the shipped one and `<home>/.toolkiln/prices.json`. */
  priceTable?: string | PriceTable;
  /** Where OPENAI_API_KEY, OPENAI_BASE_URL, TOOLKILN_MODEL, TOOLKILN_HOME are read (default process.env). */
  env?: Record<string, string | undefined>;
  /** Progress notes (rate limiting, retries, fallbacks, skipped cache lines); the API key is masked. */
  log?: (message: string) => void;
  /** Send nothing: answer with offline renderings and report the estimate in `usage()`. */
  dryRun?: boolean;
  /** Replay backend: a miss is a reject `replay_miss` (default) or a thrown ReplayMissError. */
  replayMiss?: 'reject' | 'throw';
  /** The window of rpm/tpm (default 60,000 ms); only tests and benchmarks shrink it. */
  rateWindowMs?: number;
  /** Added to the rate window so that jitter between the limiter's decision and the endpoint cannot exceed a limit (default: a 120th of the window). */
  rateWindowMarginMs?: number;
  /** Told of every request the rate limiter lets start (tests check the limits against these). */
  onRequestStart?: LimiterOptions['onStart'];
  /** A rate budget shared with other processes (workers): rpm / tpm then hold across all of them. */
  sharedPermit?: LimiterOptions['sharedPermit'];
  /** Texts per embeddings request (default 128). */
  embedBatchSize?: number;
  /**
   * Batch mode (openai backend): cache misses are collected per stage and sent through the Batch
   * API (`mode: 'openai'`), or written to a file for `vllm run-batch` (`mode: 'file'`).
   */
  batch?: BatchOptions;
  /** A batch output file (`vllm run-batch -o`, or a provider's) whose answers are loaded into the cache first. */
  batchResults?: string;
}

/** Picks and builds the backend. Throws a UserError for settings that cannot work. */
export function createGateway(options: GatewayOptions = {}): LlmGateway {
  const env = options.env ?? process.env;
  const redact = redactor(env.OPENAI_API_KEY);
  const log = (message: string) => options.log?.(redact(message));
  const seed = options.seed ?? DEFAULT_SEED;
  const backend = resolveBackend(options, env);
  if ((options.batch || options.batchResults) && (backend !== 'openai' || options.dryRun || options.noCache)) {
    throw new UserError('--batch, --batch-file and --batch-results work with --llm openai and the response cache (not with --dry-run or --no-cache)');
  }
  if (backend === 'offline') return new OfflineGateway(seed);

  if (backend === 'openai' && !options.dryRun && options.batch?.mode !== 'file' && !env.OPENAI_API_KEY && !env.OPENAI_BASE_URL) {
    throw new UserError('--llm openai needs an endpoint: set OPENAI_API_KEY (for OpenAI) or OPENAI_BASE_URL (for another OpenAI-compatible server), or use --llm offline');
  }
  const home = options.home ?? env.TOOLKILN_HOME ?? process.cwd();
  const cacheDir = resolve(options.cacheDir ?? join(home, '.toolkiln', 'cache'));
  if (backend === 'replay' && options.noCache) throw new UserError('--llm replay answers only from the cache, so it cannot be combined with --no-cache');
  const cache = options.noCache ? null : ResponseCache.open(join(cacheDir, 'llm'), log);
  const meter = new UsageMeter(loadPriceTable({ explicit: options.priceTable, userFile: join(home, '.toolkiln', 'prices.json') }), log);
  const model = resolveModel(backend, options, env, cache);
  const embeddingModel = options.embeddingModel ?? env.TOOLKILN_EMBEDDING_MODEL ?? DEFAULT_EMBEDDING_MODEL;
  const embedBatchSize = positiveInteger(options.embedBatchSize ?? 128, 'embedding batch size');
  const where = backend === 'openai' ? ` at ${env.OPENAI_BASE_URL || 'https://api.openai.com/v1'}` : '';
  const cacheNote = cache ? `cache ${cache.dir} (${cache.size} entries)` : 'no cache';

  if (options.dryRun) {
    log(`dry run: nothing is sent; estimating ${backend} ${model}${where}, ${cacheNote}`);
    return new DryRunGateway({ backend, model, embeddingModel, seed, cache, meter, offline: new OfflineGateway(seed), embedBatchSize });
  }

  let transport: OpenAiTransport | null = null;
  if (backend === 'openai') {
    const concurrency = positiveInteger(options.concurrency ?? DEFAULT_CONCURRENCY, '--concurrency');
    const rpm = options.rpm === undefined || options.rpm === 0 ? undefined : positiveInteger(options.rpm, '--rpm');
    const tpm = options.tpm === undefined || options.tpm === 0 ? undefined : positiveInteger(options.tpm, '--tpm');
    const limiter = new RequestLimiter({ concurrency, rpm, tpm, windowMs: options.rateWindowMs, windowMarginMs: options.rateWindowMarginMs, log, onStart: options.onRequestStart, sharedPermit: options.sharedPermit });
    transport = new OpenAiTransport({
      apiKey: env.OPENAI_API_KEY,
      baseURL: env.OPENAI_BASE_URL || undefined,
      limiter,
      meter,
      maxRetries: nonNegativeInteger(options.maxRetries ?? DEFAULT_MAX_RETRIES, 'max retries'),
      requestTimeoutMs: positiveInteger(options.requestTimeoutMs ?? 120_000, 'request timeout'),
      maxRetryWaitMs: nonNegativeInteger(options.maxRetryWaitMs ?? 60_000, 'max retry wait'),
      retryBaseMs: nonNegativeInteger(options.retryBaseMs ?? 1000, 'retry base'),
      seed,
      log,
      redact,
    });
    log(`llm: openai ${model}${where}, concurrency ${concurrency}${rpm ? `, ${rpm} rpm` : ''}${tpm ? `, ${tpm} tpm` : ''}, ${cacheNote}`);
  } else {
    log(`llm: replay ${model} from ${cacheNote}`);
  }
  if (options.batchResults) loadBatchResults(resolve(options.batchResults), cache!, log, keyMasker(env.OPENAI_API_KEY));
  const batch =
    options.batch || options.batchResults
      ? new BatchController({ cache: cache!, meter, collect: options.batch ?? null, transport, apiKey: env.OPENAI_API_KEY, baseURL: env.OPENAI_BASE_URL || undefined, log, redact })
      : undefined;
  if (options.batch) log(options.batch.mode === 'file' ? `llm: batch file mode: requests not in the cache are written to ${options.batch.file}` : 'llm: batch mode: requests not in the cache go through the Batch API (24 h window)');
  return new CachedGateway({
    backend,
    model,
    embeddingModel,
    seed,
    cache,
    transport,
    meter,
    maxRepairs: nonNegativeInteger(options.maxRepairs ?? 2, 'max repairs'),
    maxTokensCap: positiveInteger(options.maxTokensCap ?? 16_384, 'max tokens cap'),
    replayMiss: options.replayMiss ?? 'reject',
    embedBatchSize,
    log,
    batch,
  });
}

function resolveBackend(options: GatewayOptions, env: Record<string, string | undefined>): Backend {
  if (options.backend !== undefined) {
    if (!BACKENDS.includes(options.backend as Backend)) throw new UserError(`--llm must be one of ${BACKENDS.join(', ')}, got "${options.backend}"`);
    return options.backend as Backend;
  }
  if (env.OPENAI_API_KEY || env.OPENAI_BASE_URL || options.dryRun) return 'openai';
  return 'offline';
}

function resolveModel(backend: Backend, options: GatewayOptions, env: Record<string, string | undefined>, cache: ResponseCache | null): string {
  const model = options.model ?? env.TOOLKILN_MODEL;
  if (model) return model;
  if (backend === 'replay') {
    const models = new Set<string>();
    for (const entry of cache?.values() ?? []) if (typeof (entry as ChatCacheEntry).promptId === 'string') models.add((entry as ChatCacheEntry).model);
    if (models.size === 1) return [...models][0];
    throw new UserError(
      models.size === 0
        ? `--llm replay: the cache in ${cache?.dir} holds no answers; copy the .toolkiln/cache folder of the run to replay there (or set TOOLKILN_HOME to where it is)`
        : `--llm replay: the cache holds answers of several models (${[...models].sort().join(', ')}); pick one with --model`,
    );
  }
  if (env.OPENAI_BASE_URL && !options.dryRun) {
    throw new UserError(`no model: pass --model or set TOOLKILN_MODEL to a model ${env.OPENAI_BASE_URL} serves (vLLM: the served model name; Ollama: e.g. llama3.1; Azure: the deployment name)`);
  }
  return DEFAULT_OPENAI_MODEL;
}

function positiveInteger(value: number, what: string): number {
  if (!Number.isInteger(value) || value < 1) throw new UserError(`${what} must be a whole number of at least 1, got ${value}`);
  return value;
}

function nonNegativeInteger(value: number, what: string): number {
  if (!Number.isInteger(value) || value < 0) throw new UserError(`${what} must be a whole number of at least 0, got ${value}`);
  return value;
}
