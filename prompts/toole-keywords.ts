import { z } from 'zod';
import { definePrompt } from '../core/prompt.ts';
import { pickWords, withoutNames } from './toole-offline.ts';
import { readList } from './toole-numbered-list.ts';
import { TOOL_INTRO, type ToolVars } from './toole-text.ts';

/** ToolE keyword extraction (paper §2.2.1 (3), Appendix D.1): short labels of a tool, for keyword generation. */
export interface KeywordVars extends ToolVars {
  count: number;
}

export const KeywordList = z.object({ keywords: z.array(z.string().min(1).max(80)).min(1) });
export type KeywordList = z.infer<typeof KeywordList>;

export default definePrompt<KeywordVars, KeywordList>({
  id: 'toole/keywords',
  template: `${TOOL_INTRO}

Give {{count}} words or short phrases that label what this tool is for. A label need not appear in the descriptions. Keep every label as short as you can.

Answer as a numbered list:
1. <label>
2. <label>
...`,
  schema: KeywordList,
  parseText: (text) => ({ keywords: readList(text).map((k) => k.replace(/[.;,]$/, '')) }),
  temperature: 0.7,
  offline: (vars, rng) => ({ keywords: pickWords(withoutNames(`${vars.humanDescription} ${vars.modelDescription}`, [vars.name, vars.nameForHuman]), vars.count, rng) }),
});
