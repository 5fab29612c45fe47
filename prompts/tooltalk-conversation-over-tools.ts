import { z } from 'zod';
import { definePrompt } from '../core/prompt.ts';
import { JsonValue, type Json, type ToolSpec } from '../core/records.ts';
import type { Rng } from '../core/rng.ts';
import { objectForSchema } from '../core/schema-values.ts';

/** Who talks, where and when (the system prompt ToolTalk shows carries location, timestamp and username). */
export interface ConversationFacts {
  location: string;
  timestamp: string;
  username: string;
}

export interface OverToolsVars extends Record<string, unknown> {
  /** `easy`: a few turns and exactly one call; `tooltalk`: at least 3 calls. */
  kind: string;
  scenario: string;
  requiredApi: string;
  apiDocs: string;
  /** The facts as JSON. */
  facts: string;
  /** What only the offline renderer reads: the scenario's category, calls and tools, the facts. */
  category: 'easy' | 'tooltalk';
  calls: string[];
  tools: ToolSpec[];
  world: ConversationFacts;
}

const DraftCall = z.object({ api_name: z.string().min(1), parameters: z.record(z.string(), JsonValue) });
export const OverToolsDraft = z.object({
  turns: z.array(z.object({ role: z.enum(['user', 'assistant']), text: z.string().min(1), calls: z.array(DraftCall).default([]) })).min(2),
});
export type OverToolsDraft = z.infer<typeof OverToolsDraft>;

/**
 * ToolTalk §2.2 over imported tools: a conversation written from a sampled scenario. Results are
 * not known when it is written (they come from the live server, or are simulated, afterwards), so
 * a value taken from an earlier result is written as a reference to it, and the assistant's replies
 * are written again once the results are in (`tooltalk/replies`).
 */
export default definePrompt<OverToolsVars, OverToolsDraft>({
  id: 'tooltalk/conversation-over-tools',
  template: `Write a conversation between a user and an assistant that can call the APIs documented below. Use the scenario as general guidance.

Rules:
- The conversation alternates user and assistant turns, starts with the user and ends with a user turn. An assistant turn may list the API calls it makes before its reply, with their exact parameters.
- {{kind}}
- The required API {{requiredApi}} must be called.
- Every parameter value must come from the conversation: something the user said, or a field of an earlier call's result. The results are not known yet: write a value taken from a result as {"$ref": "call_<n>.<field>"}, where call_<n> is the n-th call of the conversation (counting from call_1) and <field> one of its documented result fields. Never invent ids.
- Parameter values must fit each parameter's schema (type, enum, format).
- The assistant's replies may say what it is doing; they are rewritten once the results are known.

Scenario: {{scenario}}

Facts:
{{facts}}

APIs:
{{apiDocs}}

Answer as JSON: {"turns": [{"role": "user" | "assistant", "text": "...", "calls": [{"api_name": "...", "parameters": {...}}]}]}.`,
  schema: OverToolsDraft,
  temperature: 0.7,
  maxTokens: 3000,
  offline: (vars, rng) => draftOverTools(vars, rng),
});

/**
 * The offline author: a user turn per call stating every literal value, the assistant's turn making
 * the call; a required parameter named like a result field of an earlier call refers to it.
 */
function draftOverTools(vars: OverToolsVars, rng: Rng): OverToolsDraft {
  const byName = new Map(vars.tools.map((tool) => [tool.name, tool]));
  const apis = (vars.category === 'easy' ? [vars.requiredApi] : vars.calls).filter((api) => byName.has(api));
  const made: { id: string; tool: ToolSpec }[] = [];
  const turns: OverToolsDraft['turns'] = [];
  for (const api of apis) {
    const tool = byName.get(api)!;
    const parameters: Record<string, Json> = {};
    const literal: string[] = [];
    for (const name of tool.parameters.required) {
      const earlier = vars.category === 'easy' ? undefined : [...made].reverse().find((call) => name in call.tool.returns.properties);
      if (earlier) parameters[name] = { $ref: `${earlier.id}.${name}` };
      else literal.push(name);
    }
    // Drawn together, so that a range's two ends come in order.
    const properties = Object.fromEntries(literal.map((name) => [name, tool.parameters.properties[name]]));
    const values = objectForSchema({ type: 'object', properties, required: literal }, rng, { today: vars.world.timestamp.slice(0, 10), optionalShare: 0 });
    Object.assign(parameters, values);
    const stated = literal.map((name) => `${name} ${JSON.stringify(values[name])}`);
    const lead = made.length ? 'Next' : `Hi, this is ${vars.world.username}`;
    turns.push({ role: 'user', text: `${lead}: template request to ${api}${stated.length ? ` with ${stated.join(', ')}` : ''}.`, calls: [] });
    turns.push({ role: 'assistant', text: `Template reply: calling ${api}.`, calls: [{ api_name: api, parameters }] });
    made.push({ id: `call_${made.length + 1}`, tool });
  }
  turns.push({ role: 'user', text: 'Thanks, that is all.', calls: [] });
  return { turns };
}
