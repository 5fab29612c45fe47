import { z } from 'zod';
import { definePrompt } from '../core/prompt.ts';
import { JsonValue, type Json } from '../core/records.ts';
import { offlineResult } from './tool-results.ts';

export interface ToolResultVars extends Record<string, unknown> {
  tool: string;
  description: string;
  /** The tool's result schema (JSON Schema, as JSON text). */
  returnsSchema: string;
  /** The call's arguments (JSON text). */
  arguments: string;
  /** The conversation's earlier calls and their results (JSON text). */
  history: string;
  /** Why the previous answer was refused ('' the first time). */
  problem: string;
  /** What only the offline renderer reads. */
  returns: Record<string, unknown>;
  args: Record<string, Json>;
  /** The conversation's date (YYYY-MM-DD), which offline dates follow. */
  today: string;
}

export const ToolResultAnswer = z.object({ result: z.record(z.string(), JsonValue) });
export type ToolResultAnswer = z.infer<typeof ToolResultAnswer>;

/**
 * A tool's result where no live server answers: the LLM plays the tool, its answer checked against
 * the tool's result schema by the stage (and asked again once with the problem).
 */
export default definePrompt<ToolResultVars, ToolResultAnswer>({
  id: 'tooltalk/tool-result',
  system: 'You simulate API back-ends for tool-use conversations. You answer with JSON only.',
  template: `You are the API {{tool}}: {{description}}

It was called with these arguments:
{{arguments}}

Earlier calls in the same conversation and what they returned (stay consistent with them: an id created earlier is found later, a deleted record is gone):
{{history}}

Return what the API returns: a JSON object that validates against this JSON Schema, with realistic values that agree with the arguments.
{{returnsSchema}}
{{problem}}
Answer as JSON: {"result": {...}}.`,
  schema: ToolResultAnswer,
  temperature: 0.3,
  maxTokens: 1500,
  offline: (vars, rng) => ({ result: offlineResult({ arguments: vars.args, returns: vars.returns }, vars.today, rng) }),
});
