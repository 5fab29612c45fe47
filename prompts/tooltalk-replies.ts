import { z } from 'zod';
import { definePrompt } from '../core/prompt.ts';
import type { Json } from '../core/records.ts';

export interface ReplyTurn {
  /** Index of the assistant turn in the conversation. */
  turn: number;
  calls: { api_name: string; parameters: Record<string, Json>; result: Json }[];
}

export interface RepliesVars extends Record<string, unknown> {
  /** The conversation so far, as text: user turns, the assistant's calls and their results. */
  conversation: string;
  /** The assistant turns that need a reply (their indexes). */
  turns: number[];
  /** The same turns with their calls and results (only the offline renderer reads it). */
  replyTurns: ReplyTurn[];
}

export const RepliesAnswer = z.object({ replies: z.array(z.object({ turn: z.number().int().nonnegative(), text: z.string().min(1) })) });
export type RepliesAnswer = z.infer<typeof RepliesAnswer>;

/** The assistant's replies, written once the calls' real (or simulated) results are known. */
export default definePrompt<RepliesVars, RepliesAnswer>({
  id: 'tooltalk/replies',
  template: `Below is a conversation between a user and an assistant that calls APIs, with every call's actual result. Write the assistant's reply for each assistant turn listed: what it found or did, based only on the results of that turn's calls and the earlier turns, addressed to the user. Do not invent facts the results do not state.

Conversation:
{{conversation}}

Assistant turns that need a reply: {{turns}}

Answer as JSON: {"replies": [{"turn": <n>, "text": "..."}]}.`,
  schema: RepliesAnswer,
  temperature: 0.3,
  maxTokens: 2000,
  offline: (vars) => ({
    replies: vars.replyTurns.map(({ turn, calls }) => ({
      turn,
      text: calls.length ? `Template reply: ${calls.map((call) => `${call.api_name} returned ${summary(call.result)}`).join('; ')}.` : 'Template reply: noted.',
    })),
  }),
});

function summary(result: Json): string {
  if (!result || typeof result !== 'object' || Array.isArray(result)) return JSON.stringify(result).slice(0, 80);
  const fields = Object.entries(result).slice(0, 3).map(([key, value]) => `${key} ${JSON.stringify(value).slice(0, 40)}`);
  return fields.length ? fields.join(', ') : 'nothing';
}
