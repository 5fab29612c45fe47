import type { z } from 'zod';
import { editDistance } from './edit-distance.ts';
import { UserError } from './errors.ts';

/**
 * Finds keys of a user's JSON config that its zod schema does not know. zod strips (or, on a
 * `.strict()` object, rejects with a terse message) an unknown key, so a typo such as `"cuont"`
 * would otherwise be lost or hard to place; this walk names its full path and the closest valid key.
 *
 * The walk follows the value through the schema: objects (unknown keys are reported unless the
 * object has a catch-all, e.g. `.loose()`), optional / default / prefault / nullable / readonly /
 * catch wrappers, arrays, tuples, records (their keys are free; their values are walked), unions
 * (the option that fits best, an option's literal tag such as `kind` deciding first), intersections,
 * lazy schemas and pipes (their input side). Anything it cannot see into accepts every key: the
 * check never refuses a config the schema would take.
 */

export interface UnknownKey {
  /** Dotted path from the root, arrays as `[i]`: `sources.atis.enabeld`, `sources.generic[0].nmae`. */
  path: string;
  /** The valid keys of the object holding it, in the schema's order. */
  known: string[];
  /** The closest valid key, when one is close enough to be a likely meant spelling. */
  suggestion?: string;
}

/** Every unknown key of `value` under `schema`, in the order they appear in the value. */
export function findUnknownKeys(schema: z.ZodType, value: unknown): UnknownKey[] {
  return walk(schema as unknown as Schema, value, '') ?? [];
}

/** Throws a one-line UserError naming every unknown key of `value` (`source` is the file as the user wrote it). */
export function checkConfigKeys(schema: z.ZodType, value: unknown, source: string): void {
  const unknown = findUnknownKeys(schema, value);
  if (unknown.length) throw new UserError(`${source}: ${describeUnknownKeys(unknown)}`);
}

const MAX_LISTED = 5;

export function describeUnknownKeys(unknown: UnknownKey[]): string {
  const parts = unknown.slice(0, MAX_LISTED).map((entry) => {
    const hint = entry.suggestion
      ? `did you mean "${entry.suggestion}"?`
      : entry.known.length
        ? `valid keys there: ${entry.known.join(', ')}`
        : 'nothing may be set there';
    return `unknown key "${entry.path}" — ${hint}`;
  });
  const more = unknown.length > MAX_LISTED ? `; and ${unknown.length - MAX_LISTED} more unknown key(s)` : '';
  return `${parts.join('; ')}${more}`;
}

/** The closest key by edit distance (ignoring case), if within half the key's length (at least 2). */
export function closestKey(key: string, known: string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const distance = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return bestDistance <= Math.max(2, Math.floor(key.length / 2)) ? best : undefined;
}

/** The parts of zod 4's schema definitions this walk reads (`schema._zod.def`). */
interface Schema {
  _zod: { def: Def };
}
interface Def {
  type: string;
  shape?: Record<string, Schema>;
  catchall?: Schema;
  innerType?: Schema;
  element?: Schema;
  items?: Schema[];
  rest?: Schema | null;
  valueType?: Schema;
  options?: Schema[];
  left?: Schema;
  right?: Schema;
  in?: Schema;
  getter?: () => Schema;
  values?: unknown[];
}

/** Schemas that only wrap another one; the value passes through to `innerType`. */
export const WRAPPERS = new Set(['optional', 'nonoptional', 'default', 'prefault', 'nullable', 'readonly', 'catch', 'success']);
/** Schemas of JSON scalars: they never hold keys. */
const SCALARS = new Set(['string', 'number', 'int', 'boolean', 'bigint', 'null', 'literal', 'enum', 'template_literal', 'nan', 'date']);

/**
 * The unknown keys of `value` under `schema`, or null when the schema cannot describe a value of
 * this kind at all (an object schema given an array): a union then looks at its other options.
 */
function walk(schema: Schema, value: unknown, path: string): UnknownKey[] | null {
  const def = schema._zod.def;
  if (value === undefined) return [];
  if (WRAPPERS.has(def.type)) return value === null && def.type === 'nullable' ? [] : walk(def.innerType!, value, path);
  if (SCALARS.has(def.type)) return isPlainObject(value) || Array.isArray(value) ? null : [];
  switch (def.type) {
    case 'object': {
      if (!isPlainObject(value)) return null;
      const shape = def.shape ?? {};
      const known = Object.keys(shape);
      const open = def.catchall !== undefined && def.catchall._zod.def.type !== 'never';
      const found: UnknownKey[] = [];
      for (const [key, child] of Object.entries(value)) {
        const childPath = join(path, key);
        if (Object.hasOwn(shape, key)) found.push(...(walk(shape[key], child, childPath) ?? []));
        else if (open) found.push(...(walk(def.catchall!, child, childPath) ?? []));
        else found.push({ path: childPath, known, suggestion: closestKey(key, known) });
      }
      return found;
    }
    case 'record':
      if (!isPlainObject(value)) return null;
      return Object.entries(value).flatMap(([key, child]) => walk(def.valueType!, child, join(path, key)) ?? []);
    case 'array':
      if (!Array.isArray(value)) return null;
      return value.flatMap((item, i) => walk(def.element!, item, `${path}[${i}]`) ?? []);
    case 'tuple':
      if (!Array.isArray(value)) return null;
      return value.flatMap((item, i) => {
        const itemSchema = def.items![i] ?? def.rest;
        return itemSchema ? (walk(itemSchema, item, `${path}[${i}]`) ?? []) : [];
      });
    case 'union':
      return walkUnion(def.options ?? [], value, path);
    case 'intersection': {
      // A key is unknown only when neither side knows it.
      const left = walk(def.left!, value, path);
      const right = walk(def.right!, value, path);
      if (!left || !right) return left ?? right;
      const rightPaths = new Set(right.map((entry) => entry.path));
      return left.filter((entry) => rightPaths.has(entry.path));
    }
    case 'lazy':
      return walk(def.getter!(), value, path);
    case 'pipe':
      // The input side sees the user's value; a preprocess step (a transform first) may reshape it.
      return def.in!._zod.def.type === 'transform' ? [] : walk(def.in!, value, path);
    default:
      return []; // any, unknown, custom, transform, …: nothing to check against
  }
}

/**
 * The unknowns of the option that fits the value best: options whose literal tags (e.g.
 * `kind: "openai"`) match the value come first; among them, one without unknown keys accepts the
 * value, else the one with the fewest unknown keys speaks.
 */
function walkUnion(options: Schema[], value: unknown, path: string): UnknownKey[] | null {
  const tagged = options.filter((option) => tagsMatch(option, value));
  let best: UnknownKey[] | null = null;
  for (const option of tagged.length ? tagged : options) {
    const found = walk(option, value, path);
    if (found && (!best || found.length < best.length)) best = found;
    if (best?.length === 0) return best;
  }
  return best;
}

/** True when the option is an object with at least one literal-valued key the value matches. */
function tagsMatch(option: Schema, value: unknown): boolean {
  if (!isPlainObject(value)) return false;
  const shape = unwrap(option)._zod.def.shape;
  if (!shape) return false;
  const tags = Object.entries(shape).filter(([, child]) => unwrap(child)._zod.def.type === 'literal');
  return tags.length > 0 && tags.every(([key, child]) => unwrap(child)._zod.def.values!.includes(value[key]));
}

function unwrap(schema: Schema): Schema {
  let current = schema;
  while (WRAPPERS.has(current._zod.def.type)) current = current._zod.def.innerType!;
  return current;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}
