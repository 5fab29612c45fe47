import type { Usage } from '../records.ts';
import type { PromptFile } from '../prompt.ts';

export type Backend = 'offline' | 'openai' | 'replay';

export interface GenerateOptions {
  /** The stage asking: usage and cost are accounted per stage. */
  stage: string;
  /**
   * A stable key of the record being worked on. It seeds the offline renderer and separates
   * otherwise identical requests that must get independent answers (e.g. several samples).
   */
  key: string;
  temperature?: number;
  maxTokens?: number;
}

/**
 * Why a generation failed, as a short code (the reject reason a stage records):
 * `schema_invalid` (answer failed the zod schema after every repair), `invalid_json` (no JSON could be
 * read from it after every repair), `truncated` (cut off by the token limit even after raising it),
 * `empty_answer`, `refused` (the model refused), `content_filter`, `rate_limited` (429 after every
 * retry), `http_error` (an HTTP error that retrying did not cure), `prompt_too_long` (over the
 * model's context), `bad_response` (the endpoint sent something that is not a chat completion),
 * `timeout`, `connection_error`, `replay_miss` (the replay backend has no cached answer),
 * `offline_schema_error`, `no_list` (no list where the prompt asked for one, after a repair),
 * `chatter` (talk such as a refusal or a bare preamble instead of the asked-for text, after a repair),
 * `batch_failed` (a Batch API request failed or expired on every submission),
 * `batch_deferred` (batch mode: the request waits for a batch; the runner asks again once it is answered).
 */
export type FailureReason =
  | 'schema_invalid'
  | 'invalid_json'
  | 'no_list'
  | 'chatter'
  | 'truncated'
  | 'empty_answer'
  | 'refused'
  | 'content_filter'
  | 'rate_limited'
  | 'http_error'
  | 'prompt_too_long'
  | 'bad_response'
  | 'timeout'
  | 'connection_error'
  | 'replay_miss'
  | 'offline_schema_error'
  | 'batch_failed'
  | 'batch_deferred';

/**
 * Failures that say the endpoint could not be reached or would not answer, not that an answer was
 * bad: a record rejected for one is asked again on resume. A Batch API request that failed on every
 * submission is one (the provider did not answer it), so batch mode stops as direct mode does.
 */
export const TRANSPORT_FAILURES: ReadonlySet<string> = new Set<FailureReason>(['connection_error', 'timeout', 'http_error', 'rate_limited', 'batch_failed']);

export type GenerateResult<O> =
  | { ok: true; value: O; model: string; cached: boolean }
  | { ok: false; reason: string; detail: string };

export interface EmbedOptions {
  /** The stage asking (usage per stage). */
  stage: string;
  /** Embedding model; default: the gateway's embedding model (`TOOLKILN_EMBEDDING_MODEL`, else `text-embedding-3-small`). */
  model?: string;
}

export interface UsageReport {
  total: Usage;
  byStage: Record<string, Usage>;
  byModel: Record<string, Usage>;
}

/** Figures of a run's Batch API use; each request line counts once per submission. */
export interface BatchCounts {
  batches: number;
  /** Request lines sent in batches, resubmissions included. */
  submitted: number;
  completed: number;
  /** Lines answered with an error. */
  failed: number;
  /** Lines the batch did not run before its window closed (or it was cancelled). */
  expired: number;
  /** Failed or expired lines sent again in a later batch. */
  resubmitted: number;
  /** Requests given up after their last submission failed: their records are rejected `batch_failed`. */
  abandoned: number;
}

export interface BatchSettleOptions {
  runDir: string;
  stage: string;
  log: (message: string) => void;
  /** The command that resumes the run, quoted in messages. */
  resumeCommand: string;
}

/** Batch mode of a gateway: misses are collected (answered `batch_deferred`) and sent together by `settle`. */
export interface BatchHook {
  /** Requests collected and not yet settled. */
  readonly pending: number;
  /** Sends what was collected and waits until each request is answered (into the cache) or given up. */
  settle(options: BatchSettleOptions): Promise<void>;
  /** The run's counts, kept in `<runDir>/batches.json`; null when no batch was sent. */
  counts(runDir: string): BatchCounts | null;
}

/** The one door to a language model: every generation step of every recipe goes through it. */
export interface LlmGateway {
  readonly backend: Backend;
  readonly model: string;
  /**
   * True when nothing is sent: answers are offline template renderings and `usage()` holds the
   * estimate of what a real run would send (requests not answered by the cache, tokens, dollars).
   */
  readonly dryRun?: boolean;
  /** Present in batch mode (`--batch`, `--batch-file`): the runner settles collected requests through it. */
  readonly batch?: BatchHook;
  /**
   * Ask for a structured answer. A failure after all retries and repairs is a result, not a throw;
   * only a misconfiguration that would fail every request (rejected key, unknown model) throws a UserError.
   */
  generate<V extends Record<string, unknown>, O>(prompt: PromptFile<V, O>, vars: V, options: GenerateOptions): Promise<GenerateResult<O>>;
  /** One vector per text, in order. Throws a UserError when the backend cannot embed. */
  embed(texts: string[], options: EmbedOptions): Promise<number[][]>;
  usage(): UsageReport;
  close(): Promise<void>;
}

export function emptyUsage(): Usage {
  return { requests: 0, cached: 0, promptTokens: 0, completionTokens: 0, costUsd: null };
}
