import { z } from 'zod';
import { definePrompt } from '../core/prompt.ts';
import { JsonValue, type Json } from '../core/records.ts';
import { simulateValue, wordsOf, type ValueShape } from './mtu-offline.ts';

/** MTU-Bench observation simulation: what each call without a real result returned, and replies where the source has none. */
export type PendingCall = {
  round: number;
  call_id: string;
  tool: string;
  arguments: Record<string, Json>;
  /** The tool's documented result fields. */
  returns: Record<string, ValueShape>;
};

export type ObservationVars = {
  apis: string;
  dialogue: string;
  today: string;
  /** Calls whose results must be simulated, as JSON. */
  pending: PendingCall[];
  /** Rounds whose assistant reply is missing and must be written from the results. */
  needResponse: number[];
};

export const ObservationAnswer = z.object({
  observations: z.array(z.object({ call_id: z.string().min(1), observation: z.record(z.string(), JsonValue) })),
  responses: z.array(z.object({ round: z.number().int().nonnegative(), response: z.string().min(1) })),
});
export type ObservationAnswer = z.infer<typeof ObservationAnswer>;

export const mtuObservationPrompt = definePrompt<ObservationVars, ObservationAnswer>({
  id: 'mtu/observation',
  system: 'You simulate API back-ends for tool-use dialogues. You answer with JSON only.',
  template: `Below is a dialogue between a user and an assistant that calls APIs, and the documentation of those APIs. Today is {{today}}.

1. For each pending call listed below, write the "observation": the JSON object the API returned. Use only the API's documented result fields; fill them with realistic values that agree with the call's arguments, with earlier results in the dialogue and with what the assistant says afterwards. If the assistant's reply shows that nothing was found, return {}. If it shows the call did not come back, return {"error": "Time out."}.
2. For each round listed under "replies needed", write the assistant's reply to the user based on the results (report what was found or done, or ask what is still needed).

APIs:
{{apis}}

Dialogue:
{{dialogue}}

Pending calls:
{{pending}}

Replies needed for rounds: {{needResponse}}

Answer as {"observations": [{"call_id": "...", "observation": {...}}], "responses": [{"round": <n>, "response": "..."}]}.`,
  schema: ObservationAnswer,
  offline: (vars, rng) => {
    const observations = vars.pending.map((call) => {
      const observation: Record<string, Json> = {};
      for (const [field, shape] of Object.entries(call.returns)) {
        observation[field] = field in call.arguments ? call.arguments[field] : simulateValue(field, shape, rng, vars.today);
      }
      return { call_id: call.call_id, observation };
    });
    const responses = vars.needResponse.map((round) => {
      const calls = vars.pending.filter((c) => c.round === round);
      const text = calls.length ? calls.map((c) => `${wordsOf(c.tool)} is done`).join(' and ') : 'I have noted that';
      return { round, response: `[offline template] ${text.charAt(0).toUpperCase() + text.slice(1)}.` };
    });
    return { observations, responses };
  },
  temperature: 0.7,
});
