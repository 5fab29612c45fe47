import { z } from 'zod';
import { definePrompt } from '../core/prompt.ts';

/**
 * ACEBench §3.1.2, the model-checking stage: several LLM judges each read one generated instance
 * and say whether it is sound; the majority decides whether it goes to human review.
 */
export interface JudgeVars extends Record<string, unknown> {
  category: string;
  /** The dialogue as the model sees it (`user: …\nsystem: …`). */
  question: string;
  /** The offered functions, JSON. */
  functions: string;
  /** The gold answer, JSON. */
  answer: string;
  /** The time line or user profile the record carries ('' when none). */
  context: string;
  /** Offline renderer only: what the rule checks found wrong ('' when nothing). */
  ruleProblems: string;
}

export const JudgeAnswer = z.object({ verdict: z.enum(['pass', 'fail']), reason: z.string().min(1) });
export type JudgeAnswer = z.infer<typeof JudgeAnswer>;

const WHAT_EACH_CATEGORY_MEANS = `- normal_*: the answer is the call(s) a careful assistant makes now, with every value taken from the dialogue, the time line or the profile;
- special_incomplete: a required value is missing from the request, and the answer names the function and the missing parameters;
- special_error_param: a value in the request has the wrong type or format, and the answer lists the parameter and the wrong value(s);
- special_irrelevant: no offered function can serve the request, and the answer refuses.`;

export default definePrompt<JudgeVars, JudgeAnswer>({
  id: 'acebench/judge',
  system: 'You check tool-use evaluation data. You answer with JSON only.',
  template: `Check one instance of a tool-use benchmark. Category: {{category}}.
${WHAT_EACH_CATEGORY_MEANS}

Fail it if the functions are unclear or contradict each other, if the dialogue is unnatural or ambiguous, if the answer is not the one correct reply for this category, or if any answer value is not supported by what the assistant was told.

Dialogue:
{{question}}

Context (time line or user profile):
{{context}}

Functions:
{{functions}}

Answer:
{{answer}}

Reply as JSON: {"verdict": "pass" or "fail", "reason": "one sentence"}.`,
  schema: JudgeAnswer,
  temperature: 0.7,
  maxTokens: 200,
  // Offline, a judge repeats what the rule checks found, so the vote has something real to count.
  offline: (vars) =>
    vars.ruleProblems ? { verdict: 'fail', reason: `[offline template] ${vars.ruleProblems}` } : { verdict: 'pass', reason: '[offline template] the answer follows from the dialogue and the functions' },
});
