import { z } from 'zod';
import { definePrompt } from '../core/prompt.ts';
import { actionPhrase, detail, withoutNames, withTypicalFaults } from './toole-offline.ts';
import { readList, splitUsageTag } from './toole-numbered-list.ts';

/** ToolE multi-tool generation (paper §2.2.1, Appendix D.1): queries that need two tools at once. */
export interface MultiToolVars extends Record<string, unknown> {
  firstName: string;
  firstDescription: string;
  secondName: string;
  secondDescription: string;
  count: number;
}

export const MultiToolQueries = z.object({
  queries: z.array(z.object({ query: z.string().min(1), usage: z.enum(['parallel', 'causal']).nullable() })).min(1),
});
export type MultiToolQueries = z.infer<typeof MultiToolQueries>;

export default definePrompt<MultiToolVars, MultiToolQueries>({
  id: 'toole/multi-tool',
  template: `You write user queries for testing an AI assistant. The assistant can call these two tools:

First tool: {{firstName}}, described as "{{firstDescription}}"
Second tool: {{secondName}}, described as "{{secondDescription}}"

Write {{count}} different messages a user might send that the assistant can only answer well by using BOTH tools. Every message must need both tools. Include both kinds of use:
- parallel: two independent requests in one message, one for each tool;
- causal: one tool works on what the other one returns.
Vary the style (questions, requests, instructions) and the level of detail. Never name either tool.

Answer as a numbered list, each item marked with its kind:
1. (parallel) User: <message>
2. (causal) User: <message>
...`,
  schema: MultiToolQueries,
  parseText: (text) => ({
    queries: readList(text).map((item) => {
      const { usage, text: query } = splitUsageTag(item);
      return { query, usage: usage ?? null };
    }),
  }),
  temperature: 1,
  offline: (vars, rng) => {
    const first = actionPhrase(withoutNames(vars.firstDescription, [vars.firstName]));
    const second = actionPhrase(withoutNames(vars.secondDescription, [vars.secondName]));
    const parallel = [
      () => `Could you ${first} ${detail(rng)}? Separately, I also want to ${second}.`,
      () => `Two things today: ${first}, and ${second} ${detail(rng)}.`,
      () => `I'm organising something ${detail(rng)} and need to ${first}; while you're at it, ${second}.`,
    ];
    const causal = [
      () => `First ${first} ${detail(rng)}, then use what you found to ${second}.`,
      () => `Based on the results when you ${first}, ${second} ${detail(rng)}.`,
      () => `Once you ${first}, take the best option and ${second}.`,
    ];
    return {
      queries: Array.from({ length: vars.count }, (_, i) => {
        const usage = i % 2 === 1 ? ('causal' as const) : ('parallel' as const);
        const query = rng.pick(usage === 'causal' ? causal : parallel)();
        return { query: withTypicalFaults(query, { name: vars.secondName, nameForHuman: vars.secondName }, rng), usage };
      }),
    };
  },
});
