import { z } from 'zod';
import { definePrompt } from '../core/prompt.ts';
import { contentWords } from './toole-offline.ts';

/** ToolE overlap resolution (Appendix A.1): which of the tools a decomposed tool was split into answers a query. */
export interface ReassignVars extends Record<string, unknown> {
  query: string;
  /** The candidate tools, one "- name: description" line each. */
  choices: string;
}

export const ReassignAnswer = z.object({ tool: z.string().min(1) });
export type ReassignAnswer = z.infer<typeof ReassignAnswer>;

export default definePrompt<ReassignVars, ReassignAnswer>({
  id: 'toole/reassign-query',
  template: `A tool that did several things has been split up; each of its functions now belongs to one of the tools below.
{{choices}}

Which one tool best answers this user query?
Query: {{query}}

Answer with JSON giving the tool's exact name: {"tool": "<name>"}`,
  schema: ReassignAnswer,
  temperature: 0,
  // Offline: the tool whose name and description share the most words with the query (first on ties).
  offline: (vars) => {
    const words = new Set(contentWords(vars.query));
    let best = { tool: '', score: -1 };
    for (const line of vars.choices.split('\n').filter((l) => l.startsWith('- '))) {
      const name = line.slice(2, line.indexOf(':'));
      const score = contentWords(line).filter((w) => words.has(w)).length;
      if (score > best.score) best = { tool: name, score };
    }
    return { tool: best.tool || 'none' };
  },
});
