import detailsPrompt from '../../prompts/toole-details.ts';
import { reject } from '../../core/stage.ts';
import { queriesOf, type JobHandler } from './jobs.ts';

/** Details generation (paper §2.2.1 (4)): each direct query rewritten with more details. */
export const detailsHandler: JobHandler = {
  prompts: [detailsPrompt],
  run: async (job, item, ctx) => {
    const tool = job.tools[0];
    const base = job.base;
    if (!base) return reject('missing_base_query', 'a details job names no query to augment');
    const answer = await ctx.ask(detailsPrompt, { humanDescription: tool.description, modelDescription: tool.descriptionForModel, query: base.text });
    return queriesOf(item, [{ text: answer.value.query, fields: { basedOn: base.id } }], 'details', answer.lineage);
  },
};
