import type { z } from 'zod';

/**
 * Validating a record without zod's cost when zod's answer is plain from the record.
 *
 * A record a stage produced is usually canonical already: every default filled in, no key zod
 * would strip, keys in schema order. For such a record `schema.safeParse` builds a deep copy equal
 * to it, which costs most of a pipeline's validation time. The check here walks the schema and the
 * value together; per node it finds the value valid and canonical (`SAME`: parsing returns an equal
 * value), or valid once zod's defaults are filled in and its key order restored (a `Built` copy of
 * the nodes that change, as zod builds it), or certainly invalid (`INVALID`), or it cannot tell (a
 * key zod strips, a transform, a schema kind it does not know: `UNSURE`). Only a valid answer skips
 * zod: anything else is parsed by zod, so every error message is zod's own.
 */

const SAME = 0;
const INVALID = 1;
const UNSURE = 2;
/** Found by an object's walk: zod's object differs from the input (a default to fill in, a key out of place). */
const REBUILD = 3;
/** The value zod returns for a node whose input it changes (defaults filled in, keys reordered). */
interface Built {
  value: unknown;
}
type Verdict = typeof SAME | typeof INVALID | typeof UNSURE | Built;
/**
 * `base`: a value this schema node accepted as it is (canonical); what the checked value shares
 * with it (the same value under the same key or index) is valid as it is, and what differs is
 * checked against base's value there, down the schema's objects, lists and records (not through
 * unions: base's value may have been accepted by another option).
 */
type Check = (value: unknown, depth: number, base?: object) => Verdict;

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
    checks?: { _zod: { def: { check: string; minimum?: unknown; when?: (payload: unknown) => boolean }; check: (payload: unknown) => unknown } }[];
    coerce?: boolean;
    shape?: Record<string, ZodLike>;
    catchall?: ZodLike;
    element?: ZodLike;
    keyType?: ZodLike;
    valueType?: ZodLike;
    options?: ZodLike[];
    innerType?: ZodLike;
    defaultValue?: unknown;
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

/** Schemas whose values records share by identity (see `sharedByRecords`). */
const sharedSchemas = new WeakSet<object>();
/** A value of a shared schema is remembered when its walk took at least this many object and list nodes (smaller ones cost less to walk again). */
const REMEMBERED_NODES = 8;
/** Object and list nodes walked so far, by every check: how many a node's walk took. */
let walked = 0;

/**
 * Marks a schema whose values records share as objects (the tools of one library, offered by
 * every sample): a value of it found valid as it is is remembered, and the same object met again
 * is valid again without a walk, as nothing edits a checked record in place. Only for such
 * values: remembering each of many objects met once would cost more than it saves.
 */
export function sharedByRecords<T extends z.ZodType>(schema: T): T {
  sharedSchemas.add(schema);
  return schema;
}

/** The result of `schema.safeParse(value)`; without zod when the value is valid as it is or once zod's defaults are filled in. */
export function parseRecord<T>(schema: z.ZodType<T>, value: unknown): z.ZodSafeParseResult<T> {
  const verdict = checkOf(schema as unknown as ZodLike)(value, 0);
  if (verdict === SAME) return { success: true, data: value as T } as z.ZodSafeParseResult<T>;
  if (typeof verdict === 'object') return { success: true, data: verdict.value as T } as z.ZodSafeParseResult<T>;
  return schema.safeParse(value);
}

/**
 * The same for a record made from `base`, one the schema accepted as it is (the stage's input
 * record, checked where it was made): what the record shares with it (the same objects under the
 * same keys) is taken as checked, only the rest is walked. Sound as long as nothing edits a checked
 * record in place (see core/stage.ts).
 */
export function parseRecordFrom<T>(schema: z.ZodType<T>, value: unknown, base: unknown): z.ZodSafeParseResult<T> {
  if (value === base) return { success: true, data: value as T } as z.ZodSafeParseResult<T>;
  if (!isPlainObject(base)) return parseRecord(schema, value);
  const verdict = checkOf(schema as unknown as ZodLike)(value, 0, base);
  if (verdict === SAME) return { success: true, data: value as T } as z.ZodSafeParseResult<T>;
  if (typeof verdict === 'object') return { success: true, data: verdict.value as T } as z.ZodSafeParseResult<T>;
  return schema.safeParse(value);
}

/** Whether zod would accept `value` and return a value equal to it (exported for tests). */
export function isCanonical(schema: z.ZodType, value: unknown): boolean {
  return checkOf(schema as unknown as ZodLike)(value, 0) === SAME;
}

/** What a child's verdict makes of its parent's: the first invalid or unsure child decides. */
function isFailure(verdict: Verdict): verdict is typeof INVALID | typeof UNSURE {
  return verdict === INVALID || verdict === UNSURE;
}

/** The value a node's verdict stands for. */
function valueOf(verdict: Verdict, input: unknown): unknown {
  return typeof verdict === 'object' ? verdict.value : input;
}

function checkOf(schema: ZodLike): Check {
  let check = compiled.get(schema);
  if (!check) {
    // Children are looked up on first use, so a recursive schema (through z.lazy) compiles.
    check = withChecks(schema, compile(schema));
    if (sharedSchemas.has(schema)) check = remembering(check);
    compiled.set(schema, check);
  }
  return check;
}

/** A node's check that takes a large object or list it found valid as it is for valid when it meets it again. */
function remembering(check: Check): Check {
  let known: WeakSet<object> | undefined;
  // Walked without a base: a value is remembered only when found valid by its own walk (shared values are walked once anyway).
  return (value, depth) => {
    if (typeof value !== 'object' || value === null) return check(value, depth);
    if (known?.has(value)) return SAME;
    const before = walked;
    const verdict = check(value, depth);
    if (verdict === SAME && walked - before >= REMEMBERED_NODES) (known ??= new WeakSet()).add(value);
    return verdict;
  };
}

/** The node's own zod checks (min length, regex, refinements), run on the value zod would have made. */
function withChecks(schema: ZodLike, check: Check): Check {
  const checks = schema._zod.def.checks ?? [];
  if (!checks.length) return check;
  if (checks.some((c) => !REPORTING_CHECKS.has(c._zod.def.check))) return () => UNSURE;
  return (value, depth, base) => {
    const verdict = check(value, depth, base);
    if (isFailure(verdict)) return verdict;
    const made = valueOf(verdict, value);
    let payload: { value: unknown; issues: unknown[] } | undefined;
    for (const c of checks) {
      // A string twice as long (in UTF-16 units) as a minimum length in code points meets it: the common case, answered here.
      if (c._zod.def.check === 'min_length' && typeof made === 'string' && made.length >= 2 * (c._zod.def.minimum as number)) continue;
      payload ??= { value: made, issues: [] };
      if (c._zod.def.when && !c._zod.def.when(payload)) continue;
      if (c._zod.check(payload) instanceof Promise) return UNSURE;
    }
    if (!payload) return verdict;
    if (payload.value !== made) return UNSURE;
    return payload.issues.length ? INVALID : verdict;
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
      return (value, depth, base) => (value === undefined ? (def.innerType!._zod.optin === 'defaulted' ? UNSURE : SAME) : inner()(value, depth, base));
    }
    case 'nullable': {
      const inner = lazily(() => def.innerType!);
      return (value, depth, base) => (value === null ? SAME : inner()(value, depth, base));
    }
    case 'default': {
      const inner = lazily(() => def.innerType!);
      // Zod returns the default as it is, without parsing it.
      return (value, depth, base) => (value === undefined ? { value: def.defaultValue } : inner()(value, depth, base));
    }
    case 'lazy': {
      const inner = lazily(() => zod.innerType!);
      return (value, depth, base) => inner()(value, depth, base);
    }
    case 'array': {
      const element = lazily(() => def.element!);
      return (value, depth, base) => {
        if (!Array.isArray(value)) return INVALID;
        if (depth > MAX_DEPTH) return UNSURE;
        walked++;
        const check = element();
        const from = Array.isArray(base) ? base : undefined;
        let built: unknown[] | undefined;
        for (let i = 0; i < value.length; i++) {
          const v = from ? fromBase(check, value, from, i, depth) : check(value[i], depth + 1);
          if (v === SAME) continue;
          if (isFailure(v)) return v;
          (built ??= value.slice())[i] = v.value;
        }
        return built ? { value: built } : SAME;
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
  return (value, depth, base) => {
    if (!isPlainObject(value)) return INVALID;
    if (depth > MAX_DEPTH) return UNSURE;
    walked++;
    const item = itemCheck();
    const from = isPlainObject(base) ? base : undefined;
    let built: Record<string, unknown> | undefined;
    for (const k in value) {
      // Zod drops a `__proto__` key.
      if (k === '__proto__') return UNSURE;
      if (!anyKey && keyCheck()(k, depth + 1) !== SAME) return UNSURE;
      const v = from ? fromBase(item, value, from, k, depth) : item(value[k], depth + 1);
      if (v === SAME) continue;
      if (isFailure(v)) return v;
      (built ??= { ...value })[k] = v.value;
    }
    // Zod also checks symbol keys (which JSON drops).
    if (Object.getOwnPropertySymbols(value).length) return UNSURE;
    return built ? { value: built } : SAME;
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
  let absent: (typeof SAME | typeof INVALID | typeof UNSURE | 'default')[] | undefined;

  /** The object zod builds: the shape's keys in shape order (defaults filled in), then the keys it passes through in input order. */
  const build = (value: Record<string, unknown>, verdicts: Verdict[], extras: Map<string, Verdict> | undefined): Built => {
    const made: Record<string, unknown> = {};
    for (let m = 0; m < count; m++) {
      const k = keys[m];
      if (Object.prototype.hasOwnProperty.call(value, k)) made[k] = valueOf(verdicts[m] ?? SAME, value[k]);
      else if (absent![m] === 'default') made[k] = shape[k]._zod.def.defaultValue;
    }
    if (extras) for (const [k, v] of extras) made[k] = valueOf(v, value[k]);
    return { value: made };
  };

  /**
   * The shape keys `from`..`to` a walk passed over: each absent (an error, nothing, or a default
   * to fill in: `REBUILD`) or met later, out of order (`REBUILD`).
   */
  const skipped = (value: Record<string, unknown>, from: number, to: number): Verdict | typeof REBUILD => {
    let verdict: Verdict | typeof REBUILD = SAME;
    for (let m = from; m < to; m++) {
      if (Object.prototype.hasOwnProperty.call(value, keys[m]) || absent![m] === 'default') verdict = REBUILD;
      else if (absent![m] !== SAME) return absent![m] as Verdict;
    }
    return verdict;
  };

  return (value, depth, base) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return INVALID;
    if (!isPlainObject(value)) return UNSURE;
    if (depth > MAX_DEPTH) return UNSURE;
    if (base !== undefined && !isPlainObject(base)) base = undefined;
    walked++;
    fields ??= keys.map((k) => checkOf(shape[k]));
    // What zod makes of a missing key: an error, nothing (optional), its default, or something this check leaves to zod.
    absent ??= keys.map((k) => {
      const { optin, optout } = shape[k]._zod;
      if (optin === undefined) return INVALID;
      if (optin === 'optional' && optout === 'optional') return SAME;
      return shape[k]._zod.def.type === 'default' ? 'default' : UNSURE;
    });
    // Walk the input's keys against the shape's (`next`: the shape key expected next). The first
    // difference from what zod returns (a default to fill in, a key out of place or stripped, a
    // child zod changes) means building zod's object from the verdicts collected here.
    let rebuild = false;
    let verdicts: Verdict[] | undefined;
    let extras: Map<string, Verdict> | undefined;
    let next = 0;
    for (const k in value) {
      let at = next;
      while (at < count && keys[at] !== k) at++;
      if (at === count) {
        if (k === '__proto__') return UNSURE;
        if (keys.indexOf(k) !== -1) continue; // met before its place: found by the gap check below
        if (strict) return INVALID;
        if (!catchall) {
          rebuild = true; // zod strips it
          continue;
        }
        // Zod passes it through after the shape's keys.
        const v = extraCheck()(value[k], depth + 1);
        if (isFailure(v)) return v;
        if (v !== SAME) rebuild = true;
        (extras ??= new Map()).set(k, v);
        continue;
      }
      if (extras) rebuild = true;
      if (at !== next) {
        const gap = skipped(value, next, at);
        if (gap === REBUILD) rebuild = true;
        else if (gap !== SAME) return gap;
      }
      next = at + 1;
      const v = base === undefined ? fields[at](value[k], depth + 1) : fromBase(fields[at], value, base, k, depth);
      if (v === SAME) continue;
      if (isFailure(v)) return v;
      rebuild = true;
      (verdicts ??= [])[at] = v;
    }
    if (next !== count) {
      const gap = skipped(value, next, count);
      if (gap === REBUILD) rebuild = true;
      else if (gap !== SAME) return gap;
    }
    if (!rebuild) return SAME;
    // Keys met out of order were passed over above: check them (and again the others) in shape order.
    for (let m = 0; m < count; m++) {
      if (verdicts?.[m] !== undefined || !Object.prototype.hasOwnProperty.call(value, keys[m])) continue;
      const v = base === undefined ? fields[m](value[keys[m]], depth + 1) : fromBase(fields[m], value, base, keys[m], depth);
      if (isFailure(v)) return v;
      (verdicts ??= [])[m] = v;
    }
    return build(value, verdicts ?? [], extras);
  };
}

/** The verdict on `value[key]` (a field, a record's entry, a list's item) where `base` (accepted as it is) may hold it too: the very same value is valid as it is; another is checked against base's. */
function fromBase(check: Check, value: object, base: object, key: string | number, depth: number): Verdict {
  const own = (value as Record<string | number, unknown>)[key];
  if (!Object.prototype.hasOwnProperty.call(base, key)) return check(own, depth + 1);
  const held = (base as Record<string | number, unknown>)[key];
  return own === held ? SAME : check(own, depth + 1, objectOrUndefined(held));
}

/** A value as a `base` for a child's check (only objects and lists share parts). */
function objectOrUndefined(value: unknown): object | undefined {
  return typeof value === 'object' && value !== null ? value : undefined;
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
