import { z } from 'zod';
import { definePrompt } from '../core/prompt.ts';
import { dropConjunctions } from './nestools-offline.ts';
import { readRewrittenTask } from './nestools-rewrite-text.ts';

export interface RemoveConjunctionsVars extends Record<string, unknown> {
  task: string;
}

/** NesTools Table 10 (Appendix B.3): the task without sequencing words, for the robustness variant. */
export default definePrompt<RemoveConjunctionsVars, { task: string }>({
  id: 'nestools/remove-conjunctions',
  template: `Here is a task description. Remove conjunctions and politeness words such as "Please", "then", "subsequently" and "After that" while keeping the core meaning. The text must stay natural language without punctuation errors; adjust the capitalisation accordingly.

Here is an example.

Task description: Please find the nearest pharmacy to Rua Augusta 20. Then check whether it has ibuprofen in stock, and after that reserve two packs for pickup.
Result: Find the nearest pharmacy to Rua Augusta 20. Check whether it has ibuprofen in stock and reserve two packs for pickup.

Now it is your turn.

Task description: {{task}}
Result:`,
  schema: z.object({ task: z.string().min(1) }),
  parseText: (text) => ({ task: readRewrittenTask(text) }),
  temperature: 0.2,
  maxTokens: 600,
  offline: (vars) => ({ task: dropConjunctions(vars.task) }),
});
