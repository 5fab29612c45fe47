import keywordPrompt from '../../prompts/toole-keywords.ts';
import keywordQueryPrompt from '../../prompts/toole-keyword-queries.ts';
import { reject } from '../../core/stage.ts';
import { queriesOf, type JobHandler } from './jobs.ts';
import { jobItem } from './records.ts';

/**
 * Keyword generation (paper §2.2.1 (3)), in two requests: the model labels the tool with short
 * keywords, then writes one query per keyword. Each query records the keyword it was written for.
 */
export const keywordExtractionHandler: JobHandler = {
  prompts: [keywordPrompt],
  run: async (job, _item, ctx) => {
    const tool = job.tools[0];
    const answer = await ctx.ask(keywordPrompt, { name: tool.name, nameForHuman: tool.nameForHuman, humanDescription: tool.description, modelDescription: tool.descriptionForModel, count: job.count });
    // The same label twice would give two queries about one thing.
    const keywords = [...new Map(answer.value.keywords.map((k) => [k.trim().toLowerCase(), k.trim()])).values()].filter(Boolean).slice(0, job.count);
    if (!keywords.length) return reject('no_keywords', 'the answer held no usable keyword');
    return [jobItem({ method: 'keyword', tools: job.tools, count: keywords.length, keywords })];
  },
};

export const keywordQueriesHandler: JobHandler = {
  prompts: [keywordQueryPrompt],
  run: async (job, item, ctx) => {
    const tool = job.tools[0];
    const keywords = job.keywords ?? [];
    const answer = await ctx.ask(keywordQueryPrompt, {
      name: tool.name,
      nameForHuman: tool.nameForHuman,
      humanDescription: tool.description,
      modelDescription: tool.descriptionForModel,
      keywords: keywords.map((k, i) => `${i + 1}. ${k}`).join('\n'),
      count: keywords.length,
    });
    // The label the model wrote wins when it is one of ours; otherwise the item's position says which.
    const ours = new Map(keywords.map((k) => [k.toLowerCase(), k]));
    const found = answer.value.queries.map((q, i) => ({ text: q.query, fields: { keyword: ours.get((q.keyword ?? '').trim().toLowerCase()) ?? keywords[i] ?? q.keyword ?? undefined } }));
    return queriesOf(item, found, 'keyword', answer.lineage);
  },
};
