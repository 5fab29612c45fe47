import { z } from 'zod';
import { definePrompt } from '../core/prompt.ts';
import type { Json } from '../core/records.ts';
import { alsoLead, changeValues, giveValues, requestSentence, type OfflineCall, type OfflineLanguage } from './acebench-offline.ts';

/**
 * ACEBench §3.1 (2), multi-agent dialogues, the user agent: opens with a need, answers the
 * assistant's questions, then adjusts a value of the call just made or switches to another need.
 */

export type UserMove = 'open' | 'answer' | 'adjust' | 'switch';

/** What the offline renderer says (the stage plans it; the model never sees it). */
export interface UserPlan {
  language: OfflineLanguage;
  move: UserMove;
  /** The call this part of the dialogue leads to. */
  call: OfflineCall;
  /** `open`/`switch`: the parameters the user leaves out at first; `answer`/`adjust`: the ones to state now. */
  parameters: string[];
}

export interface UserVars extends Record<string, unknown> {
  /** What the user does now, in words (see `userMoveText`). */
  move: string;
  /** The need: the function that serves it (JSON), which the user does not name. */
  need: string;
  /** The dialogue so far (`user:` / `system:` lines), or "(none yet)". */
  dialogue: string;
  languageRule: string;
  today: string;
  plan: UserPlan;
}

export const UserAnswer = z.object({ text: z.string().min(1) });
export type UserAnswer = z.infer<typeof UserAnswer>;

/** The user's move in words, for the prompt. */
export function userMoveText(move: UserMove): string {
  switch (move) {
    case 'open':
      return 'Open the conversation with the need below. Give some of the values it takes, but leave at least one required value out, so the assistant has to ask.';
    case 'answer':
      return 'Answer the assistant\'s last question with concrete values.';
    case 'adjust':
      return 'Adjust what you asked for: change one or two values of the call the assistant just made (or refine your request toward the need below), with concrete new values.';
    case 'switch':
      return 'Switch to another need, the one below, unrelated to the previous call; give its values (you may leave one required value out).';
  }
}

export default definePrompt<UserVars, UserAnswer>({
  id: 'acebench/user',
  template: `You play the user in a conversation with an assistant that can call functions.

{{move}}

Need (served by this function; do not name it):
{{need}}

Conversation so far:
{{dialogue}}

{{today}}

Say only what a user would say, in one message, with concrete values (names, dates, numbers) where you give them.
{{languageRule}}

Answer as JSON: {"text": "..."}.`,
  schema: UserAnswer,
  temperature: 0.9,
  maxTokens: 600,
  offline: ({ plan }, rng) => {
    const pick = (names: string[]) => Object.fromEntries(names.filter((name) => name in plan.call.arguments).map((name) => [name, plan.call.arguments[name]])) as Record<string, Json>;
    switch (plan.move) {
      case 'open':
        return { text: requestSentence(plan.call, plan.language, rng, plan.parameters) };
      case 'switch':
        return { text: requestSentence(plan.call, plan.language, rng, plan.parameters, alsoLead(plan.language)) };
      case 'answer':
        return { text: giveValues(pick(plan.parameters), plan.language) };
      case 'adjust':
        return { text: changeValues(pick(plan.parameters), plan.language) };
    }
  },
});
