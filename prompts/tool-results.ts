import { z } from 'zod';
import { definePrompt } from '../core/prompt.ts';
import { isJsonObject, isRef, JsonValue, type Json } from '../core/records.ts';
import { objectForSchema, valueForSchema } from '../core/schema-values.ts';

/**
 * Simulated tool results where no live server answers: the model plays the tools' back-ends for one
 * sample's calls in order, each result an object its tool's result schema (`returns`) accepts. The
 * stage that asks checks every result against that schema; offline, results are drawn from it,
 * a field named like an argument echoing the argument's value.
 */

export type SimulatedCall = {
  call_id: string;
  tool: string;
  /** The call's arguments; `{"$ref": "<call_id>.<field>"}` stands for a field of an earlier result. */
  arguments: Record<string, unknown>;
  /** The tool's result schema (a JSON-Schema object). */
  returns: Record<string, unknown>;
};

export type ToolResultsVars = {
  today: string;
  /** What the user asked, for results that fit it. */
  request: string;
  calls: SimulatedCall[];
};

export const ToolResultsAnswer = z.object({ results: z.array(z.object({ call_id: z.string().min(1), result: z.record(z.string(), JsonValue) })) });
export type ToolResultsAnswer = z.infer<typeof ToolResultsAnswer>;

/** An offline result: drawn from the result schema, its fields named like a literal argument taking that argument's value when the schema's type allows. */
export function offlineResult(call: Pick<SimulatedCall, 'arguments' | 'returns'>, today: string, rng: Parameters<typeof valueForSchema>[2]): Record<string, Json> {
  const result = objectForSchema(call.returns, rng, { today, optionalShare: 1 });
  const fields = isJsonObject(call.returns.properties) ? (call.returns.properties as Record<string, Record<string, unknown>>) : {};
  for (const [name, value] of Object.entries(call.arguments)) {
    if (!(name in result) || isRef(value as Json) || value === null || typeof value === 'object') continue;
    const type = fields[name]?.type;
    if (type === typeof value || (type === 'integer' && Number.isInteger(value)) || (type === 'number' && typeof value === 'number')) result[name] = value as Json;
  }
  return result;
}

export const toolResultsPrompt = definePrompt<ToolResultsVars, ToolResultsAnswer>({
  id: 'tools/simulate-results',
  system: 'You simulate the back-ends of APIs. You answer with JSON only.',
  template: `An assistant made the API calls below, in this order, for this request: {{request}}
Today is {{today}}.

For each call, write the result the API returned: a JSON object its result schema ("returns") accepts exactly — its fields, types, enums and formats, every required field — with realistic values that agree with the call's arguments and with the earlier results. An argument {"$ref": "<call_id>.<field>"} took that field of an earlier result: make them agree.

Calls:
{{calls}}

Answer as {"results": [{"call_id": "...", "result": {...}}]}, one entry per call.`,
  schema: ToolResultsAnswer,
  offline: (vars, rng) => ({ results: vars.calls.map((call) => ({ call_id: call.call_id, result: offlineResult(call, vars.today, rng) })) }),
  temperature: 0.7,
});
