import type { PromptFile } from '../../core/prompt.ts';
import { reject, type MapStage, type RejectReason, type StageContext } from '../../core/stage.ts';
import { TooleItem, queryItem, type GenerationJob, type JobItem, type JobMethod, type Lineage, type QueryItem, type QueryMethod, type TooleQuery } from './records.ts';

export type JobResult = TooleItem[] | (RejectReason & { reject: true });

/** How one kind of job is answered: its prompt(s) and the request that turns a job into items. */
export interface JobHandler {
  prompts: PromptFile<any, any>[];
  run: (job: GenerationJob, item: JobItem, ctx: StageContext & { key: string }, stage: StageRef) => Promise<JobResult>;
}

export interface StageRef {
  name: string;
  version: number;
}

export interface JobStageSpec extends StageRef {
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
  const stage: StageRef = { name: spec.name, version: spec.version };
  return {
    kind: 'map',
    ...stage,
    input: TooleItem,
    output: TooleItem,
    fanOut: true,
    concurrency: spec.concurrency,
    prompts: methods.flatMap((m) => spec.handlers[m]!.prompts),
    run: async (item, ctx) => {
      const handler = item.kind === 'job' ? spec.handlers[item.job.method] : undefined;
      if (!handler || item.kind !== 'job') return [item];
      const result = await handler.run(item.job, item, ctx, stage);
      if (Array.isArray(result) || methods.length === 1) return result;
      return { ...result, reason: `${item.job.method}:${result.reason}` };
    },
  };
}

/** Asks the gateway; a failed request becomes a rejection of the job with the gateway's reason. */
export async function generate<V extends Record<string, unknown>, O>(
  ctx: StageContext & { key: string },
  stage: StageRef,
  prompt: PromptFile<V, O>,
  vars: V,
): Promise<{ ok: true; value: O; lineage: Lineage } | { ok: false; rejection: RejectReason & { reject: true } }> {
  const result = await ctx.llm.generate(prompt, vars, { stage: stage.name, key: ctx.key });
  if (!result.ok) return { ok: false, rejection: reject(result.reason, result.detail) };
  return { ok: true, value: result.value, lineage: { stage: stage.name, version: stage.version, prompt: prompt.id, promptHash: prompt.hash, model: result.model } };
}

/**
 * The queries a job produced, as items: at most `job.count` of them (a model that writes more
 * does not skew the method counts), each with a stable id from the job and its position.
 */
export function queriesOf(
  item: JobItem,
  found: { text: string; fields?: Partial<Pick<TooleQuery, 'emotion' | 'keyword' | 'round' | 'basedOn' | 'usage' | 'tools'>> }[],
  method: QueryMethod,
  lineage: Lineage,
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
