import { z } from 'zod';
import { definePrompt } from '../core/prompt.ts';
import { askForValues, type OfflineCall, type OfflineLanguage } from './acebench-offline.ts';
import { DialogueCall } from './acebench-dialogue.ts';

/**
 * ACEBench §3.1 (2), multi-agent dialogues, the assistant agent: asks for the values a call still
 * lacks, or makes the call once it has them.
 */

/** What the offline renderer does (the stage plans it; the model never sees it). */
export interface AssistantPlan {
  language: OfflineLanguage;
  call: OfflineCall;
  /** Required parameters the user has not given yet: ask for them, else call. */
  ask: string[];
}

export interface AssistantVars extends Record<string, unknown> {
  functions: string;
  dialogue: string;
  languageRule: string;
  today: string;
  plan: AssistantPlan;
}

export const AssistantAnswer = z.object({
  action: z.enum(['ask', 'call']),
  /** `ask`: the question to the user. */
  text: z.string().default(''),
  /** `call`: the calls, with every argument taken from the conversation. */
  calls: z.array(DialogueCall).default([]),
});
export type AssistantAnswer = z.infer<typeof AssistantAnswer>;

export default definePrompt<AssistantVars, AssistantAnswer>({
  id: 'acebench/assistant',
  template: `You are an assistant that serves the user by calling the functions below.

Functions (JSON Schema):
{{functions}}

Conversation so far:
{{dialogue}}

{{today}}

Serve the user's latest request. If a required value of the function it needs is still unknown, ask the user for it ("action": "ask", with your question in "text"); do not guess values. Otherwise call it ("action": "call") with every argument taken from the conversation, satisfying the function's schema (types, enums, formats), using only declared parameter names.
{{languageRule}}

Answer as JSON: {"action": "ask" | "call", "text": "...", "calls": [{"name": "...", "arguments": {...}}]}.`,
  schema: AssistantAnswer,
  temperature: 0.3,
  maxTokens: 1500,
  offline: ({ plan }) =>
    plan.ask.length
      ? { action: 'ask', text: askForValues(plan.ask, plan.language), calls: [] }
      : { action: 'call', text: '', calls: [{ name: plan.call.name, arguments: plan.call.arguments }] },
});
