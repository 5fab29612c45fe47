import { closeSync, openSync, renameSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { UserError } from '../errors.ts';
import { batchInputLine } from './batch-jsonl.ts';
import { OpenAiBatches, readBatchState, type BatchLimits } from './batch-openai.ts';
import type { ResponseCache } from './cache.ts';
import { TransportError, type ChatReply, type ChatSend, type OpenAiTransport } from './openai.ts';
import { chatReplyKey, type ChatReplyEntry } from './request.ts';
import type { BatchCounts, BatchHook, BatchSettleOptions } from './types.ts';
import type { UsageMeter } from './usage.ts';
import { makeFolder } from '../folders.ts';

export interface BatchOptions extends Partial<BatchLimits> {
  /**
   * `openai`: collected requests go through the provider's Files and Batches APIs; `file`: they are
   * written to `file` as OpenAI Batch JSONL (for `vllm run-batch`) and the run stops.
   */
  mode: 'openai' | 'file';
  file?: string;
}

export interface BatchControllerOptions {
  cache: ResponseCache;
  meter: UsageMeter;
  /** Collect misses into batches (`--batch`, `--batch-file`); null: only answer from loaded batch results. */
  collect: BatchOptions | null;
  /** Asked on a miss when not collecting. */
  transport: OpenAiTransport | null;
  /** For the Files and Batches APIs. */
  apiKey?: string;
  baseURL?: string;
  log: (message: string) => void;
  redact: (text: string) => string;
}

/** `--batch-file` did its work: the requests are written; the run stops here (exit 0, nothing published). */
export class BatchFileWritten extends UserError {
  constructor(message: string, readonly file: string, readonly requests: number) {
    super(message, 0);
    this.name = 'BatchFileWritten';
  }
}

/**
 * Stands in for the transport of a gateway in batch mode. A request whose reply a batch put in the
 * cache is answered from it (and metered once, at the batch price); any other is collected and
 * answered `batch_deferred` — or, when only loading results, sent directly. `settle` sends what was
 * collected. Repairs and larger token limits are new requests, collected on the next pass.
 */
export class BatchController implements BatchHook {
  private readonly collected = new Map<string, ChatSend>();
  private readonly metered = new Set<string>();
  /** Requests given up after their last submission failed, with why. */
  private readonly abandoned = new Map<string, string>();

  constructor(private readonly options: BatchControllerOptions) {}

  get collecting(): boolean {
    return this.options.collect !== null;
  }

  get pending(): number {
    return this.collected.size;
  }

  async chat(request: ChatSend, context: { stage: string; priority: number }): Promise<ChatReply> {
    const key = chatReplyKey(request);
    const entry = this.options.cache.get(key) as ChatReplyEntry | undefined;
    if (entry?.kind === 'chat-reply' && typeof entry.text === 'string') {
      if (!this.metered.has(key)) {
        this.metered.add(key);
        this.options.meter.request(context.stage, request.model, entry.promptTokens, entry.completionTokens, true);
      }
      return { text: entry.text, finishReason: entry.finishReason, refusal: entry.refusal, promptTokens: entry.promptTokens, completionTokens: entry.completionTokens };
    }
    if (!this.collecting) {
      if (!this.options.transport) throw new TransportError('connection_error', 'no endpoint to ask: the answer is not among the loaded batch results');
      return this.options.transport.chat(request, context);
    }
    const gaveUp = this.abandoned.get(key);
    if (gaveUp) throw new TransportError('batch_failed', `the batch request failed on every submission (${gaveUp})`);
    this.collected.set(key, request);
    throw new TransportError('batch_deferred', 'waiting for a batch answer');
  }

  async settle(options: BatchSettleOptions): Promise<void> {
    const settings = this.options.collect;
    if (!settings) throw new Error('settle() called on a gateway that does not collect batches');
    const requests = new Map(this.collected);
    this.collected.clear();
    if (settings.mode === 'file') return this.writeFile(settings.file!, requests, options);
    const batches = new OpenAiBatches({
      runDir: options.runDir,
      cache: this.options.cache,
      apiKey: this.options.apiKey,
      baseURL: this.options.baseURL,
      limits: settings,
      log: options.log,
      redact: this.options.redact,
      resumeCommand: options.resumeCommand,
    });
    const abandoned = await batches.settle(options.stage, requests);
    for (const [key, why] of abandoned) this.abandoned.set(key, why);
  }

  counts(runDir: string): BatchCounts | null {
    const state = readBatchState(runDir);
    return state && state.batches.length ? state.counts : null;
  }

  /** Writes the requests as batch JSONL (one line at a time, then renamed into place) and stops the run. */
  private writeFile(file: string, requests: Map<string, ChatSend>, options: BatchSettleOptions): never {
    makeFolder(dirname(file));
    const temporary = `${file}.${process.pid}.tmp`;
    const fd = openSync(temporary, 'w');
    try {
      for (const [key, request] of requests) writeSync(fd, JSON.stringify(batchInputLine(key, request)) + '\n');
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, file);
    const model = requests.values().next().value?.model ?? '<model>';
    const results = file.replace(/(\.jsonl)?$/, '.results.jsonl');
    throw new BatchFileWritten(
      `stage ${options.stage}: wrote ${requests.size} requests to ${file}; nothing was published. Next: vllm run-batch -i ${file} -o ${results} --model ${model}, ` +
        `then: ${options.resumeCommand} --llm openai --model ${model} --batch-results ${results} --batch-file ${file} (it writes the requests still missing, if any, or finishes the run)`,
      file,
      requests.size,
    );
  }
}

/** One line for a run summary: `batch: 3 batches, 120 requests submitted, 117 completed, 2 failed, 1 expired, 3 resubmitted, 0 given up`. */
export function formatBatchCounts(counts: BatchCounts): string {
  return `batch: ${counts.batches} batch${counts.batches === 1 ? '' : 'es'}, ${counts.submitted} requests submitted, ${counts.completed} completed, ${counts.failed} failed, ${counts.expired} expired, ${counts.resubmitted} resubmitted, ${counts.abandoned} given up`;
}
