import type { Json } from '../core/records.ts';
import type { Rng } from '../core/rng.ts';

/**
 * Offline renderers' values for a JSON Schema (an imported tool's arguments or result): a value the
 * schema accepts — its `const`, an `enum` member, its `default`, the first non-null branch of
 * `anyOf` / `oneOf`, objects with their required properties (and the rest when `all`), one to two
 * items for arrays within `minItems` / `maxItems`, numbers within their bounds, strings in the
 * standard formats (date, date-time, time, email, uri, ipv4, ipv6, hostname, uuid) and within their lengths. A `pattern`
 * is not followed: such a value may fail the check the caller makes. Plainly template values.
 */

type Schema = Record<string, unknown>;

const asSchema = (value: unknown): Schema => (value && typeof value === 'object' && !Array.isArray(value) ? (value as Schema) : {});

const WORDS = ['alpha', 'river', 'cedar', 'harbor', 'maple', 'summit', 'willow', 'orbit', 'lantern', 'meadow'];

/** The schema's one type: the first non-null of a list, else what its keywords imply. */
function typeOf(s: Schema): string {
  if (Array.isArray(s.type)) return (s.type as string[]).find((t) => t !== 'null') ?? 'null';
  if (typeof s.type === 'string') return s.type;
  if (s.properties) return 'object';
  if (s.items) return 'array';
  return 'string';
}

export interface SchemaValueOptions {
  /** Also fill optional properties of objects (default: required ones only; a result gets them all). */
  all?: boolean;
}

export function schemaValue(schema: unknown, name: string, rng: Rng, options: SchemaValueOptions = {}, depth = 0): Json {
  const s = asSchema(schema);
  if ('const' in s) return s.const as Json;
  if (Array.isArray(s.enum) && s.enum.length) return rng.pick(s.enum as Json[]);
  if (s.default !== undefined) return s.default as Json;
  for (const key of ['anyOf', 'oneOf'] as const) {
    const branches = Array.isArray(s[key]) ? (s[key] as unknown[]).map(asSchema) : [];
    if (!branches.length) continue;
    const { [key]: _branches, ...rest } = s;
    const branch = branches.find((b) => b.type !== 'null') ?? branches[0];
    return schemaValue({ ...rest, ...branch }, name, rng, options, depth);
  }
  switch (typeOf(s)) {
    case 'null':
      return null;
    case 'boolean':
      return rng.chance(0.5);
    case 'integer':
    case 'number':
      return numberIn(s, rng, typeOf(s) === 'integer');
    case 'array': {
      const min = typeof s.minItems === 'number' ? s.minItems : 1;
      const max = typeof s.maxItems === 'number' ? s.maxItems : Math.max(min, 2);
      const count = depth > 3 ? min : rng.int(min, Math.max(min, Math.min(max, min + 1)));
      return Array.from({ length: count }, (_, i) => schemaValue(s.items, `${name}_${i + 1}`, rng, options, depth + 1));
    }
    case 'object': {
      const properties = asSchema(s.properties);
      const required = new Set(Array.isArray(s.required) ? (s.required as string[]) : []);
      const out: Record<string, Json> = {};
      if (depth > 4) return out;
      for (const [key, sub] of Object.entries(properties)) if (options.all || required.has(key)) out[key] = schemaValue(sub, key, rng, options, depth + 1);
      return out;
    }
    default:
      return stringIn(s, name, rng);
  }
}

function numberIn(s: Schema, rng: Rng, integer: boolean): number {
  const low = typeof s.minimum === 'number' ? s.minimum : typeof s.exclusiveMinimum === 'number' ? s.exclusiveMinimum + 1 : 1;
  const high = typeof s.maximum === 'number' ? s.maximum : typeof s.exclusiveMaximum === 'number' ? s.exclusiveMaximum - 1 : Math.max(low, 100);
  const lo = Math.ceil(low);
  const hi = Math.max(lo, Math.floor(high));
  return integer || hi > lo ? rng.int(lo, hi) : lo;
}

function stringIn(s: Schema, name: string, rng: Rng): string {
  const day = `2026-0${rng.int(1, 9)}-1${rng.int(0, 9)}`;
  const word = rng.pick(WORDS);
  let text: string;
  switch (s.format) {
    case 'date':
      return day;
    case 'date-time':
      return `${day}T${String(rng.int(8, 17)).padStart(2, '0')}:00:00Z`;
    case 'time':
      return `${String(rng.int(8, 17)).padStart(2, '0')}:30:00`;
    case 'email':
      return `${word}${rng.int(1, 99)}@example.com`;
    case 'uri':
    case 'url':
      return `https://example.com/${word}`;
    case 'ipv4':
      return `192.0.2.${rng.int(1, 254)}`;
    case 'ipv6':
      return `2001:db8::${rng.int(1, 255).toString(16)}`;
    case 'hostname':
      return `${word}.example.com`;
    case 'uuid': {
      const hex = () => rng.int(0, 15).toString(16);
      return [8, 4, 4, 4, 12].map((n) => Array.from({ length: n }, hex).join('')).join('-');
    }
    default:
      text = `${name.replace(/[^A-Za-z0-9]+/g, ' ').trim() || 'value'} ${word}`;
  }
  const min = typeof s.minLength === 'number' ? s.minLength : 0;
  const max = typeof s.maxLength === 'number' ? s.maxLength : Infinity;
  while (text.length < min) text += ` ${word}`;
  return text.length > max ? text.slice(0, max) : text;
}
