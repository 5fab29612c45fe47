import { z } from 'zod';
import { definePrompt } from '../core/prompt.ts';
import { JsonValue } from '../core/records.ts';
import { describeTool, extractArguments, wordsOf } from './mtu-offline.ts';

/** MTU-Bench tool parameter synthesis: the call(s) behind an assistant turn, with their arguments. */
export type ToolParametersVars = {
  apis: string;
  history: string;
  user: string;
  assistant: string;
  /** API names the situation step proposed, in calling order. */
  proposed: string[];
  /** Offline renderer only: earlier user messages, newest last (values may be inherited from them). */
  earlierUserTurns: string[];
};

export const ToolParametersAnswer = z.object({
  thought: z.string(),
  actions: z.array(
    z.object({
      action: z.string().min(1),
      action_input: z.record(z.string(), JsonValue),
      /** One sentence saying what the API does (used when the API is new). */
      description: z.string(),
    }),
  ),
});
export type ToolParametersAnswer = z.infer<typeof ToolParametersAnswer>;

export const mtuToolParametersPrompt = definePrompt<ToolParametersVars, ToolParametersAnswer>({
  id: 'mtu/tool-parameters',
  system: 'You turn task-oriented dialogues into tool-use data. You answer with JSON only.',
  template: `Below is a dialogue: the earlier turns, then the user's current message and the assistant's reply to it.
The assistant needed one or more API calls for that reply; the proposed APIs are: {{proposed}}.

Write the calls:
1. For each call give the API name in "action" and its arguments in "action_input" as {"parameter_name": value}. Take every value from the dialogue; never invent one.
2. Use the API and parameter names listed below whenever they fit. Only when a needed parameter is not listed may you add a new snake_case name.
3. If a call is impossible because a required value is missing, leave "actions" empty and say in "thought" which value is missing.
4. In "thought", reason as the assistant would before replying: what the user wants, which API serves it and where each value comes from.
5. For an API that is not listed below, give a one-sentence "description" of what it does (otherwise repeat the listed description).

APIs known so far:
{{apis}}

Earlier turns:
{{history}}

User: {{user}}
Assistant: {{assistant}}

Answer as {"thought": "...", "actions": [{"action": "<api_name>", "action_input": {...}, "description": "..."}]}.`,
  schema: ToolParametersAnswer,
  offline: (vars) => {
    const stated = extractArguments(vars.user);
    // Values stated in earlier turns and not repeated now are inherited from them.
    const inherited = Object.assign({}, ...vars.earlierUserTurns.map(extractArguments));
    const args = { ...inherited, ...stated };
    const actions = vars.proposed.map((name) => ({ action: name, action_input: args, description: describeTool(name, Object.keys(args)) }));
    const what = vars.proposed.map(wordsOf).join(' and ');
    return { thought: `[offline template] The user wants to ${what}; the values come from the dialogue.`, actions };
  },
  temperature: 0,
});
