import { z } from 'zod';
import { definePrompt } from '../core/prompt.ts';
import { JsonValue, type Json } from '../core/records.ts';

/** MTU-Bench data quality check: an LLM re-derives one turn's calls; a disagreement fails the sample. */
export type QualityCheckVars = {
  apis: string;
  history: string;
  user: string;
  assistant: string;
  /** The turn's Thought / Action / Action Input as synthesised. */
  proposal: string;
  /** Offline renderer only: the turn's calls. */
  calls: { tool: string; arguments: Record<string, Json> }[];
};

export const QualityCheckAnswer = z.object({
  thought: z.string(),
  actions: z.array(z.object({ action: z.string().min(1), action_input: z.record(z.string(), JsonValue) })),
});
export type QualityCheckAnswer = z.infer<typeof QualityCheckAnswer>;

export const mtuQualityCheckPrompt = definePrompt<QualityCheckVars, QualityCheckAnswer>({
  id: 'mtu/quality-check',
  system: 'You review tool-use training data. You answer with JSON only.',
  template: `Review one round of a dialogue: the earlier turns, the user's current message, the API call(s) proposed for it and the assistant's reply. The assistant knows nothing about the world (restaurants, flights, weather, …) except through API calls.

Correct the proposal where needed:
1. API choice: a call is wrong if the reply shows an API was used but none is proposed; if no API is needed for this message; if a required value is missing so the assistant should be asking for it instead; or if the wrong API is named.
2. Arguments: every parameter must belong to the API and its value must match the dialogue.
3. Thought: it must justify the choice of API and values from the earlier turns and the current message only, as if the reply were not yet known.
4. Use only the API and parameter names listed below.

APIs:
{{apis}}

Earlier turns:
{{history}}

User: {{user}}
Assistant reply: {{assistant}}

Proposal:
{{proposal}}

Answer with the corrected round as {"thought": "...", "actions": [{"action": "<api_name>", "action_input": {...}}]} ("actions" is [] when no API should be called).`,
  schema: QualityCheckAnswer,
  // Offline, the reviewer accepts the proposal as it stands.
  offline: (vars) => ({ thought: '[offline template] The proposal matches the dialogue.', actions: vars.calls.map((c) => ({ action: c.tool, action_input: c.arguments })) }),
  temperature: 0,
});
