import { z } from 'zod';
import { definePrompt } from '../core/prompt.ts';
import { actionPhrase, detail, withoutNames, withTypicalFaults } from './toole-offline.ts';
import { readList, splitLabelled } from './toole-numbered-list.ts';
import { TOOL_INTRO, type ToolVars } from './toole-text.ts';

/** ToolE keyword generation (paper §2.2.1 (3), Appendix D.1): one query per extracted label. */
export interface KeywordQueryVars extends ToolVars {
  /** The labels, as a numbered list text. */
  keywords: string;
  count: number;
}

export const KeywordQueries = z.object({
  queries: z.array(z.object({ keyword: z.string().nullable(), query: z.string().min(1) })).min(1),
});
export type KeywordQueries = z.infer<typeof KeywordQueries>;

export default definePrompt<KeywordQueryVars, KeywordQueries>({
  id: 'toole/keyword-queries',
  template: `${TOOL_INTRO}

These {{count}} labels describe the tool:
{{keywords}}

For each label, write one message a user might send to the assistant, about that label, when they need this tool. Do not name the tool.

Answer as a numbered list in the order of the labels:
1. <label>: <message>
2. <label>: <message>
...`,
  schema: KeywordQueries,
  parseText: (text) => ({
    queries: readList(text).map((item) => {
      const { label, text: query } = splitLabelled(item);
      return { keyword: label ?? null, query };
    }),
  }),
  temperature: 1,
  offline: (vars, rng) => {
    const action = actionPhrase(withoutNames(vars.humanDescription, [vars.name, vars.nameForHuman]));
    const frames = [(k: string) => `${k[0].toUpperCase()}${k.slice(1)}: can you ${action} ${detail(rng)}?`, (k: string) => `I'm interested in ${k}. Help me ${action}.`, (k: string) => `Anything new about ${k} ${detail(rng)}?`];
    const keywords = vars.keywords.split('\n').map((line) => line.replace(/^\d+\.\s*/, '').trim()).filter(Boolean);
    return { queries: keywords.map((keyword) => ({ keyword, query: withTypicalFaults(rng.pick(frames)(keyword), vars, rng) })) };
  },
});
