import { z } from 'zod';
import { definePrompt } from '../core/prompt.ts';
import type { Json } from '../core/records.ts';
import { appendValues } from './nestools-offline.ts';
import { readRewrittenTask } from './nestools-rewrite-text.ts';

export interface NormaliseVars extends Record<string, unknown> {
  /** Gold tools, NesTools `api` entries as JSON. */
  apis: string;
  task: string;
  /** The chain in NesTools notation (API_call_k placeholders), as JSON. */
  calls: string;
  /** Values the task does not contain yet, one per line. */
  missing: string;
  /** The same, structured, for the offline renderer. */
  missingValues: { param: string; value: Json }[];
}

/** NesTools Table 6: put every call value into the task. */
export default definePrompt<NormaliseVars, { task: string }>({
  id: 'nestools/normalise-query',
  template: `Below are some APIs, a task, and the API call result for this task. Some values of the API call result are not present in the task. Rewrite the task so that it includes all of those values, without mentioning the APIs themselves; including every value is what matters most. When a value is a complex data type (a dictionary, list, tuple, …), work each of its items into the task in natural language instead of pasting the raw value.

The rewritten task need not match the names and descriptions in the APIs word for word; keep the particulars of a real-life request.

Answer with the rewritten task only, without explanations.

Here is an example.

APIs:
[{"api_name": "find_hiking_trail", "api_description": "Find a hiking trail near a town.", "parameters": {"town": {"type": "str", "description": "the town to start from"}, "max_km": {"type": "float", "description": "longest acceptable trail length"}}, "required": ["town", "max_km"], "responses": {"trail_id": {"type": "str", "description": "identifier of the trail"}}}, {"api_name": "get_trail_weather", "api_description": "Get the weather forecast for a trail.", "parameters": {"trail_id": {"type": "str", "description": "identifier of the trail"}, "date": {"type": "str", "description": "day of the hike, YYYY-MM-DD"}}, "required": ["trail_id", "date"], "responses": {"forecast": {"type": "str", "description": "short forecast"}}}]
Task:
Find me a trail near Zermatt and tell me what the weather will be like on it.
API call result:
[{"api_name": "find_hiking_trail", "parameters": {"town": "Zermatt", "max_km": 12.0}, "responses": ["API_call_0"]}, {"api_name": "get_trail_weather", "parameters": {"trail_id": "API_call_0", "date": "2024-07-06"}, "responses": ["API_call_1"]}]
Values missing from the task:
max_km: 12.0
date: "2024-07-06"
Rewritten task:
Find me a hiking trail near Zermatt that is at most 12 km long, and tell me what the weather will be like on it on 6 July 2024.

It's your turn to generate.

APIs:
{{apis}}
Task:
{{task}}
API call result:
{{calls}}
Values missing from the task:
{{missing}}
Rewritten task:`,
  schema: z.object({ task: z.string().min(1) }),
  parseText: (text) => ({ task: readRewrittenTask(text) }),
  temperature: 0.2,
  maxTokens: 600,
  offline: (vars) => ({ task: appendValues(vars.task, vars.missingValues) }),
});
