import { z } from 'zod';
import { definePrompt } from '../core/prompt.ts';
import { requestQuery, simpleArithmetic, looksLikeCalculator, withTypicalFaults } from './toole-offline.ts';
import { readList } from './toole-numbered-list.ts';
import { USER_LIST_FORMAT, type ToolVars } from './toole-text.ts';

/** ToolE direct diverse generation (paper §2.2.1 (1), Appendix D.1): varied user queries for one tool. */
export interface DirectVars extends ToolVars {
  count: number;
}

export const QueryList = z.object({ queries: z.array(z.string().min(1)).min(1) });
export type QueryList = z.infer<typeof QueryList>;

export default definePrompt<DirectVars, QueryList>({
  id: 'toole/direct',
  template: `An AI assistant can call the tool below to serve its users better. The tool is described twice: once for the people who use it and once for the assistant.

Description for users: {{humanDescription}}

Description for the assistant: {{modelDescription}}

Write {{count}} different messages a user might send that the assistant would best answer by calling this tool. Give only what the user says. Make the messages clearly different from one another: mix questions, requests and commands, and vary how much detail they carry. Do not name the tool.

${USER_LIST_FORMAT}`,
  schema: QueryList,
  parseText: (text) => ({ queries: readList(text) }),
  temperature: 1,
  offline: (vars, rng) => ({
    queries: Array.from({ length: vars.count }, () =>
      looksLikeCalculator(vars.humanDescription) && rng.chance(0.25) ? simpleArithmetic(rng) : withTypicalFaults(requestQuery(vars.humanDescription, rng, [vars.name, vars.nameForHuman]), vars, rng),
    ),
  }),
});
