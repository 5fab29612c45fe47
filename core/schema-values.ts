import { jsonTypeOf } from './json-schema.ts';
import { isJsonObject, type Json } from './records.ts';
import type { Rng } from './rng.ts';
import { unorderedPairs } from './value-ranges.ts';

/**
 * Values that a JSON Schema accepts, drawn with a seeded rng: what an offline renderer writes
 * where a model would fill a tool's arguments or simulate its result. They follow the schema's
 * constraints (const, enum, types, formats, patterns, lengths, bounds, item counts, required
 * properties, `anyOf` / `oneOf` branches), read realistically where a name says what a string
 * holds (an email, a city, an id), and keep ranges in order (`start_date` before `end_date`), as
 * the shared invariants (core/invariants.ts) require of every call.
 */

/**
 * A string matching a regular expression of the simple kind API schemas use: literals, escapes
 * (`\d \w \s`), classes with ranges, groups with alternatives, and the quantifiers `? * + {n} {n,m}`.
 * Undefined when the pattern uses anything else or the result does not match.
 */
export function stringForPattern(pattern: string, rng: Rng, length: { min?: number; max?: number } = {}): string | undefined {
  // Unbounded repeats (`+`, `*`) get a few occurrences, more when the schema asks for a longer string.
  const repeatMin = Math.max(3, length.min ?? 0);
  const repeatMax = Math.min(Math.max(8, repeatMin + 4), length.max ?? Infinity);
  let pos = 0;
  const src = pattern;
  // Reads the escape after a backslash at `pos` (`\d`, `\u4e00`, `\.`) and moves past it.
  const readEscape = (): string[] => {
    const letter = src[pos++];
    if (letter === 'u' && /^[0-9a-fA-F]{4}$/.test(src.slice(pos, pos + 4))) {
      pos += 4;
      return [String.fromCharCode(Number.parseInt(src.slice(pos - 4, pos), 16))];
    }
    return classOf(letter);
  };
  const classOf = (escape: string): string[] => {
    if (escape === 'd') return [...'0123456789'];
    if (escape === 'w') return [...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'];
    if (escape === 's') return [' '];
    return [escape];
  };
  // Each atom is a generator of one occurrence.
  const parseAlternatives = (): (() => string) => {
    const branches: (() => string)[][] = [[]];
    while (pos < src.length && src[pos] !== ')') {
      const ch = src[pos];
      if (ch === '|') {
        pos++;
        branches.push([]);
        continue;
      }
      let atom: () => string;
      if (ch === '^' || ch === '$') {
        pos++;
        continue;
      } else if (ch === '(') {
        pos++;
        if (src.startsWith('?:', pos)) pos += 2;
        const inner = parseAlternatives();
        if (src[pos] !== ')') throw new Error('unclosed group');
        pos++;
        atom = inner;
      } else if (ch === '[') {
        pos++;
        const negate = src[pos] === '^';
        if (negate) throw new Error('negated class');
        const chars: string[] = [];
        while (pos < src.length && src[pos] !== ']') {
          const c = src[pos++];
          const set = c === '\\' ? readEscape() : [c];
          if (set.length === 1 && src[pos] === '-' && src[pos + 1] !== ']' && pos + 1 < src.length) {
            pos++;
            const end = src[pos] === '\\' ? (pos++, readEscape()[0]) : src[pos++];
            for (let code = set[0].charCodeAt(0); code <= end.charCodeAt(0); code++) chars.push(String.fromCharCode(code));
          } else chars.push(...set);
        }
        pos++;
        // Prefer letters and digits over punctuation a class also allows.
        const plain = chars.filter((c) => /[A-Za-z0-9]/.test(c));
        atom = () => rng.pick(plain.length ? plain : chars);
      } else if (ch === '\\') {
        pos++;
        const set = readEscape();
        atom = () => rng.pick(set);
      } else if (ch === '.') {
        pos++;
        atom = () => rng.pick([...'abcdefghijklmnopqrstuvwxyz']);
      } else {
        pos++;
        atom = () => ch;
      }
      let min = 1;
      let max = 1;
      const q = src[pos];
      if (q === '?') [min, max, pos] = [0, 1, pos + 1];
      else if (q === '*' || q === '+') [min, max, pos] = [repeatMin, Math.max(repeatMin, repeatMax), pos + 1];
      else if (q === '{') {
        const close = src.indexOf('}', pos);
        const [a, b] = src.slice(pos + 1, close).split(',');
        min = Number(a);
        max = b === undefined ? min : b === '' ? min + 6 : Number(b);
        pos = close + 1;
      }
      const occurrences = () => Array.from({ length: rng.int(min, max) }, atom).join('');
      branches[branches.length - 1].push(occurrences);
    }
    return () => rng.pick(branches).map((part) => part()).join('');
  };
  try {
    const value = parseAlternatives()();
    return matchesPattern(pattern, value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `value` matches `pattern`, read as Unicode where it compiles so, else as a plain regex (released patterns escape freely). */
export function matchesPattern(pattern: string, value: string): boolean {
  for (const flags of ['u', '']) {
    try {
      return new RegExp(pattern, flags).test(value);
    } catch {
      // try the next reading
    }
  }
  return false;
}

export interface SchemaValueOptions {
  /** The date (YYYY-MM-DD) dates are drawn after. */
  today: string;
  /** Share of optional properties filled (default 0.5). */
  optionalShare?: number;
}

type Schema = Record<string, Json>;

function asSchema(value: unknown): Schema {
  return isJsonObject(value) ? (value as Schema) : {};
}

const pad = (n: number) => String(n).padStart(2, '0');

function dayAfter(today: string, days: number): string {
  const date = new Date(`${today}T00:00:00Z`);
  date.setUTCDate(date.getUTCDate() + days);
  return date.toISOString().slice(0, 10);
}

/** Realistic strings for what a parameter's name says it holds (last word first). */
const BY_NAME: [RegExp, (rng: Rng) => string][] = [
  [/e-?mail/, (rng) => `${rng.pick(['alice', 'david', 'maria', 'tom'])}${rng.int(1, 99)}@example.com`],
  [/phone/, (rng) => `+1${rng.int(200, 999)}${rng.int(1000000, 9999999)}`],
  [/url|link|website|endpoint/, (rng) => `https://example.com/${rng.pick(['docs', 'reports', 'items'])}/${rng.int(100, 999)}`],
  [/(^|_)(id|uuid|key|code)$|Id$/, (rng) => `${rng.pick(['A', 'K', 'N', 'R'])}${rng.int(10000, 99999)}`],
  [/city|location|place|address|destination|origin|region/, (rng) => rng.pick(['Chicago', 'Berlin', 'Tokyo', 'Lisbon', 'Toronto'])],
  [/country/, (rng) => rng.pick(['France', 'Japan', 'Canada', 'Brazil'])],
  [/language|lang$/, (rng) => rng.pick(['en', 'fr', 'de', 'es'])],
  [/currency/, (rng) => rng.pick(['USD', 'EUR', 'JPY'])],
  [/name|title/, (rng) => rng.pick(['Alice Johnson', 'Spring Launch', 'Harbor View', 'Blue Notebook'])],
  [/query|search|keyword|term|topic|q$/, (rng) => rng.pick(['renewable energy', 'jazz piano', 'urban gardening', 'machine learning'])],
  [/path|file/, (rng) => `${rng.pick(['notes', 'report', 'photo'])}_${rng.int(1, 99)}.${rng.pick(['txt', 'pdf', 'jpg'])}`],
  [/symbol|ticker/, (rng) => rng.pick(['AAPL', 'MSFT', 'TSLA'])],
  [/text|body|content|message|description|comment|note|prompt/, (rng) => rng.pick(['Please keep it short.', 'Meeting moved to Friday.', 'Remember the quarterly figures.'])],
];

function stringByName(name: string, rng: Rng, options: SchemaValueOptions): string {
  const key = name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
  if (/date|day$/.test(key) && !/update/.test(key)) return dayAfter(options.today, rng.int(1, 30));
  if (/(^|_)time$/.test(key)) return `${pad(rng.int(8, 20))}:${rng.pick(['00', '15', '30', '45'])}`;
  for (const [pattern, make] of BY_NAME) if (pattern.test(key) || pattern.test(name)) return make(rng);
  return `${key.replace(/_/g, ' ').trim() || 'value'} ${rng.int(1, 99)}`;
}

function formatted(format: string, name: string, rng: Rng, options: SchemaValueOptions): string | undefined {
  const day = dayAfter(options.today, rng.int(1, 30));
  const time = `${pad(rng.int(8, 20))}:${rng.pick(['00', '15', '30', '45'])}`;
  switch (format) {
    case 'date':
      return day;
    case 'date-time':
      return `${day}T${time}:00Z`;
    case 'time':
      return time;
    case 'email':
      return stringByName('email', rng, options);
    case 'uri':
    case 'url':
    case 'uri-reference':
      return stringByName('url', rng, options);
    case 'uuid':
      return stringForPattern('^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$', rng);
    case 'ipv4':
      return `192.168.${rng.int(0, 255)}.${rng.int(1, 254)}`;
    case 'ipv6':
      return `2001:db8::${rng.int(1, 65535).toString(16)}`;
    case 'hostname':
      return `${rng.pick(['api', 'files', 'mail'])}.example.com`;
    default:
      return undefined;
  }
}

function stringValue(s: Schema, name: string, rng: Rng, options: SchemaValueOptions): string {
  const min = typeof s.minLength === 'number' ? s.minLength : 0;
  const max = typeof s.maxLength === 'number' ? s.maxLength : Infinity;
  const fits = (value: string) => value.length >= min && value.length <= max && (typeof s.pattern !== 'string' || matchesPattern(s.pattern, value));
  const candidates = [typeof s.format === 'string' ? formatted(s.format, name, rng, options) : undefined, stringByName(name, rng, options)];
  const natural = candidates.find((value): value is string => value !== undefined && fits(value));
  if (natural !== undefined) return natural;
  if (typeof s.pattern === 'string') {
    for (let tries = 0; tries < 10; tries++) {
      const drawn = stringForPattern(s.pattern, rng, { min, max });
      if (drawn !== undefined && fits(drawn)) return drawn;
    }
  }
  let value = candidates.find((v) => v !== undefined) ?? 'value';
  while (value.length < min) value += ' more';
  return value.slice(0, max);
}

function numberValue(s: Schema, integer: boolean, rng: Rng): number {
  const low = typeof s.minimum === 'number' ? s.minimum : typeof s.exclusiveMinimum === 'number' ? s.exclusiveMinimum + (integer ? 1 : 0.5) : 1;
  const high = typeof s.maximum === 'number' ? s.maximum : typeof s.exclusiveMaximum === 'number' ? s.exclusiveMaximum - (integer ? 1 : 0.5) : Math.max(low, 0) + (integer ? 20 : 100);
  const step = typeof s.multipleOf === 'number' && s.multipleOf > 0 ? s.multipleOf : integer ? 1 : 0;
  if (step) {
    const first = Math.ceil(low / step);
    const last = Math.floor(high / step);
    return last >= first ? Number((rng.int(first, last) * step).toFixed(10)) : low;
  }
  return Math.round((low + rng.next() * (high - low)) * 100) / 100;
}

/** Known string formats, drawn as values of their kind. */
const FORMATS = new Set(['date', 'date-time', 'time', 'email', 'uri', 'url', 'uri-reference', 'uuid', 'ipv4', 'ipv6', 'hostname']);

/** How sure a branch is to be met by a drawn value: a closed set, then a known format, then no pattern, then a pattern. */
function certainty(branch: Schema): number {
  if (branch.const !== undefined || Array.isArray(branch.enum)) return 0;
  if (typeof branch.format === 'string' && FORMATS.has(branch.format)) return 1;
  return typeof branch.pattern === 'string' ? 3 : 2;
}

/**
 * The branch of a union the value is drawn from: among those a value can meet (not `null` alone,
 * not a `not` — zod writes an optional as `anyOf [{not: {}}, X]`), one of the surest kind.
 */
function branchOf(s: Schema, rng: Rng): Schema | undefined {
  const branches = [s.anyOf, s.oneOf].find(Array.isArray) as Json[] | undefined;
  if (!branches?.length) return undefined;
  const usable = branches.map(asSchema).filter((b) => b.type !== 'null' && b.not === undefined);
  const surest = usable.length ? Math.min(...usable.map(certainty)) : 0;
  const { anyOf: _a, oneOf: _o, ...rest } = s;
  return { ...rest, ...(usable.length ? rng.pick(usable.filter((b) => certainty(b) === surest)) : asSchema(branches[0])) };
}

/** A value `schema` accepts; `name` (the property's) picks a realistic string. */
export function valueForSchema(schema: unknown, name: string, rng: Rng, options: SchemaValueOptions): Json {
  let s = asSchema(schema);
  const branch = branchOf(s, rng);
  if (branch) s = branch;
  if (Array.isArray(s.allOf)) s = Object.assign({}, ...s.allOf.map(asSchema), { ...s, allOf: undefined });
  if (s.const !== undefined) return s.const;
  if (Array.isArray(s.enum) && s.enum.length) return rng.pick(s.enum);
  if (s.default !== undefined && s.default !== null && rng.chance(0.3)) return s.default;
  const declared = Array.isArray(s.type) ? (s.type.find((t) => t !== 'null') ?? 'null') : s.type;
  const type = jsonTypeOf(declared) ?? (s.properties ? 'object' : s.items ? 'array' : 'string');
  switch (type) {
    case 'null':
      return null;
    case 'boolean':
      return rng.chance(0.5);
    case 'integer':
    case 'number':
      return numberValue(s, type === 'integer', rng);
    case 'array': {
      const min = typeof s.minItems === 'number' ? s.minItems : 1;
      const max = typeof s.maxItems === 'number' ? s.maxItems : min + 2;
      const count = rng.int(min, Math.max(min, Math.min(max, min + 1)));
      const item = name.replace(/ies$/, 'y').replace(/([^s])s$/, '$1');
      const values: Json[] = [];
      for (let tries = 0; tries < count * 4 && values.length < count; tries++) {
        const value = valueForSchema(s.items, item, rng, options);
        if (!values.some((v) => JSON.stringify(v) === JSON.stringify(value))) values.push(value);
      }
      while (values.length < min) values.push(valueForSchema(s.items, item, rng, options));
      return values;
    }
    case 'object':
      return objectForSchema(s, rng, options);
    default:
      return stringValue(s, name, rng, options);
  }
}

/** A schema without what only annotates it. */
function constraintsOf(schema: Json | undefined): string {
  const { description: _d, title: _t, default: _v, examples: _e, ...rest } = asSchema(schema);
  return JSON.stringify(rest);
}

/**
 * An object `schema` accepts: every required property, a share of the optional ones (none of
 * `omit`), ranges among them in order.
 */
export function objectForSchema(schema: unknown, rng: Rng, options: SchemaValueOptions, omit: readonly string[] = []): Record<string, Json> {
  const s = asSchema(schema);
  const properties = asSchema(s.properties);
  const required = new Set(Array.isArray(s.required) ? s.required.filter((r): r is string => typeof r === 'string') : []);
  const out: Record<string, Json> = {};
  for (const [name, property] of Object.entries(properties)) {
    if (omit.includes(name)) continue;
    if (required.has(name) || rng.chance(options.optionalShare ?? 0.5)) out[name] = valueForSchema(property, name, rng, options);
  }
  for (const { start, end } of unorderedPairs(out)) {
    // Bounds of one schema (descriptions aside) may trade values and stay valid.
    if (constraintsOf(properties[start]) === constraintsOf(properties[end])) [out[start], out[end]] = [out[end], out[start]];
    else for (let tries = 0; tries < 10 && unorderedPairs({ [start]: out[start], [end]: out[end] }).length; tries++) out[end] = valueForSchema(properties[end], end, rng, options);
  }
  return out;
}
