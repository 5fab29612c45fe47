import type { z } from 'zod';

/**
 * Validating a record without zod's cost when the record is already what zod would return.
 *
 * A record a stage produced is usually canonical already: every default filled in, no key zod
 * would strip, keys in schema order. For such a record `schema.safeParse` builds a deep copy equal
 * to it (its JSON text is the same), which costs most of a pipeline's validation time. The check
 * here walks the schema and the value together and answers one of three things per node: the value
 * is valid and parsing returns an equal value (`SAME`); parsing certainly fails (`INVALID`); or it
 * cannot tell (a default to fill in, a key to strip, a transform, a schema kind it does not know:
 * `UNSURE`). Only `SAME` skips zod: anything else is parsed by zod, so errors, defaults and
 * stripping are always zod's own.
 */

const SAME = 0;
const INVALID = 1;
const UNSURE = 2;
type Verdict = typeof SAME | typeof INVALID | typeof UNSURE;
type Check = (value: unknown, depth: number) => Verdict;

/** Deeper values are left to zod (a cyclic value would otherwise never end). */
const MAX_DEPTH = 200;

/** Zod's checks that only report issues; others (`overwrite`) may change the value. */
const REPORTING_CHECKS = new Set([
  'less_than',
  'greater_than',
  'multiple_of',
  'number_format',
  'max_size',
  'min_size',
  'size_equals',
  'max_length',
  'min_length',
  'length_equals',
  'string_format',
  'lowercase',
  'uppercase',
  'includes',
  'starts_with',
  'ends_with',
  'custom',
]);

interface ZodInternals {
  def: {
    type: string;
    checks?: { _zod: { def: { check: string; when?: (payload: unknown) => boolean }; check: (payload: unknown) => unknown } }[];
    coerce?: boolean;
    shape?: Record<string, ZodLike>;
    catchall?: ZodLike;
    element?: ZodLike;
    keyType?: ZodLike;
    valueType?: ZodLike;
    options?: ZodLike[];
    innerType?: ZodLike;
    mode?: string;
  };
  values?: Set<unknown>;
  optin?: string;
  optout?: string;
  innerType?: ZodLike;
}
interface ZodLike {
  _zod: ZodInternals;
}

const compiled = new WeakMap<object, Check>();

/** The result of `schema.safeParse(value)`, taking `value` itself when it is already what zod would return. */
export function parseRecord<T>(schema: z.ZodType<T>, value: unknown): z.ZodSafeParseResult<T> {
  if (checkOf(schema as unknown as ZodLike)(value, 0) === SAME) return { success: true, data: value as T } as z.ZodSafeParseResult<T>;
  return schema.safeParse(value);
}

/** Whether zod would accept `value` and return a value equal to it (exported for tests). */
export function isCanonical(schema: z.ZodType, value: unknown): boolean {
  return checkOf(schema as unknown as ZodLike)(value, 0) === SAME;
}

function checkOf(schema: ZodLike): Check {
  let check = compiled.get(schema);
  if (!check) {
    // Children are looked up on first use, so a recursive schema (through z.lazy) compiles.
    check = withChecks(schema, compile(schema));
    compiled.set(schema, check);
  }
  return check;
}

/** The node's own zod checks (min length, regex, refinements), run on a value that passed its type. */
function withChecks(schema: ZodLike, check: Check): Check {
  const checks = schema._zod.def.checks ?? [];
  if (!checks.length) return check;
  if (checks.some((c) => !REPORTING_CHECKS.has(c._zod.def.check))) return () => UNSURE;
  return (value, depth) => {
    const verdict = check(value, depth);
    if (verdict !== SAME) return verdict;
    const payload = { value, issues: [] as unknown[] };
    for (const c of checks) {
      if (c._zod.def.when && !c._zod.def.when(payload)) continue;
      if (c._zod.check(payload) instanceof Promise) return UNSURE;
    }
    if (payload.value !== value) return UNSURE;
    return payload.issues.length ? INVALID : SAME;
  };
}

/** The check of a child schema, compiled on first use. */
function lazily(schema: () => ZodLike): () => Check {
  let check: Check | undefined;
  return () => (check ??= checkOf(schema()));
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function compile(schema: ZodLike): Check {
  const zod = schema._zod;
  const def = zod.def;
  if (def.coerce) return () => UNSURE;
  switch (def.type) {
    case 'string':
      return (value) => (typeof value === 'string' ? SAME : INVALID);
    case 'number':
      return (value) => (typeof value === 'number' && Number.isFinite(value) ? SAME : INVALID);
    case 'boolean':
      return (value) => (typeof value === 'boolean' ? SAME : INVALID);
    case 'null':
      return (value) => (value === null ? SAME : INVALID);
    case 'unknown':
    case 'any':
      return () => SAME;
    case 'never':
      return () => INVALID;
    case 'literal':
    case 'enum': {
      const values = zod.values as Set<unknown>;
      return (value) => (values.has(value) ? SAME : INVALID);
    }
    case 'optional': {
      const inner = lazily(() => def.innerType!);
      return (value, depth) => (value === undefined ? (def.innerType!._zod.optin === 'defaulted' ? UNSURE : SAME) : inner()(value, depth));
    }
    case 'nullable': {
      const inner = lazily(() => def.innerType!);
      return (value, depth) => (value === null ? SAME : inner()(value, depth));
    }
    case 'default': {
      const inner = lazily(() => def.innerType!);
      return (value, depth) => (value === undefined ? UNSURE : inner()(value, depth));
    }
    case 'lazy': {
      const inner = lazily(() => zod.innerType!);
      return (value, depth) => inner()(value, depth);
    }
    case 'array': {
      const element = lazily(() => def.element!);
      return (value, depth) => {
        if (!Array.isArray(value)) return INVALID;
        if (depth > MAX_DEPTH) return UNSURE;
        const check = element();
        let verdict: Verdict = SAME;
        for (let i = 0; i < value.length; i++) {
          const v = check(value[i], depth + 1);
          if (v === INVALID) return INVALID;
          if (v === UNSURE) verdict = UNSURE;
        }
        return verdict;
      };
    }
    case 'record':
      return compileRecord(def);
    case 'object':
      return compileObject(def);
    case 'union':
      return compileUnion(def);
    default:
      // Transforms, pipes, custom types …: zod decides.
      return () => UNSURE;
  }
}

function compileRecord(def: ZodInternals['def']): Check {
  // A record over an enumerable key set (z.enum keys) fills and checks keys of its own: zod decides.
  if (def.keyType!._zod.values || def.mode === 'loose') return () => UNSURE;
  // Keys of an object are strings: a plain z.string() key schema has nothing to check.
  const keyType = def.keyType!._zod.def;
  const anyKey = keyType.type === 'string' && !keyType.checks?.length && !keyType.coerce;
  const keyCheck = lazily(() => def.keyType!);
  const itemCheck = lazily(() => def.valueType!);
  return (value, depth) => {
    if (!isPlainObject(value)) return INVALID;
    if (depth > MAX_DEPTH) return UNSURE;
    const item = itemCheck();
    let verdict: Verdict = SAME;
    for (const k in value) {
      // Zod drops a `__proto__` key.
      if (k === '__proto__') return UNSURE;
      const v = (anyKey ? SAME : keyCheck()(k, depth + 1)) || item(value[k], depth + 1);
      if (v === INVALID) return INVALID;
      if (v === UNSURE) verdict = UNSURE;
    }
    // Zod also checks symbol keys (which JSON drops).
    if (Object.getOwnPropertySymbols(value).length) return UNSURE;
    return verdict;
  };
}

function compileObject(def: ZodInternals['def']): Check {
  const shape = def.shape!;
  const keys = Object.keys(shape);
  const count = keys.length;
  // A shape key Object.prototype also has reads as present when absent: zod decides.
  if (keys.some((k) => k in Object.prototype) || Object.getOwnPropertySymbols(shape).length) return () => UNSURE;
  const catchall = def.catchall;
  const strict = catchall?._zod.def.type === 'never';
  const extraCheck = lazily(() => catchall!);
  let fields: Check[] | undefined;
  let absent: Verdict[] | undefined;
  return (value, depth) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return INVALID;
    if (!isPlainObject(value)) return UNSURE;
    if (depth > MAX_DEPTH) return UNSURE;
    fields ??= keys.map((k) => checkOf(shape[k]));
    // What zod makes of a missing key: an error, nothing (optional), or a default to fill in.
    absent ??= keys.map((k) => {
      const { optin, optout } = shape[k]._zod;
      return optin === undefined ? INVALID : optin === 'optional' && optout === 'optional' ? SAME : UNSURE;
    });
    let verdict: Verdict = SAME;
    // Zod writes the shape's keys in shape order, then the keys it passes through in input order:
    // walk the input's keys against the shape's (`next`: the shape key expected next).
    let next = 0;
    let extraSeen = false;
    for (const k in value) {
      let at = next;
      while (at < count && keys[at] !== k) at++;
      if (at < count) {
        if (extraSeen) verdict = UNSURE; // zod would move it before the extra keys
        for (let m = next; m < at; m++) {
          if (absent[m] === INVALID) return INVALID;
          if (absent[m] === UNSURE) verdict = UNSURE;
        }
        next = at + 1;
        const v = fields[at](value[k], depth + 1);
        if (v === INVALID) return INVALID;
        if (v === UNSURE) verdict = UNSURE;
        continue;
      }
      if (keys.indexOf(k) !== -1) return UNSURE; // a shape key out of order: zod would reorder
      if (k === '__proto__') return UNSURE;
      if (strict) return INVALID;
      extraSeen = true;
      if (!catchall) verdict = UNSURE; // stripped
      else {
        const v = extraCheck()(value[k], depth + 1);
        if (v === INVALID) return INVALID;
        if (v === UNSURE) verdict = UNSURE;
      }
    }
    for (let m = next; m < count; m++) {
      if (absent[m] === INVALID) return INVALID;
      if (absent[m] === UNSURE) verdict = UNSURE;
    }
    return verdict;
  };
}

function compileUnion(def: ZodInternals['def']): Check {
  let options: Check[] | undefined;
  return (value, depth) => {
    options ??= def.options!.map(checkOf);
    // Zod returns the first option that accepts the value: an earlier option must certainly fail.
    for (const option of options) {
      const v = option(value, depth);
      if (v === INVALID) continue;
      return v;
    }
    return INVALID;
  };
}
