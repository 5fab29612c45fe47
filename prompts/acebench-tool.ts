import { z } from 'zod';
import { definePrompt } from '../core/prompt.ts';
import { toolResult, type OfflineCall, type OfflineLanguage } from './acebench-offline.ts';

/**
 * ACEBench §3.1 (2), multi-agent dialogues, the tool agent: answers a call with a plausible result,
 * which the dialogue shows as the `system:` line after the call.
 */

export interface ToolVars extends Record<string, unknown> {
  /** The function's definition (JSON). */
  function: string;
  /** The call as the dialogue prints it. */
  call: string;
  languageRule: string;
  /** The call, structured (only the offline renderer reads it). */
  plan: { language: OfflineLanguage; call: OfflineCall };
}

export const ToolAnswer = z.object({ result: z.string().min(1) });
export type ToolAnswer = z.infer<typeof ToolAnswer>;

export default definePrompt<ToolVars, ToolAnswer>({
  id: 'acebench/tool',
  template: `You simulate a function's execution. Given its definition and a call, write the result it returns, as a short message to the user: concrete, plausible, consistent with every argument (ids, dates, amounts), one to three sentences or a short list.

Function:
{{function}}

Call: {{call}}

{{languageRule}}

Answer as JSON: {"result": "..."}.`,
  schema: ToolAnswer,
  temperature: 0.7,
  maxTokens: 500,
  offline: ({ plan }, rng) => ({ result: toolResult(plan.call, plan.language, rng) }),
});
