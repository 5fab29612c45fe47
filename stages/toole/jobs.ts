import type { PromptFile } from '../../core/prompt.ts';
import { mapStage, runRecord, type LineageEntry, type MapStage, type RejectReason, type StageContext } from '../../core/stage.ts';
import { TooleItem, queryItem, type GenerationJob, type JobItem, type JobMethod, type QueryItem, type QueryMethod, type TooleQuery } from './records.ts';

export type JobResult = TooleItem[] | (RejectReason & { reject: true });

/**
 * How one kind of job is answered: its prompt(s) and the request that turns a job into items. It
 * asks through `ctx.ask`; a failed request becomes the job's reject with the gateway's reason.
 */
export interface JobHandler {
  prompts: PromptFile<any, any>[];
  run: (job: GenerationJob, item: JobItem, ctx: StageContext & { key: string }) => Promise<JobResult>;
}

export interface JobStageSpec {
  name: string;
  version: number;
  /** The job kinds this stage answers; every other item passes through unchanged. */
  handlers: Partial<Record<JobMethod, JobHandler>>;
  /** Concurrent LLM requests this stage may have in flight (the run's `--concurrency` caps it). */
  concurrency?: number;
}

/**
 * A stage that answers some kinds of generation job: a job is consumed and replaced by what it
 * produced (queries, follow-up jobs), or rejected with the reason its request failed (prefixed
 * with the job kind when the stage answers several). Tools, queries and other jobs pass through,
 * so `in = out + rejected − fanned` holds per stage.
 */
export function jobStage(spec: JobStageSpec): MapStage<TooleItem, TooleItem> {
  const methods = Object.keys(spec.handlers) as JobMethod[];
  return mapStage({
    name: spec.name,
    version: spec.version,
    input: TooleItem,
    output: TooleItem,
    fanOut: true,
    concurrency: spec.concurrency,
    prompts: methods.flatMap((m) => spec.handlers[m]!.prompts),
    run: async (item, ctx) => {
      const handler = item.kind === 'job' ? spec.handlers[item.job.method] : undefined;
      if (!handler || item.kind !== 'job') return [item];
      // A failed request is caught here, not by the stage, so that its reason can name the job kind.
      const result = await runRecord((jobItem: JobItem, jobCtx: typeof ctx) => handler.run(jobItem.job, jobItem, jobCtx), item, ctx);
      if (Array.isArray(result) || methods.length === 1) return result;
      return { ...result, reason: `${item.job.method}:${result.reason}` };
    },
  });
}

/**
 * The queries a job produced, as items: at most `job.count` of them (a model that writes more
 * does not skew the method counts), each with a stable id from the job and its position.
 */
export function queriesOf(
  item: JobItem,
  found: { text: string; fields?: Partial<Pick<TooleQuery, 'emotion' | 'keyword' | 'round' | 'basedOn' | 'usage' | 'tools'>> }[],
  method: QueryMethod,
  lineage: LineageEntry,
): QueryItem[] {
  const job = item.job;
  const tool = job.tools[0].name;
  return found.slice(0, job.count).map(({ text, fields }, index) =>
    queryItem(
      {
        text: text.trim(),
        tool,
        method,
        round: job.round,
        emotion: job.emotion,
        ...fields,
        generatedFor: tool,
        checks: [],
        tags: [],
        lineage: [...(job.base?.lineage ?? []), lineage],
      },
      { job: item.id, index },
    ),
  );
}
