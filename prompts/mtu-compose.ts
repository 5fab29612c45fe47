import { z } from 'zod';
import { definePrompt } from '../core/prompt.ts';
import { joinRequests } from './mtu-offline.ts';

/** Multi-tool composition: several requests written as one user message (S-M and M-M samples). */
export type ComposeVars = {
  /** `independent`: unrelated requests; `chained`: later requests build on earlier results. */
  mode: 'independent' | 'chained';
  /** The requests, numbered, one per line. */
  requests: string;
  /** Offline renderer only: the same requests as a list. */
  parts: string[];
};

export const ComposeAnswer = z.object({ message: z.string().min(1) });
export type ComposeAnswer = z.infer<typeof ComposeAnswer>;

export const mtuComposePrompt = definePrompt<ComposeVars, ComposeAnswer>({
  id: 'mtu/compose',
  system: 'You write realistic user messages for an assistant that can call APIs. You answer with JSON only.',
  template: `Rewrite the user requests below as a single message a user might send in one go.
Keep every request, in the same order, and keep every concrete value (names, places, dates, times, numbers) exactly as written. Do not add requests or values.
The requests are {{mode}}: when they are "chained", later requests depend on the outcome of earlier ones (for example "book a table at the restaurant you find"), so refer to that outcome instead of repeating details the user could not know.

Requests:
{{requests}}

Answer as {"message": "..."}.`,
  schema: ComposeAnswer,
  offline: (vars, rng) => ({ message: joinRequests(vars.parts, rng) }),
  temperature: 0.7,
});
