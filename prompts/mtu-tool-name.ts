import { z } from 'zod';
import { definePrompt } from '../core/prompt.ts';
import { offlineApiNames, offlineSituation } from './mtu-offline.ts';
import { Situation } from './mtu-situation.ts';

/** MTU-Bench tool name synthesis: which of the five situations an assistant turn is in, and which APIs it needs. */
export type ToolNameVars = {
  domains: string;
  history: string;
  user: string;
  assistant: string;
  /** Offline renderer only: whether earlier turns already called an API. */
  historyHasCalls: boolean;
};

export const ToolNameAnswer = z.object({
  analysis: z.string(),
  situation: Situation,
  /** snake_case API names, verb first (`search_restaurant`); empty unless the situation is `api_call`. */
  apis: z.array(z.string().min(1)),
});
export type ToolNameAnswer = z.infer<typeof ToolNameAnswer>;

export const mtuToolNamePrompt = definePrompt<ToolNameVars, ToolNameAnswer>({
  id: 'mtu/tool-name',
  system: 'You turn task-oriented dialogues into tool-use data. You answer with JSON only.',
  template: `Below is a dialogue: the earlier turns, then the user's current message and the assistant's reply to it.
Decide whether the assistant had to call an API (to look something up or to carry out an action) in order to give that reply.

Pick exactly one situation:
- "api_call": an API call was needed and the reply shows the request was handled. Name every API needed, in calling order, in "apis". Names are short snake_case, start with a verb and name the domain (for example search_restaurant, book_restaurant). Domains in this data include: {{domains}}.
- "information_missing": an API would be needed, but the assistant is asking the user for something it cannot call it without (say, book_restaurant without a restaurant name).
- "confirmation": the assistant only repeats details back to the user to confirm them.
- "information_exists": earlier turns already hold what the reply says, so no new call is needed.
- "chit_chat": small talk or anything else that needs no API.

Earlier turns:
{{history}}

User: {{user}}
Assistant: {{assistant}}

Answer as {"analysis": "<your reasoning>", "situation": "<one of the five>", "apis": ["<api_name>", ...]}; "apis" is [] unless the situation is "api_call".`,
  schema: ToolNameAnswer,
  offline: (vars) => {
    const situation = offlineSituation(vars.user, vars.assistant, vars.historyHasCalls);
    const apis = situation === 'api_call' ? offlineApiNames(vars.user, vars.assistant, vars.domains.split(',')[0]?.trim() || 'item') : [];
    return { analysis: `[offline template] situation ${situation} read from the wording of the reply.`, situation, apis };
  },
  temperature: 0,
});
