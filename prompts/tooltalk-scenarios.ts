import { z } from 'zod';
import { definePrompt } from '../core/prompt.ts';

export interface ScenarioVars extends Record<string, unknown> {
  /** The documentation of every tool of the three plugins, formatted. */
  apiDocs: string;
  requiredApi: string;
  /** The tools documented (only the offline renderer reads it). */
  toolNames: string[];
}

export const ScenarioAnswer = z.object({
  scenarios: z
    .array(
      z.object({
        description: z.string().min(1),
        /** Every call the scenario makes, in order (a tool may repeat). */
        calls: z.array(z.string().min(1)).min(1),
      }),
    )
    .min(1),
});
export type ScenarioAnswer = z.infer<typeof ScenarioAnswer>;

/** ToolTalk §2.2 and Appendix B: three user scenarios over three plugins' tools, one tool required. */
export default definePrompt<ScenarioVars, ScenarioAnswer>({
  id: 'tooltalk/scenarios',
  template: `Below is the documentation of a set of APIs: what each does, its parameters and what it returns.

Write 3 different user scenarios. In each, a user wants to get something done with an assistant that can call these APIs, and getting it done takes at least 5 API calls using at least 3 different APIs. Every scenario must use the required API named at the end; choose the other APIs yourself. An API may be called more than once. Prefer scenarios where one call's result feeds the next call (for example, a search that finds the id another API then changes). Use a different combination of APIs in each scenario, and together the 3 scenarios should cover all the APIs listed. Use only the APIs listed here; name no other API.

Describe each scenario in a few concise, concrete sentences that say which API is used for what (exact parameter values are not needed), and list the calls in the order they are made.

APIs:
{{apiDocs}}

Required API: {{requiredApi}}

Answer as JSON: {"scenarios": [{"description": "...", "calls": ["ApiName", ...]}, ...]} with 3 scenarios.`,
  schema: ScenarioAnswer,
  temperature: 0.9,
  maxTokens: 1500,
  offline: (vars, rng) => {
    const others = vars.toolNames.filter((name) => name !== vars.requiredApi);
    const scenarios = [0, 1, 2].map((i) => {
      const helpers = rng.sample(others, Math.min(others.length, 2 + (i % 2)));
      const calls = [helpers[0], vars.requiredApi, ...helpers.slice(1), vars.requiredApi, helpers[0]].filter(Boolean);
      const description = `Template scenario ${i + 1}: the user gets a task done with ${calls.join(', then ')}; ${vars.requiredApi} is the step the task turns on.`;
      return { description, calls };
    });
    return { scenarios };
  },
});
