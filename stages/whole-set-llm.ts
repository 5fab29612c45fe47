import { BatchRound } from '../core/llm/batch-round.ts';
import type { LlmGateway } from '../core/llm/types.ts';
import type { StageContext } from '../core/stage.ts';

/**
 * Runs the LLM work of a whole-set step (a scan stage's `collect`, which the runner does not run
 * again in batch mode): in batch mode, while requests were deferred to a batch, the batch is
 * settled and the work done again (answers come from the cache), as the runner does for a batch
 * stage. Without batch mode it runs once.
 */
export async function settledLlmWork<T>(ctx: StageContext, stage: string, work: (llm: LlmGateway) => Promise<T>): Promise<T> {
  const round = new BatchRound(ctx.llm);
  for (;;) {
    const result = await work(round.watch(ctx.llm, stage));
    if (!round.waiting) return result;
    await round.settle({ runDir: ctx.runDir, stage, log: ctx.log, resumeCommand: `toolkiln run <pipeline> --resume ${ctx.runDir.split('/').at(-1)}` });
  }
}
