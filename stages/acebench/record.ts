import { z } from 'zod';
import { JsonValue, type Json, isJsonObject } from '../../core/records.ts';
import { jsonTypeOf } from '../../core/json-schema.ts';

/**
 * ACEBench's released layout: one pair of JSON Lines files per category and language,
 * `data_<lang>/data_<category>.json` and `data_<lang>/possible_answer/data_<category>.json`.
 * Every ACEBench stage speaks of categories and records in these terms.
 */

export const ACE_LANGUAGES = ['en', 'zh'] as const;
export type AceLanguage = (typeof ACE_LANGUAGES)[number];

export const ACE_NORMAL_CATEGORIES = [
  'normal_single_turn_single_function',
  'normal_single_turn_parallel_function',
  'normal_multi_turn_user_adjust',
  'normal_multi_turn_user_switch',
  'normal_similar_api',
  'normal_preference',
  'normal_atom_bool',
  'normal_atom_enum',
  'normal_atom_list',
  'normal_atom_number',
  'normal_atom_object_short',
  'normal_atom_object_deep',
] as const;
export const ACE_SPECIAL_CATEGORIES = ['special_incomplete', 'special_error_param', 'special_irrelevant'] as const;
export const ACE_AGENT_CATEGORIES = ['agent_multi_step', 'agent_multi_turn'] as const;
export const ACE_CATEGORIES = [...ACE_NORMAL_CATEGORIES, ...ACE_SPECIAL_CATEGORIES, ...ACE_AGENT_CATEGORIES] as const;
export type AceCategory = (typeof ACE_CATEGORIES)[number];

/** The file a category's records and answers live in, inside `data_<lang>/` and `data_<lang>/possible_answer/`. */
export function aceFileName(category: AceCategory): string {
  return `data_${category}.json`;
}

/** One function offered to the model, in the released shape (key order as released). */
export type AceFunction = { name: string; description: string; parameters: Json } & Record<string, Json>;

/** A function as records hold it: any keys, in their own order (the release prints them as they are). */
export const AceFunctionSchema = z
  .record(z.string(), JsonValue)
  .refine((fn) => typeof fn.name === 'string' && fn.name.length > 0, { message: 'a function needs a "name"' }) as unknown as z.ZodType<AceFunction>;

/**
 * One released record and its answer, exactly as the files hold them: `data` is the line of
 * `data_<category>.json` (`id`, `question`, `function`, `time` | `profile`, or for agent records
 * `initial_config`, `path`, `involved_classes`), `answer` the line of `possible_answer/` with the
 * same id (`ground_truth`, and `mile_stone` for agent records), or null when the release has none.
 */
export interface AceRecord {
  category: AceCategory;
  language: AceLanguage;
  data: { id: string; question: string; function: AceFunction[] } & Record<string, Json>;
  answer: { id: string; ground_truth: Json } & Record<string, Json> | null;
}

/** The sentence every `special_irrelevant` answer holds (in both languages' files). */
export const IRRELEVANT_ANSWER = 'Due to the limitations of the function, I cannot solve this problem.';

/** A JSON object (not an array, not null). */

/** A function's parameter schema: `parameters`, or `arguments` / `_arguments` as a few released records write it. */
export function functionParameters(fn: AceFunction): Json | undefined {
  return fn.parameters ?? fn.arguments ?? fn._arguments;
}

/** The properties of an object schema (empty for anything else). */
export function propertiesOf(schema: Json | undefined): Record<string, Json> {
  return isJsonObject(schema) && isJsonObject(schema.properties) ? schema.properties : {};
}

/** The parameter kinds the six atom categories are built around (`normal_atom_<kind>`). */
export const ATOM_KINDS = ['bool', 'enum', 'list', 'number', 'object_short', 'object_deep'] as const;
export type AtomKind = (typeof ATOM_KINDS)[number];

/** The parameter kind an atom category is built around (`normal_atom_enum` → `enum`), or undefined. */
export function atomKindOfCategory(category: AceCategory): AtomKind | undefined {
  return ATOM_KINDS.find((kind) => category === `normal_atom_${kind}`);
}

/**
 * The atom kinds of one parameter schema: `bool` (boolean), `enum` (declares an enum), `list`
 * (array), `number` (number or integer), `object_short` (an object whose properties are all
 * scalars or lists of scalars), `object_deep` (an object holding an object or a list of objects).
 */
export function atomKindsOf(schema: Json | undefined): Set<AtomKind> {
  const kinds = new Set<AtomKind>();
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return kinds;
  const type = jsonTypeOf(schema.type);
  if (Array.isArray(schema.enum)) kinds.add('enum');
  if (type === 'boolean') kinds.add('bool');
  if (type === 'number' || type === 'integer') kinds.add('number');
  if (type === 'array') kinds.add('list');
  if (type === 'object' || (schema.properties && typeof schema.properties === 'object')) {
    const children = Object.values((schema.properties ?? {}) as Record<string, Json>);
    const nested = children.some((child) => {
      if (!child || typeof child !== 'object' || Array.isArray(child)) return false;
      const childType = jsonTypeOf(child.type);
      const items = child.items as Json | undefined;
      return childType === 'object' || (childType === 'array' && !!items && typeof items === 'object' && !Array.isArray(items) && jsonTypeOf(items.type) === 'object');
    });
    kinds.add(nested ? 'object_deep' : 'object_short');
  }
  return kinds;
}

/** The atom kinds a function offers through its top-level parameters. */
export function functionAtomKinds(fn: AceFunction): Set<AtomKind> {
  const kinds = new Set<AtomKind>();
  for (const property of Object.values(propertiesOf(functionParameters(fn)))) for (const kind of atomKindsOf(property)) kinds.add(kind);
  return kinds;
}

/** Any record of the release, agent records included: the data line's own keys in their order, and its answer line or null. */
export const AceRecordSchema = z.object({
  category: z.enum(ACE_CATEGORIES),
  language: z.enum(ACE_LANGUAGES),
  data: z.record(z.string(), JsonValue).refine((data) => typeof data.id === 'string' && typeof data.question === 'string' && Array.isArray(data.function), {
    message: 'a record needs an "id", a "question" and a "function" list',
  }),
  answer: z.record(z.string(), JsonValue).nullable(),
}) as unknown as z.ZodType<AceRecord>;
