import directPrompt from '../../prompts/toole-direct.ts';
import { queriesOf, type JobHandler } from './jobs.ts';
import { jobItem, type TooleItem } from './records.ts';

/**
 * Direct diverse generation (paper §2.2.1 (1)): one request per round, `count` varied queries. With
 * details generation on, each query also becomes a details job (§2.2.1 (4)).
 */
export function directHandler(options: { details: boolean }): JobHandler {
  return {
    prompts: [directPrompt],
    run: async (job, item, ctx) => {
      const tool = job.tools[0];
      const answer = await ctx.ask(directPrompt, { name: tool.name, nameForHuman: tool.nameForHuman, humanDescription: tool.description, modelDescription: tool.descriptionForModel, count: job.count });
      const queries = queriesOf(item, answer.value.queries.map((text) => ({ text })), 'direct', answer.lineage);
      const details: TooleItem[] = options.details ? queries.map((q) => jobItem({ method: 'details', tools: job.tools, count: 1, round: job.round, base: { id: q.id, ...q.query } })) : [];
      return [...queries, ...details];
    },
  };
}
