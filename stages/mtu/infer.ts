import type { Json, PropertySchema } from '../../core/records.ts';

/**
 * Types, formats and closed sets of a parameter, inferred from the values observed for it
 * ("structure from the data"), and the check of a value against what was documented.
 */

export interface InferOptions {
  /** Share of values a type / format must fit to be documented. */
  minConformity: number;
  enumMaxValues: number;
  enumMinObservations: number;
  /** Share of a parameter's values that must hold several values (a repeated slot) for it to be a list. */
  listShare?: number;
}

const INTEGER = /^(0|-?[1-9]\d*)$/;
const BOOLEAN = /^(true|false)$/i;

/**
 * Strings every one of which reads as an integer or as a boolean (SGD writes `"2"`, `"True"`) are
 * documented as that type, so that arguments carry it; a single exception keeps them strings.
 */
function typeOfStrings(strings: string[]): 'integer' | 'boolean' | undefined {
  if (!strings.length) return undefined;
  if (strings.every((v) => BOOLEAN.test(v))) return 'boolean';
  if (strings.every((v) => INTEGER.test(v))) return 'integer';
  return undefined;
}

/** A value in the type its property documents: `"2"` → 2, `"True"` → true, a list for a list parameter, several values joined for one that is not. */
export function typedValue(value: Json, property: PropertySchema | undefined): Json {
  if (!property) return value;
  if (property.type === 'array') {
    const item = (property.items ?? {}) as PropertySchema;
    return (Array.isArray(value) ? value : [value]).map((v) => typedValue(v, item));
  }
  if (Array.isArray(value)) return typedValue(value.map(String).join(', '), property);
  if (typeof value !== 'string') return value;
  if (property.type === 'integer' && INTEGER.test(value)) return Number(value);
  if (property.type === 'boolean' && BOOLEAN.test(value)) return value.toLowerCase() === 'true';
  return value;
}

/** String shapes worth documenting, most specific first. */
const STRING_FORMATS: { format?: string; pattern: string }[] = [
  { format: 'date', pattern: '^\\d{4}-\\d{2}-\\d{2}$' },
  { format: 'time', pattern: '^\\d{1,2}:\\d{2}$' },
  { pattern: '^-?\\d+$' },
  { pattern: '^-?\\d+(\\.\\d+)?$' },
];

/** Whether a value of this kind is of the documented type (an integer is a number; a non-string number a float). */
function typeFits(type: unknown, kind: string, value: Json): boolean {
  return type === kind || (type === 'number' && kind === 'integer') || (type === 'float' && kind !== 'string' && typeof value === 'number');
}

function kindOf(value: Json): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function share(values: Json[], test: (v: Json) => boolean): number {
  return values.length ? values.filter(test).length / values.length : 0;
}

/** What the observed values say about a parameter: type, and for strings a format / pattern or an enum. */
export function inferProperty(observed: Json[], options: InferOptions): Pick<PropertySchema, 'type' | 'format' | 'pattern' | 'enum' | 'items'> {
  const given = observed.filter((v) => v !== null);
  if (!given.length) return { type: 'string' };
  const lists = given.filter(Array.isArray);
  if (lists.length && lists.length / given.length >= (options.listShare ?? 1)) {
    const { type, format, pattern } = inferProperty(given.flatMap((v) => (Array.isArray(v) ? v : [v])), { ...options, enumMaxValues: 0 });
    return { type: 'array', items: { type, ...(format ? { format } : {}), ...(pattern ? { pattern } : {}) } };
  }
  // Below the list share, several values of one slot are one value (joined).
  const values = given.map((v) => (Array.isArray(v) ? v.map(String).join(', ') : v));
  const kinds = values.map(kindOf);
  const fits = (kind: string) => kinds.filter((k) => k === kind || (kind === 'number' && k === 'integer')).length / kinds.length;
  const type = ['boolean', 'integer', 'number', 'array', 'object', 'string'].find((kind) => fits(kind) >= options.minConformity);
  if (!type) return { type: [...new Set(kinds.map((k) => (k === 'integer' ? 'number' : k)))].sort() };
  if (type !== 'string') return { type };

  const strings = values.filter((v): v is string => typeof v === 'string');
  const typed = typeOfStrings(strings);
  if (typed) return { type: typed };
  const distinct = [...new Set(strings)];
  if (distinct.length <= options.enumMaxValues && strings.length >= options.enumMinObservations) return { type, enum: distinct.sort() };
  for (const shape of STRING_FORMATS) {
    const pattern = new RegExp(shape.pattern);
    if (share(strings, (v) => pattern.test(v as string)) >= options.minConformity) return { type, ...shape };
  }
  return { type };
}

/** Why a value does not fit its documented property, or undefined when it does. */
export function valueProblem(value: Json, property: PropertySchema): string | undefined {
  const type = property.type;
  if (type !== undefined && value !== null && !(Array.isArray(type) && !type.length)) {
    const kind = kindOf(value);
    // One documented type (the common case) is checked without making a list of it.
    const ok = Array.isArray(type) ? type.some((t) => typeFits(t, kind, value)) : typeFits(type, kind, value);
    if (!ok) return `${JSON.stringify(value)} is ${kind}, documented as ${[type].flat().join(' | ')}`;
  }
  if (property.enum?.length && !enumTexts(property.enum).has(JSON.stringify(value))) {
    return `${JSON.stringify(value)} is not one of ${JSON.stringify(property.enum)}`;
  }
  if (typeof value === 'string' && property.pattern && !patternOf(property.pattern).test(value)) {
    return `"${value}" does not match ${property.format ? `the ${property.format} format ` : ''}${property.pattern}`;
  }
  if (typeof value === 'string' && property.format && FORMAT_CHECKS[property.format] && !FORMAT_CHECKS[property.format](value)) {
    return `"${value}" is no ${property.format}`;
  }
  // A list parameter documents its items (a repeated ATIS slot): each item is checked as a value.
  const items = property.items as PropertySchema | undefined;
  if (Array.isArray(value) && items && typeof items === 'object') {
    for (const [i, item] of value.entries()) {
      const problem = valueProblem(item, items);
      if (problem) return `item ${i}: ${problem}`;
    }
  }
  return undefined;
}

/**
 * An enum's values as JSON texts, made once per enum list: the documented tools are the run's
 * library objects, shared by every record and never edited, so each list is written out once.
 */
const enumTextsOf = new WeakMap<readonly unknown[], Set<string | undefined>>();

function enumTexts(values: readonly unknown[]): Set<string | undefined> {
  let texts = enumTextsOf.get(values);
  if (!texts) enumTextsOf.set(values, (texts = new Set(values.map((v) => JSON.stringify(v)))));
  return texts;
}

/** A documented pattern compiled once (the same few patterns are checked in every record); bounded. */
const patterns = new Map<string, RegExp>();

function patternOf(source: string): RegExp {
  let pattern = patterns.get(source);
  if (!pattern) {
    // Compiled first, so a pattern that does not compile throws as before and is not kept.
    pattern = new RegExp(source);
    if (patterns.size >= 1024) patterns.clear();
    patterns.set(source, pattern);
  }
  return pattern;
}

/** The documented string formats as values of the calendar and the clock (a pattern alone lets 2019-02-30 and 25:70 through). */
const FORMAT_CHECKS: Record<string, (value: string) => boolean> = {
  date: (value) => {
    const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
    if (!match) return false;
    const [year, month, day] = match.slice(1).map(Number);
    const date = new Date(Date.UTC(year, month - 1, day));
    return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
  },
  time: (value) => {
    const match = /^(\d{1,2}):(\d{2})$/.exec(value);
    return !!match && Number(match[1]) <= 23 && Number(match[2]) <= 59;
  },
};
