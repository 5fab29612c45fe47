import { z } from 'zod';
import { definePrompt } from '../core/prompt.ts';
import { composeApis } from './acebench-api-offline.ts';

/**
 * ACEBench §3.1.1 (1) API synthesis: given a path of the context tree, the model writes functions
 * in the released JSON-Schema shape, with the object schema of what each returns. The schema here
 * only asks for the four fields: whether a definition is a usable schema is checked afterwards,
 * so a bad one is rejected with the exact path of its problem rather than a generic parse error.
 */

export interface ApiVars extends Record<string, unknown> {
  domain: string;
  subdomain: string;
  functionality: string;
  language: 'en' | 'zh';
  count: number;
  /** Names already used in the subdomain, one per line ('(none yet)'). */
  existing: string;
  /** The language sentence of the prompt (from `languageNote`). */
  languageNote: string;
  /** The domain's documents with their lead-in, or ''. */
  documentsBlock: string;
}

export const ApiDraft = z.object({
  name: z.string().trim().min(1),
  description: z.string(),
  parameters: z.unknown(),
  returns: z.unknown(),
});
export type ApiDraft = z.infer<typeof ApiDraft>;

export const ApiAnswer = z.object({ apis: z.array(ApiDraft).min(1) });
export type ApiAnswer = z.infer<typeof ApiAnswer>;

export default definePrompt<ApiVars, ApiAnswer>({
  id: 'acebench/api',
  system: 'You design realistic software APIs for a tool-use benchmark and write them as JSON-Schema function definitions.',
  template: `Write {{count}} API function(s) for this place in our API context tree:

Domain: {{domain}}
Subdomain: {{subdomain}}
Functionality: {{functionality}}

Each API does one concrete, realistic job for that functionality; if you write several, give each a different action. Do not reuse these names:
{{existing}}
{{documentsBlock}}
For each API give:
- "name": an ASCII identifier, either "ServiceName_actionThing" (e.g. "TravelPlanner_bookHotelRoom") or snake_case (e.g. "hotel_check_room_availability").
- "description": one or two sentences saying what it does.
- "parameters": {"type": "object", "properties": {...}, "required": [...]}. Every top-level property has "type" and "description". Use realistic kinds: nested objects, arrays of objects, enums, integers or numbers with "minimum"/"maximum", booleans, strings with "format" (date, time, date-time, email) or "pattern" (ids), and "default" where a sensible one exists. "required" lists only names among the properties.
- "returns": {"type": "object", "properties": {...}} describing the result fields (each with "type" and "description"); use the same field names as parameters of related APIs where the result feeds them (e.g. a booking_id).
{{languageNote}}
Answer as JSON: {"apis": [{"name": "...", "description": "...", "parameters": {...}, "returns": {...}}]}`,
  schema: ApiAnswer,
  temperature: 0.8,
  maxTokens: 2500,
  offline: (vars, rng) => ({
    apis: composeApis(
      { domain: vars.domain, subdomain: vars.subdomain, functionality: vars.functionality, language: vars.language, count: vars.count, taken: vars.existing.split('\n') },
      rng,
    ),
  }),
});

/** The prompt's language sentence: names stay ASCII in both languages, as in the released files. */
export function languageNote(language: 'en' | 'zh'): string {
  return language === 'zh'
    ? 'Write every description (of the function, its parameters and its result fields) in Chinese; names, property names and enum values used as codes stay ASCII.'
    : 'Write everything in English.';
}
