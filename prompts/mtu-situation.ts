import { z } from 'zod';

/** The paper's five situations of an MTU assistant turn; only `api_call` makes a tool call. */
export const SITUATIONS = ['information_missing', 'information_exists', 'confirmation', 'chit_chat', 'api_call'] as const;
export const Situation = z.enum(SITUATIONS);
export type Situation = z.infer<typeof Situation>;
