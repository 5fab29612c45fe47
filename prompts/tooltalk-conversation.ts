import { z } from 'zod';
import { definePrompt } from '../core/prompt.ts';
import { JsonValue } from '../core/records.ts';
import { draftConversation, type Draft, type DraftWorld } from './tooltalk-offline.ts';

export interface ConversationVars extends Record<string, unknown> {
  /** `easy`: a few turns and exactly one call; `tooltalk`: at least 3 calls. */
  kind: string;
  scenario: string;
  requiredApi: string;
  apiDocs: string;
  /** The user, session, place and time, and the database records the conversation may use (JSON). */
  facts: string;
  /** The same facts, structured (only the offline renderer reads it). */
  world: DraftWorld;
}

const DraftCall = z.object({ api_name: z.string().min(1), parameters: z.record(z.string(), JsonValue), expect: z.enum(['success', 'failure']).default('success') });
export const DraftAnswer = z.object({
  turns: z.array(z.object({ role: z.enum(['user', 'assistant']), text: z.string().min(1), calls: z.array(DraftCall).default([]) })).min(2),
  overlay: z.record(z.string(), z.record(z.string(), z.record(z.string(), JsonValue))).default({}),
});

/** ToolTalk §2.2: a conversation written from a sampled scenario, grounded in the mock databases. */
export default definePrompt<ConversationVars, Draft>({
  id: 'tooltalk/conversation',
  template: `Write a conversation between a user and an assistant that can call the APIs documented below. Use the scenario as general guidance.

Rules:
- The conversation alternates user and assistant turns, starts with the user and ends with a user turn. An assistant turn may list the API calls it makes before its reply, with their exact parameters.
- {{kind}}
- The required API {{requiredApi}} must be called.
- Every parameter value must come from the conversation: something the user said, or a field of an earlier call's result (an id found by a search, for example). Never invent ids.
- Use only the records listed in the facts below: the user's own alarms, events, emails, messages and reminders, the other users, and the weather on file. If the scenario needs a record the facts lack, declare it in "overlay" as {"<Database>": {"<username>": {"<id>": record}}} with the same fields as the listed records of that database, and use it.
- Times are HH:MM:SS and date-times YYYY-MM-DD HH:MM:SS, relative to the current time in the facts. Do not pass session_token: the system supplies it.
- Mark a call "expect": "failure" only when the conversation means it to fail (a wrong password, say); otherwise it must succeed.

Scenario: {{scenario}}

Facts:
{{facts}}

APIs:
{{apiDocs}}

Answer as JSON: {"turns": [{"role": "user" | "assistant", "text": "...", "calls": [{"api_name": "...", "parameters": {...}, "expect": "success"}]}], "overlay": {}}.`,
  schema: DraftAnswer as z.ZodType<Draft>,
  temperature: 0.7,
  maxTokens: 3000,
  offline: (vars, rng) => draftConversation(vars.world, rng),
});
