import { z } from 'zod';
import { definePrompt } from '../core/prompt.ts';
import { replaceApiNames } from './nestools-offline.ts';
import { readRewrittenTask } from './nestools-rewrite-text.ts';

export interface RefineVars extends Record<string, unknown> {
  /** Gold tools, NesTools `api` entries as JSON. */
  apis: string;
  task: string;
  /** The chain in NesTools notation (API_call_k placeholders), as JSON. */
  calls: string;
  /** Tool names, for the offline renderer. */
  toolNames: string[];
}

/** NesTools Table 7: rewrite the task for quality, consistent with the chain. */
export default definePrompt<RefineVars, { task: string }>({
  id: 'nestools/refine-query',
  template: `You rewrite tasks well. Rewrite the task below in high quality, following these points.

1. The actual name of any API in the call (for example \`get_article_headline\`) must not appear in the rewritten task.
2. The API call result is the gold tool-calling process for the task. A parameter value written "API_call_k" is a return value of an earlier call. Use the API information to keep the rewritten task consistent with that process.
3. Every regular parameter value of the gold process (any value not written "API_call_k") must be stated in, or clearly inferable from, the rewritten task.
4. Keep the core meaning and the logic of the task and follow the call chain, but feel free to change the wording so the task reads coherently and like a real request.

Here is an example.

APIs:
[{"api_name": "get_recipe", "api_description": "Look up a recipe by dish name.", "parameters": {"dish": {"type": "str", "description": "name of the dish"}}, "required": ["dish"], "responses": {"ingredients": {"type": "list", "description": "ingredients of the recipe"}}}, {"api_name": "order_groceries", "api_description": "Order groceries for delivery.", "parameters": {"items": {"type": "list", "description": "items to order"}, "store": {"type": "str", "description": "store to order from"}}, "required": ["items", "store"], "responses": {"order_id": {"type": "str", "description": "identifier of the order"}}}]
Task:
Use get_recipe for shakshuka, then order_groceries the ingredients from GreenMart.
API call result:
[{"api_name": "get_recipe", "parameters": {"dish": "shakshuka"}, "responses": ["API_call_0"]}, {"api_name": "order_groceries", "parameters": {"items": "API_call_0", "store": "GreenMart"}, "responses": ["API_call_1"]}]
Rewritten task:
I'd like to cook shakshuka tonight. Could you look up the recipe and have everything it needs delivered from GreenMart?

It's your turn to generate.

APIs:
{{apis}}
Task:
{{task}}
API call result:
{{calls}}
Rewritten task:`,
  schema: z.object({ task: z.string().min(1) }),
  parseText: (text) => ({ task: readRewrittenTask(text) }),
  temperature: 0.7,
  maxTokens: 600,
  offline: (vars) => ({ task: replaceApiNames(vars.task, vars.toolNames) }),
});
