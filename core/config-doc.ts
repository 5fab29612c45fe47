import { z } from 'zod';
import { WRAPPERS } from './config-keys.ts';

/**
 * The keys of a recipe's config schema as help lists them: every key at every depth in dotted
 * form (`sources.snips.dir`; the fields of a list's entries as `sources.generic[].file`), with the
 * text its schema was given by `.describe()` and what it is when a config leaves it out.
 *
 * Objects are walked through their wrappers (default, prefault, optional, nullable, …), and so
 * are the entries of a list of objects; anything else (a scalar, a list of scalars, a record, a
 * union such as an embedder choice) is one key whose description says what it takes.
 */
export interface ConfigKey {
  path: string;
  /** The `.describe()` text of the key (on any of its wrappers); undefined when it has none. */
  description?: string;
  /** An object whose own keys follow it in the list. */
  section: boolean;
  /** A list of objects whose entries' keys follow it as `path[].key`. */
  entries: boolean;
  /** What the key is when a config leaves it out: a value, unset, or required (a list entry's field without a default). */
  fallback: { kind: 'value'; value: unknown } | { kind: 'unset' } | { kind: 'required' };
}

/** The parts of zod 4's schema definitions read here. */
interface Schema {
  _zod: { def: { type: string; innerType?: Schema; element?: Schema; shape?: Record<string, Schema>; defaultValue?: unknown } };
}

/** The schema under its wrappers, its description (the outermost one given) and its own default. */
function unwrapped(schema: Schema): { core: Schema; description?: string; optional: boolean; defaultValue?: unknown } {
  let description: string | undefined;
  let optional = false;
  let defaultValue: unknown;
  let current = schema;
  for (;;) {
    description ??= z.globalRegistry.get(current as unknown as z.ZodType)?.description;
    const def = current._zod.def;
    if (!WRAPPERS.has(def.type)) break;
    if ((def.type === 'default' || def.type === 'prefault') && defaultValue === undefined) defaultValue = def.defaultValue;
    if (def.type === 'optional' || def.type === 'nullable') optional = true;
    current = def.innerType!;
  }
  return { core: current, description, optional, defaultValue };
}

/** The object schema a list's entries are, or undefined when they are not objects. */
function entryObject(core: Schema): Schema | undefined {
  if (core._zod.def.type !== 'array') return undefined;
  const entry = unwrapped(core._zod.def.element!).core;
  return entry._zod.def.type === 'object' ? entry : undefined;
}

/** Marks a value the defaults do not reach (a key under an unset object, or a list entry's field). */
const UNREACHED = Symbol('unreached');

/** Every key of `schema` (an object schema) in the schema's order; `defaults` is `schema.parse({})`, the values shown. */
export function configKeys(schema: z.ZodType, defaults: unknown): ConfigKey[] {
  const root = unwrapped(schema as unknown as Schema).core;
  if (root._zod.def.type !== 'object') throw new Error('configKeys: the config schema is not an object');
  return keysOf(root, '', defaults);
}

function keysOf(object: Schema, prefix: string, values: unknown): ConfigKey[] {
  const keys: ConfigKey[] = [];
  for (const [key, child] of Object.entries(object._zod.def.shape ?? {})) {
    const path = `${prefix}${key}`;
    const { core, description, optional, defaultValue } = unwrapped(child);
    const value = values !== UNREACHED && values !== null && typeof values === 'object' ? (values as Record<string, unknown>)[key] : UNREACHED;
    const entry = entryObject(core);
    const section = core._zod.def.type === 'object';
    keys.push({ path, description, section, entries: entry !== undefined, fallback: fallbackOf(value, defaultValue, optional) });
    if (section) keys.push(...keysOf(core, `${path}.`, value === undefined ? UNREACHED : value));
    if (entry) keys.push(...keysOf(entry, `${path}[].`, UNREACHED));
  }
  return keys;
}

function fallbackOf(value: unknown, defaultValue: unknown, optional: boolean): ConfigKey['fallback'] {
  if (value !== UNREACHED) return value === undefined ? { kind: 'unset' } : { kind: 'value', value };
  if (defaultValue !== undefined) return { kind: 'value', value: defaultValue };
  return optional ? { kind: 'unset' } : { kind: 'required' };
}

/** Texts of an object's keys: a key's own text, or its text and the texts of its keys (an object, or a list of objects). */
export interface KeyTexts {
  readonly [key: string]: string | readonly [string, KeyTexts];
}

/**
 * `schema` with `.describe()` texts given to its keys at every depth, for a schema defined where
 * its texts cannot be written (a recipe's config kept beside its stages). The result parses
 * exactly as `schema` does (wrappers, defaults, strictness and refinements kept); a key the
 * schema does not have is a programming error and throws.
 */
export function describeKeys<T extends z.ZodType>(schema: T, texts: KeyTexts, where = ''): T {
  return rebuilt(schema as unknown as Schema, where, (object) => {
    const shape = object._zod.def.shape!;
    const described: Record<string, z.ZodType> = {};
    for (const [key, text] of Object.entries(texts)) {
      if (!Object.hasOwn(shape, key)) throw new Error(`describeKeys: the schema has no key ${where}${key}`);
      const child = shape[key] as unknown as z.ZodType;
      described[key] = typeof text === 'string' ? child.describe(text) : describeKeys(child, text[1], `${where}${key}.`).describe(text[0]);
    }
    return (object as unknown as z.ZodObject).safeExtend(described) as unknown as Schema;
  }) as unknown as T;
}

/** `schema` with its object (under wrappers, or a list's entries) replaced by `change(object)`. */
function rebuilt(schema: Schema, where: string, change: (object: Schema) => Schema): Schema {
  const def = schema._zod.def;
  const clone = (part: Partial<Schema['_zod']['def']>) => (schema as unknown as z.ZodType).clone(z.core.util.mergeDefs(def, part) as never) as unknown as Schema;
  if (WRAPPERS.has(def.type)) return clone({ innerType: rebuilt(def.innerType!, where, change) });
  if (def.type === 'array') return clone({ element: rebuilt(def.element!, where, change) });
  if (def.type === 'object') return change(schema);
  throw new Error(`describeKeys: ${where.replace(/\.$/, '') || 'the schema'} holds no keys (a ${def.type})`);
}
