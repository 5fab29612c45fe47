import emotionalPrompt from '../../prompts/toole-emotional.ts';
import { generate, queriesOf, type JobHandler } from './jobs.ts';

/** Emotional generation (paper §2.2.1 (2)): one request per emotion, queries written in that mood. */
export const emotionalHandler: JobHandler = {
  prompts: [emotionalPrompt],
  run: async (job, item, ctx, stage) => {
    const tool = job.tools[0];
    const emotion = job.emotion ?? 'neutral';
    const answer = await generate(ctx, stage, emotionalPrompt, { name: tool.name, nameForHuman: tool.nameForHuman, humanDescription: tool.description, modelDescription: tool.descriptionForModel, emotion, count: job.count });
    if (!answer.ok) return answer.rejection;
    return queriesOf(item, answer.value.queries.map((text) => ({ text })), 'emotional', answer.lineage);
  },
};
