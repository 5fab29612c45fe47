import { z } from 'zod';
import { definePrompt } from '../core/prompt.ts';
import type { Json } from '../core/records.ts';
import { wordsOf } from './mtu-offline.ts';
import type { Situation } from './mtu-situation.ts';

/** MTU-Bench thought synthesis: the assistant's reasoning before each round's (non-)call. */
export type ThoughtRound = {
  round: number;
  user: string;
  assistant: string;
  situation: Situation;
  calls: { tool: string; arguments: Record<string, Json> }[];
  /** Required parameters of the intended tool that nobody has stated yet. */
  missing: string[];
};

export type ThoughtVars = {
  apis: string;
  /** The dialogue as rounds: User / Action / Action Input / Assistant. */
  dialogue: string;
  /** Offline renderer only: the same rounds, structured. */
  rounds: ThoughtRound[];
};

export const ThoughtAnswer = z.object({
  thoughts: z.array(z.object({ round: z.number().int().nonnegative(), thought: z.string().min(1) })),
});
export type ThoughtAnswer = z.infer<typeof ThoughtAnswer>;

function offlineThought(r: ThoughtRound): string {
  const args = (a: Record<string, Json>) => Object.keys(a).map(wordsOf).join(', ');
  switch (r.situation) {
    case 'api_call':
      return r.calls.length
        ? `The user wants to ${r.calls.map((c) => wordsOf(c.tool)).join(', then ')}. ${r.calls.map((c) => `I'll call ${c.tool}${Object.keys(c.arguments).length ? ` with ${args(c.arguments)}` : ''}`).join('; ')}.`
        : 'The request needs an API, but no listed API fits it, so I answer without calling one.';
    case 'information_missing':
      return `The request needs an API call, but ${r.missing.length ? r.missing.map(wordsOf).join(', ') : 'some details'} ${r.missing.length === 1 ? 'is' : 'are'} still missing, so I ask the user first.`;
    case 'confirmation':
      return 'I have what I need; before acting I confirm the details with the user, so no API is called yet.';
    case 'information_exists':
      return 'Earlier results already answer this, so no new API call is needed.';
    default:
      return 'The user is not asking for anything an API provides, so no call is needed.';
  }
}

export const mtuThoughtPrompt = definePrompt<ThoughtVars, ThoughtAnswer>({
  id: 'mtu/thought',
  system: 'You add reasoning steps to tool-use dialogues. You answer with JSON only.',
  template: `Below is a multi-round dialogue between a user and an assistant that can call APIs. Rounds where the assistant called an API show "Action" (the API) and "Action Input" (its arguments).

For every round, write the assistant's "Thought": its reasoning right after reading the user's message and before replying — what the user wants, whether an API is needed, which one and with which values, or why none is called (nothing requested, a value still missing, details being confirmed, the answer already known). Reason only from what the assistant knows at that point; do not quote its reply. Keep the Action and Action Input exactly as given.

Example round:
User: Find me some fantasy movies directed by Neil Marshall.
Thought: The user wants fantasy films by Neil Marshall, so I search the movie service with the genre and director.
Action: FindMovies
Action Input: {"genre": "Fantasy", "directed_by": "Neil Marshall"}

APIs available:
{{apis}}

Dialogue:
{{dialogue}}

Answer as {"thoughts": [{"round": <round number>, "thought": "..."}]} with one entry per round.`,
  schema: ThoughtAnswer,
  offline: (vars) => ({ thoughts: vars.rounds.map((r) => ({ round: r.round, thought: `[offline template] ${offlineThought(r)}` })) }),
  temperature: 0.3,
});
