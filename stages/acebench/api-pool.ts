import { z } from 'zod';
import { JsonValue, type Json } from '../../core/records.ts';
import { ACE_LANGUAGES, AceFunctionSchema, type AceFunction } from './record.ts';
import { TreePath } from './api-tree.ts';

/**
 * The API pool ACEBench instances draw their candidate functions from (§3.1.1 (1)): one record per
 * synthesised API, its function in the released shape (`name`, `description`, `parameters:
 * {type: "object", properties, required}`), and the object schema of what it returns — kept here
 * for linking APIs (a return field feeding another API's parameter), never exported.
 */


export const ApiRecord = z.object({
  name: z.string().min(1),
  language: z.enum(ACE_LANGUAGES),
  path: TreePath,
  function: AceFunctionSchema,
  returns: JsonValue,
  /** `template`: the offline composer; `llm`: a model's answer; `document`: a model's or the composer's answer steered by the user's documents; `imported`: a tool of an imported library. */
  origin: z.enum(['template', 'llm', 'document', 'imported']),
});
export type ApiRecord = z.infer<typeof ApiRecord>;

/** `Domain > Subdomain > Functionality`, as messages name an API's place in the tree. */
export function pathText(path: TreePath): string {
  return `${path.domain} > ${path.subdomain} > ${path.functionality}`;
}

/**
 * A function with its parameters' top-level keys in the released order (`type`, `properties`,
 * `required`, then anything else), and the function's own keys as `name`, `description`,
 * `parameters` first.
 */
export function inReleasedOrder(fn: { name: string; description: string; parameters: Json } & Record<string, Json>): AceFunction {
  const { name, description, parameters, ...rest } = fn;
  let ordered: Json = parameters;
  if (parameters && typeof parameters === 'object' && !Array.isArray(parameters)) {
    const { type, properties, required, ...more } = parameters;
    ordered = Object.fromEntries(Object.entries({ type, properties, required, ...more }).filter(([, v]) => v !== undefined)) as Json;
  }
  return { name, description, parameters: ordered, ...rest };
}
