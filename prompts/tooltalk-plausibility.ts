import { z } from 'zod';
import { definePrompt } from '../core/prompt.ts';

export interface PlausibilityVars extends Record<string, unknown> {
  scenario: string;
  /** The calls in order, joined by " → ". */
  calls: string;
  /** The same, as a list (only the offline renderer reads it). */
  callList: string[];
}

export const PlausibilityAnswer = z.object({ plausible: z.boolean(), reason: z.string() });
export type PlausibilityAnswer = z.infer<typeof PlausibilityAnswer>;

const NEEDS_NO_LOGIN = new Set(['UserLogin', 'RegisterUser', 'SendVerificationCode', 'ResetPassword', 'CurrentWeather', 'ForecastWeather', 'HistoricWeather']);
const ENDS_SESSION = new Set(['LogoutUser', 'DeleteAccount']);

/** ToolTalk §2.2: sampled scenarios that seem implausible are discarded. */
export default definePrompt<PlausibilityVars, PlausibilityAnswer>({
  id: 'tooltalk/plausibility',
  template: `Would a real person plausibly ask a personal assistant for the following, in this order? Judge whether the goal makes sense, whether the steps follow from each other, and whether the calls could work in that order (for example, nothing that needs a logged-in account after the account was deleted or the user logged out, unless they log in again).

Scenario: {{scenario}}
Calls in order: {{calls}}

Answer as JSON: {"plausible": true or false, "reason": "one sentence"}.`,
  schema: PlausibilityAnswer,
  temperature: 0,
  maxTokens: 200,
  // Offline: the order rule only — a call that needs a session after the session ended.
  offline: (vars) => {
    let ended: string | null = null;
    for (const call of vars.callList) {
      if (call === 'UserLogin' || call === 'RegisterUser') ended = null;
      else if (ended && !NEEDS_NO_LOGIN.has(call)) return { plausible: false, reason: `${call} needs a logged-in user after ${ended} ended the session` };
      if (ENDS_SESSION.has(call)) ended = call;
    }
    return { plausible: true, reason: 'the calls can run in this order' };
  },
});
