import { closeSync, createReadStream, existsSync, openSync, readFileSync, writeSync } from 'node:fs';
import { basename, join } from 'node:path';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import type OpenAI from 'openai';
import { UserError, messageOf } from '../errors.ts';
import { writeFileAtomic } from '../jsonl.ts';
import { BATCH_ENDPOINT, batchInputLine, forEachLine, readBatchResult, type BatchInputLine, type BatchResult } from './batch-jsonl.ts';
import type { ResponseCache } from './cache.ts';
import type { ChatSend } from './openai.ts';
import { keyMasker, maskingFetch } from './secrets.ts';
import type { BatchCounts } from './types.ts';
import { makeFolder } from '../folders.ts';

/** The provider's limits on one batch, and how patiently it is polled. */
export interface BatchLimits {
  /** Requests per batch (OpenAI: 50,000). */
  maxRequests: number;
  /** Bytes of one input file (OpenAI: 200 MB). */
  maxBytes: number;
  /** First wait between polls; doubles up to `maxPollIntervalMs`. */
  pollIntervalMs: number;
  maxPollIntervalMs: number;
  /** Submissions of one request before it is given up (a failed or expired one is sent again). */
  maxSubmissions: number;
  /** Replaces the timer between polls and retries (tests). */
  sleep: (ms: number) => Promise<void>;
}

export const DEFAULT_BATCH_LIMITS: BatchLimits = {
  maxRequests: 50_000,
  maxBytes: 200 * 1024 * 1024,
  pollIntervalMs: 15_000,
  maxPollIntervalMs: 300_000,
  maxSubmissions: 3,
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** One submitted batch, as `<runDir>/batches.json` remembers it. */
export interface BatchRecord {
  id: string;
  inputFileId: string;
  stage: string;
  /** The input file as uploaded, relative to the run folder. */
  file: string;
  requests: number;
  status: string;
  /** Its output and error files were read into the cache (or its failure recorded). */
  collected: boolean;
}

/** `<runDir>/batches.json`: what a resumed run picks up instead of paying again. */
export interface BatchState {
  batches: BatchRecord[];
  counts: BatchCounts;
  /** Submissions beyond the first, per request key that failed or expired. */
  resubmissions: Record<string, number>;
  /** Request keys given up, with why. */
  abandoned: Record<string, string>;
}

export const BATCH_STATE_FILE = 'batches.json';
const TERMINAL = new Set(['completed', 'expired', 'failed', 'cancelled']);
const MAX_CALL_RETRIES = 5;
/** Batches listed, newest first, when looking for one already made from an upload. */
const MAX_LISTED = 1000;

export function readBatchState(runDir: string): BatchState | null {
  const path = join(runDir, BATCH_STATE_FILE);
  if (!existsSync(path)) return null;
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as BatchState;
  } catch (error) {
    // Guessing would risk paying for submitted batches twice.
    throw new UserError(`${path}: not readable JSON (${messageOf(error)}); it lists the run's submitted batches: restore it, or delete it to send their requests again`);
  }
}

function emptyState(): BatchState {
  return { batches: [], counts: { batches: 0, submitted: 0, completed: 0, failed: 0, expired: 0, resubmitted: 0, abandoned: 0 }, resubmissions: {}, abandoned: {} };
}

export interface OpenAiBatchesOptions {
  runDir: string;
  cache: ResponseCache;
  apiKey?: string;
  baseURL?: string;
  limits: Partial<BatchLimits>;
  log: (message: string) => void;
  redact: (text: string) => string;
  resumeCommand: string;
}

type Failure = { error: string; expired: boolean };

/**
 * Sends requests through the OpenAI Files and Batches APIs (the `openai` SDK, its retries off) and
 * collects the answers into the cache. Every batch is recorded in `<runDir>/batches.json` as soon as
 * it is created, so a resumed run polls batches already submitted instead of sending them again.
 */
export class OpenAiBatches {
  private readonly limits: BatchLimits;
  private readonly state: BatchState;
  private client: Promise<{ sdk: typeof import('openai'); client: OpenAI }> | null = null;
  /** Masks the API key in what the provider sends back, before it is stored or logged. */
  private readonly mask: (text: string) => string;

  constructor(private readonly options: OpenAiBatchesOptions) {
    this.limits = { ...DEFAULT_BATCH_LIMITS, ...Object.fromEntries(Object.entries(options.limits).filter(([, v]) => v !== undefined)) };
    this.state = readBatchState(options.runDir) ?? emptyState();
    this.mask = keyMasker(options.apiKey);
  }

  /**
   * Sends `requests` (those not already in a live batch), polls every live batch until it ends, and
   * resubmits what failed or expired up to the limit. Returns the requests given up, with why.
   */
  async settle(stage: string, requests: Map<string, ChatSend>): Promise<Map<string, string>> {
    const abandoned = new Map<string, string>();
    const live = this.keysOfLiveBatches();
    const fresh: BatchInputLine[] = [];
    for (const [key, request] of requests) {
      if (live.has(key)) continue;
      // Given up by an earlier process of this run (this one answers it `batch_failed` without asking):
      // a resumed run asks again, with a fresh round of submissions.
      if (this.state.abandoned[key]) {
        delete this.state.abandoned[key];
        delete this.state.resubmissions[key];
        this.state.counts.abandoned--;
      }
      fresh.push(batchInputLine(key, request));
    }
    if (live.size) this.options.log(`batch: ${live.size} requests are in batches already submitted; waiting for those`);
    for (const record of this.state.batches.filter((b) => !b.id)) await this.create(record);
    await this.submit(stage, fresh);

    let wait = this.limits.pollIntervalMs;
    for (;;) {
      const open = this.state.batches.filter((b) => !b.collected);
      if (!open.length) break;
      const again: BatchInputLine[] = [];
      for (const record of open) {
        const batch = await this.call(`retrieve batch ${record.id}`, (client) => client.batches.retrieve(record.id));
        if (batch.status !== record.status) {
          record.status = batch.status;
          this.save();
          this.options.log(`batch ${record.id} (${record.requests} requests): ${batch.status}`);
        }
        if (!TERMINAL.has(batch.status)) continue;
        const failures = await this.collect(record, batch);
        again.push(...this.retryOrAbandon(record, failures, abandoned));
      }
      if (again.length) {
        this.state.counts.resubmitted += again.length;
        await this.submit(stage, again);
        wait = this.limits.pollIntervalMs;
        continue;
      }
      if (this.state.batches.some((b) => !b.collected)) {
        await this.limits.sleep(wait);
        wait = Math.min(this.limits.maxPollIntervalMs, wait * 2);
      }
    }
    return abandoned;
  }

  /** Request keys of batches submitted but not yet collected, read from their input files. */
  private keysOfLiveBatches(): Set<string> {
    const keys = new Set<string>();
    for (const record of this.state.batches.filter((b) => !b.collected)) {
      forEachLine(join(this.options.runDir, record.file), (line) => keys.add((JSON.parse(line) as BatchInputLine).custom_id));
    }
    return keys;
  }

  /** Splits at the limits, writes each input file, uploads it and creates its batch, recording each at once. */
  private async submit(stage: string, lines: BatchInputLine[]): Promise<void> {
    let chunk: string[] = [];
    let bytes = 0;
    const flush = async () => {
      if (chunk.length) await this.submitOne(stage, chunk);
      chunk = [];
      bytes = 0;
    };
    for (const line of lines) {
      const text = JSON.stringify(line) + '\n';
      const size = Buffer.byteLength(text);
      if (chunk.length >= this.limits.maxRequests || (chunk.length && bytes + size > this.limits.maxBytes)) await flush();
      chunk.push(text);
      bytes += size;
    }
    await flush();
  }

  private async submitOne(stage: string, lines: string[]): Promise<void> {
    const number = this.state.batches.length + 1;
    const file = join('batches', `${String(number).padStart(3, '0')}-${stage.replace(/[^\w.-]/g, '_')}.jsonl`);
    const path = join(this.options.runDir, file);
    makeFolder(join(this.options.runDir, 'batches'));
    const fd = openSync(path, 'w');
    try {
      for (const line of lines) writeSync(fd, line);
    } finally {
      closeSync(fd);
    }
    const uploaded = await this.call(`upload ${file}`, (client) => client.files.create({ file: createReadStream(path), purpose: 'batch' }));
    const record: BatchRecord = { id: '', inputFileId: uploaded.id, stage, file, requests: lines.length, status: 'uploaded', collected: false };
    this.state.batches.push(record);
    this.save();
    await this.create(record);
  }

  /**
   * Creates the batch of an uploaded file and records it at once: a run killed from then on resumes
   * by polling it. A batch already made from the file (its create answer was lost, or the run was
   * killed before recording it) is adopted instead of paying for a second one.
   */
  private async create(record: BatchRecord): Promise<void> {
    const batch = await this.call(`create a batch of ${record.file}`, async (client) => {
      let seen = 0;
      for await (const made of client.batches.list({ limit: 100 })) {
        if (made.input_file_id === record.inputFileId) return made;
        if (++seen >= MAX_LISTED) break; // newest first: a batch of this upload is among the latest
      }
      return client.batches.create({ input_file_id: record.inputFileId, endpoint: BATCH_ENDPOINT, completion_window: '24h', metadata: { toolkiln_run: basename(this.options.runDir), stage: record.stage } });
    });
    Object.assign(record, { id: batch.id, status: batch.status });
    this.state.counts.batches++;
    this.state.counts.submitted += record.requests;
    this.save();
    this.options.log(`batch ${batch.id}: submitted ${record.requests} requests of stage ${record.stage} (${record.file})`);
  }

  /**
   * Reads a finished batch's output and error files: answers into the cache, the rest as failures by
   * key. Each request of the batch gets one outcome, whatever the files hold: the first answer wins
   * (an error line for an answered request, or a second answer, is ignored, so nothing is paid
   * twice); a line for a request the batch did not hold is never cached; a line that cannot be read
   * is reported, and the request it held, left without an outcome, fails and is sent again.
   */
  private async collect(record: BatchRecord, batch: OpenAI.Batches.Batch): Promise<Map<string, Failure>> {
    const inBatch = new Set<string>();
    forEachLine(join(this.options.runDir, record.file), (line) => inBatch.add((JSON.parse(line) as BatchInputLine).custom_id));
    const failures = new Map<string, Failure>();
    const answered = new Set<string>();
    const ignored: string[] = [];
    let unreadable = '';
    for (const [fileId, suffix] of [[batch.output_file_id, 'output'], [batch.error_file_id, 'errors']] as const) {
      if (!fileId) continue;
      const local = join(this.options.runDir, record.file.replace(/\.jsonl$/, `.${suffix}.jsonl`));
      const content = await this.call(`download ${suffix} file ${fileId} of batch ${record.id}`, (client) => client.files.content(fileId));
      if (!content.body) throw new UserError(`batch ${record.id}: the ${suffix} file ${fileId} came back empty; resume later with: ${this.options.resumeCommand}`, 1);
      // Read as a stream, line by line, key masked; a copy stays in the run folder.
      const fd = openSync(local, 'w');
      try {
        let number = 0;
        for await (const raw of createInterface({ input: Readable.fromWeb(content.body as import('node:stream/web').ReadableStream), crlfDelay: Infinity })) {
          if (!raw.trim()) continue;
          const line = this.mask(raw);
          writeSync(fd, line + '\n');
          const where = `${local}:${++number}`;
          let result: BatchResult;
          try {
            result = readBatchResult(line, where);
          } catch (error) {
            if (!(error instanceof UserError)) throw error;
            ignored.push(error.message);
            unreadable ||= error.message;
            continue;
          }
          if (!inBatch.has(result.key)) ignored.push(`${where}: custom_id ${result.key} is not a request of batch ${record.id}: not cached`);
          else if (answered.has(result.key) || failures.has(result.key)) ignored.push(`${where}: a second result for request ${result.key.slice(0, 12)}…: the first one stands`);
          else if ('reply' in result) {
            this.options.cache.forget(result.key);
            this.options.cache.put(result.key, result.reply);
            answered.add(result.key);
          } else failures.set(result.key, { error: result.error, expired: result.expired });
        }
      } finally {
        closeSync(fd);
      }
    }
    if (ignored.length) this.options.log(`batch ${record.id}: ${ignored.length} result line${ignored.length === 1 ? '' : 's'} ignored (first: ${ignored[0]})`);
    // Requests with no result at all: their line could not be read, they did not run before the window closed, or the whole batch failed.
    const why: Failure = unreadable
      ? { error: `no readable result line (${unreadable})`, expired: false }
      : batch.status === 'failed'
        ? { error: `the batch failed: ${batch.errors?.data?.map((e) => `${e.code ?? 'error'}: ${e.message ?? ''}`).join('; ') || 'no reason given'}`, expired: false }
        : { error: `batch ${batch.status} before this request ran`, expired: true };
    for (const key of inBatch) if (!answered.has(key) && !failures.has(key)) failures.set(key, why);
    const expired = [...failures.values()].filter((f) => f.expired).length;
    this.state.counts.completed += answered.size;
    this.state.counts.expired += expired;
    this.state.counts.failed += failures.size - expired;
    record.collected = true;
    this.save();
    if (failures.size) this.options.log(`batch ${record.id}: ${answered.size} answered, ${failures.size - expired} failed, ${expired} expired`);
    return failures;
  }

  /** The input lines to send again; the requests out of submissions go to `abandoned`. */
  private retryOrAbandon(record: BatchRecord, failures: Map<string, Failure>, abandoned: Map<string, string>): BatchInputLine[] {
    if (!failures.size) return [];
    const again: BatchInputLine[] = [];
    forEachLine(join(this.options.runDir, record.file), (text) => {
      const line = JSON.parse(text) as BatchInputLine;
      const failure = failures.get(line.custom_id);
      if (!failure) return;
      const submissions = (this.state.resubmissions[line.custom_id] ?? 0) + 1;
      if (submissions < this.limits.maxSubmissions) {
        this.state.resubmissions[line.custom_id] = submissions;
        again.push(line);
      } else {
        const why = `${failure.error}; submitted ${submissions} time${submissions === 1 ? '' : 's'}`;
        this.state.abandoned[line.custom_id] = why;
        this.state.counts.abandoned++;
        abandoned.set(line.custom_id, why);
      }
    });
    this.save();
    return again;
  }

  private save(): void {
    writeFileAtomic(join(this.options.runDir, BATCH_STATE_FILE), JSON.stringify(this.state, null, 2) + '\n');
  }

  private connect(): Promise<{ sdk: typeof import('openai'); client: OpenAI }> {
    this.client ??= import('openai').then((sdk) => ({
      sdk,
      client: new sdk.default({
        apiKey: this.options.apiKey || 'no-key',
        baseURL: this.options.baseURL || 'https://api.openai.com/v1',
        maxRetries: 0,
        timeout: 600_000,
        fetch: this.fetch(),
      }),
    }));
    return this.client;
  }

  /** JSON answers are masked whole on arrival; file contents (up to gigabytes) line by line as they are read, in `collect`. */
  private fetch(): typeof fetch {
    const masked = maskingFetch(globalThis.fetch, this.mask);
    return (input, init) => (/\/files\/[^/]+\/content$/.test(urlOf(input)) ? globalThis.fetch(input, init) : masked(input, init));
  }

  /** One Files/Batches call, retried with backoff after a 408/409/429/5xx or a broken connection. */
  private async call<T>(what: string, send: (client: OpenAI) => Promise<T>): Promise<T> {
    const { sdk, client } = await this.connect();
    for (let attempt = 0; ; attempt++) {
      try {
        return await send(client);
      } catch (error) {
        const status = error instanceof sdk.APIError ? error.status : undefined;
        const transient = error instanceof sdk.APIConnectionError || status === 408 || status === 409 || status === 429 || (status !== undefined && status >= 500);
        if (!(error instanceof sdk.APIError)) throw error;
        if (!transient || attempt >= MAX_CALL_RETRIES) {
          const kept = this.state.batches.length ? `; the ${this.state.batches.length} batches submitted so far are recorded in ${join(this.options.runDir, BATCH_STATE_FILE)}` : '';
          throw new UserError(this.options.redact(`batch: ${what} failed (${status ? `HTTP ${status}: ` : ''}${messageOf(error)})${kept}; fix the cause, then resume with: ${this.options.resumeCommand}`), 1);
        }
        await this.limits.sleep(Math.min(this.limits.maxPollIntervalMs, this.limits.pollIntervalMs * 2 ** attempt));
      }
    }
  }
}

function urlOf(input: string | URL | Request): string {
  return typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
}
