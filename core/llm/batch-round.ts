import { join } from 'node:path';
import { UserError } from '../errors.ts';
import { BATCH_STATE_FILE, readBatchState } from './batch-openai.ts';
import { observeResults } from './observe.ts';
import type { BatchSettleOptions, LlmGateway } from './types.ts';

/** Passes over a stage before its remaining requests are given up as a misconfiguration (repairs and chained prompts need one pass each). */
export const MAX_BATCH_PASSES = 12;

/**
 * The runner's side of batch mode, for one stage: notes which records (by key) had a request
 * deferred to a batch — their results are not kept — and settles the batch between passes. Without
 * batch mode it changes nothing.
 */
export class BatchRound {
  private readonly deferredKeys = new Set<string>();
  private passes = 0;

  constructor(private readonly llm: LlmGateway) {}

  /** The gateway a record (or a whole-set stage, under one key) sees. */
  watch(llm: LlmGateway, key: string): LlmGateway {
    if (!this.llm.batch) return llm;
    return observeResults(llm, (result) => {
      if (!result.ok && result.reason === 'batch_deferred') this.deferredKeys.add(key);
    });
  }

  /** The record asked for something a batch must answer first: run it again after `settle`. */
  deferred(key: string): boolean {
    return this.deferredKeys.has(key);
  }

  get waiting(): number {
    return this.deferredKeys.size;
  }

  /** Sends the collected requests and waits for their answers; the deferred records are then run again. */
  async settle(options: BatchSettleOptions): Promise<void> {
    if (++this.passes > MAX_BATCH_PASSES) {
      throw new UserError(
        `stage ${options.stage}: ${this.deferredKeys.size} records still ask for new requests after ${MAX_BATCH_PASSES} batch passes; answers so far are cached: resume without --batch to finish them directly (${options.resumeCommand})`,
        1,
      );
    }
    options.log(`batch pass ${this.passes}: ${this.deferredKeys.size} records wait for ${this.llm.batch!.pending} requests`);
    await this.llm.batch!.settle(options);
    this.deferredKeys.clear();
  }
}

/**
 * A resumed run with batches submitted and not yet collected must pick them up in batch mode:
 * otherwise their requests would be sent (and paid for) a second time.
 */
export function checkBatchesInFlight(runDir: string, llm: LlmGateway, resumeCommand: string): void {
  if (llm.batch) return;
  const open = (readBatchState(runDir)?.batches ?? []).filter((b) => !b.collected);
  if (!open.length) return;
  throw new UserError(
    `this run has ${open.length} batch${open.length === 1 ? '' : 'es'} submitted and not yet collected (${open.map((b) => b.id || b.inputFileId).join(', ')}); ` +
      `resume with --batch to collect them (${resumeCommand} --batch), or delete ${join(runDir, BATCH_STATE_FILE)} to send their requests again directly`,
  );
}
