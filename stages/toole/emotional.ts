import emotionalPrompt from '../../prompts/toole-emotional.ts';
import { queriesOf, type JobHandler } from './jobs.ts';

/** Emotional generation (paper §2.2.1 (2)): one request per emotion, queries written in that mood. */
export const emotionalHandler: JobHandler = {
  prompts: [emotionalPrompt],
  run: async (job, item, ctx) => {
    const tool = job.tools[0];
    const emotion = job.emotion ?? 'neutral';
    const answer = await ctx.ask(emotionalPrompt, { name: tool.name, nameForHuman: tool.nameForHuman, humanDescription: tool.description, modelDescription: tool.descriptionForModel, emotion, count: job.count });
    return queriesOf(item, answer.value.queries.map((text) => ({ text })), 'emotional', answer.lineage);
  },
};
