import { z } from 'zod';
import { definePrompt } from '../core/prompt.ts';
import { describeParameter, describeTool, proposeReturns } from './mtu-offline.ts';

/**
 * MTU-Bench tool documentation: the prose of a tool's entry. The structure (parameters, types,
 * formats, enums, required / optional, defaults, result fields) comes from the data; the model
 * writes descriptions and, only for a tool whose data shows no results, proposes result fields.
 */
export type ToolDocVars = {
  name: string;
  /** What the source says about the tool, if anything. */
  known: string;
  parameters: { name: string; type?: unknown; format?: string; enum?: unknown[]; examples: unknown[] }[];
  returns: { name: string; examples: unknown[] }[];
  /** True when the data shows no result fields and the model should propose some. */
  proposeReturns: boolean;
};

export const ToolDocAnswer = z.object({
  description: z.string().min(1),
  parameters: z.record(z.string(), z.string()),
  returns: z.array(z.object({ name: z.string().min(1), type: z.string(), description: z.string() })),
});
export type ToolDocAnswer = z.infer<typeof ToolDocAnswer>;

export const mtuToolDocPrompt = definePrompt<ToolDocVars, ToolDocAnswer>({
  id: 'mtu/tool-doc',
  system: 'You write API documentation for a tool library. You answer with JSON only.',
  template: `Document the API "{{name}}" for a tool library that language models read before calling tools.
What the source data says about it (may be empty): {{known}}

Its parameters, with the types and formats observed in real calls and example values:
{{parameters}}

Its result fields as observed (may be empty):
{{returns}}

Write:
- "description": one or two sentences on what the API does and when to use it.
- "parameters": for every parameter above, one sentence on what value it takes, keyed by parameter name. Do not add or drop parameters.
- "returns": {{proposeReturns}} — if true, propose the result fields such an API would return as [{"name", "type", "description"}]; if false, describe each observed result field the same way and add none.

Answer as {"description": "...", "parameters": {"<name>": "..."}, "returns": [{"name": "...", "type": "...", "description": "..."}]}.`,
  schema: ToolDocAnswer,
  offline: (vars) => ({
    description: vars.known || `[offline template] ${describeTool(vars.name, vars.parameters.map((p) => p.name))}`,
    parameters: Object.fromEntries(vars.parameters.map((p) => [p.name, describeParameter(p.name)])),
    returns: vars.proposeReturns
      ? proposeReturns(vars.name, vars.parameters.map((p) => p.name))
      : vars.returns.map((r) => ({ name: r.name, type: 'string', description: describeParameter(r.name) })),
  }),
  temperature: 0,
});
