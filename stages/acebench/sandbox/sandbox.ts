import { UserError } from '../../../core/errors.ts';
import type { Json } from '../../../core/records.ts';
import type { AceFunction, AceLanguage } from '../record.ts';
import { RELEASED_FUNCTIONS } from './released-functions.ts';
import { hasType, jsonTypeOf } from '../../../core/json-schema.ts';

/**
 * What every ACEBench sandbox class shares: its methods' signatures (checked before a call runs,
 * and turned into the released function-description shape), loading an `initial_config` over the
 * defaults, and a snapshot of its state in the released ground_truth shape.
 */

export type Text = Record<AceLanguage, string>;
export type ParamType = 'string' | 'integer' | 'number' | 'boolean' | 'list' | 'dict';

export interface ParamSpec {
  type: ParamType;
  description: Text;
  /** Required unless false (Python parameters without a default). */
  required?: boolean;
  enum?: Json[];
  default?: Json;
  /** For a list: the shape of each element. */
  items?: ParamSpec;
  /** For a dict: its keys (a key without `required: false` must be present). */
  properties?: Record<string, ParamSpec>;
}

/** One public method: its Python name, what it does, its keyword parameters in signature order. */
export interface MethodSpec {
  name: string;
  description: Text;
  params: Record<string, ParamSpec>;
}

export type Args = Record<string, Json>;

const TYPE_NAMES: Record<ParamType, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'a boolean (True or False)',
  list: 'a list',
  dict: 'a dict',
};

function typeOf(value: Json): string {
  if (value === null) return 'None';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a dict';
  if (typeof value === 'number') return Number.isInteger(value) ? 'an integer' : 'a float';
  return `a ${typeof value === 'boolean' ? 'boolean' : 'string'}`;
}

function matchesType(value: Json, type: ParamType): boolean {
  return hasType(value, jsonTypeOf(type)!);
}

/** Why `value` does not fit `spec` (the path names the argument, list index or dict key), or null. */
function valueProblem(value: Json, spec: ParamSpec, path: string): string | null {
  if (!matchesType(value, spec.type)) return `argument '${path}' must be ${TYPE_NAMES[spec.type]}, got ${typeOf(value)} (${JSON.stringify(value)})`;
  if (spec.enum && !spec.enum.includes(value)) return `argument '${path}' must be one of ${spec.enum.map((v) => JSON.stringify(v)).join(', ')}, got ${JSON.stringify(value)}`;
  if (spec.items && Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const problem = valueProblem(value[i], spec.items, `${path}[${i}]`);
      if (problem) return problem;
    }
  }
  if (spec.properties && matchesType(value, 'dict')) return argumentsProblem(value as Args, spec.properties, `${path}.`);
  return null;
}

function argumentsProblem(args: Args, params: Record<string, ParamSpec>, prefix: string): string | null {
  for (const key of Object.keys(args)) {
    if (!Object.hasOwn(params, key)) {
      const known = Object.keys(params);
      return `unexpected argument '${prefix}${key}' (${known.length ? `expected ${known.join(', ')}` : 'it takes none'})`;
    }
  }
  for (const [key, spec] of Object.entries(params)) {
    if (!Object.hasOwn(args, key)) {
      if (spec.required !== false) return `missing required argument '${prefix}${key}' (${TYPE_NAMES[spec.type]})`;
      continue;
    }
    // Python's None for a parameter that defaults to None.
    if (args[key] === null && spec.required === false) continue;
    const problem = valueProblem(args[key], spec, `${prefix}${key}`);
    if (problem) return problem;
  }
  return null;
}

/** Why a call's keyword arguments do not fit the method's signature, or null when they do. */
export function signatureProblem(method: MethodSpec, args: Args): string | null {
  return argumentsProblem(args, method.params, '');
}

function describeParam(spec: ParamSpec, language: AceLanguage): Json {
  const out: Record<string, Json> = { type: spec.type, description: spec.description[language] };
  if (spec.enum) out.enum = spec.enum;
  if (spec.default !== undefined) out.default = spec.default;
  if (spec.items) out.items = describeParam(spec.items, language);
  if (spec.properties) {
    out.required = Object.entries(spec.properties).filter(([, p]) => p.required !== false).map(([k]) => k);
    out.properties = Object.fromEntries(Object.entries(spec.properties).map(([k, p]) => [k, describeParam(p, language)]));
  }
  return out;
}

/**
 * The method as ACEBench offers it to a model: the released text verbatim when the release has
 * one for this name and language, else built from the signature in the same shape.
 */
export function describeMethod(method: MethodSpec, language: AceLanguage): AceFunction {
  const released = RELEASED_FUNCTIONS[language][method.name];
  if (released) return structuredClone(released);
  const required = Object.entries(method.params).filter(([, p]) => p.required !== false).map(([k]) => k);
  const properties = Object.fromEntries(Object.entries(method.params).map(([k, p]) => [k, describeParam(p, language)]));
  return { name: method.name, description: method.description[language], parameters: { type: 'dict', required, properties } };
}

/** The classes ACEBench's own harness can load (the keys of its CLASS_FILE_PATH_MAPPING_EN / _ZH). */
export const RELEASED_CLASS_NAMES = ['BaseApi', 'MessageApi', 'ReminderApi', 'FoodPlatform', 'Travel'] as const;
/** The released classes and toolkiln's own addition, `Finance`. */
export const SANDBOX_CLASS_NAMES = [...RELEASED_CLASS_NAMES, 'Finance'] as const;
export type SandboxClassName = (typeof SANDBOX_CLASS_NAMES)[number];

/** A sandbox instance as the executor drives it. */
export abstract class Sandbox {
  abstract readonly className: SandboxClassName;
  /** The state attributes ACEBench saves for comparison (its SAVED_CLASS), in snapshot order. */
  abstract readonly savedAttributes: readonly string[];

  constructor(readonly language: AceLanguage) {}

  /** The public methods of this class in this language. */
  abstract methods(): readonly MethodSpec[];

  /**
   * ACEBench's `_load_scenario`: the released keys (wifi, logged_in, …) with their released
   * defaults. Subclasses extend it.
   */
  protected loadScenario(_config: Record<string, Json>, _where: string): void {}

  /** Attributes an initial_config may also set directly (beyond the released keys). */
  protected abstract loadableAttributes(): readonly string[];
  protected abstract releasedConfigKeys(): readonly string[];

  /**
   * Loads one initial_config entry over the current state: the released keys as ACEBench reads
   * them (absent ones fall back to the released defaults), and any state attribute given whole.
   * `where` names the entry in error messages.
   */
  load(config: Json, where: string): void {
    if (config === null || typeof config !== 'object' || Array.isArray(config)) throw new UserError(`${where}: must be a JSON object of settings for ${this.className}`);
    const released = this.releasedConfigKeys();
    const attributes = this.loadableAttributes();
    for (const key of Object.keys(config)) {
      if (!released.includes(key) && !attributes.includes(key)) {
        throw new UserError(`${where}: unknown key '${key}' for ${this.className} (known: ${[...released, ...attributes].join(', ')})`);
      }
    }
    this.loadScenario(config, where);
    for (const key of attributes) if (Object.hasOwn(config, key)) this.setAttribute(key, structuredClone(config[key]), `${where}.${key}`);
  }

  /** Sets a state attribute from JSON; an attribute held as a Map of ids takes `{"1": …}`. */
  protected setAttribute(key: string, value: Json, where: string): void {
    const self = this as unknown as Record<string, unknown>;
    const current = self[key];
    if (current instanceof Map) {
      self[key] = idMap(value, where);
      return;
    }
    const kind = (v: unknown) => (Array.isArray(v) ? 'list' : v === null ? 'null' : typeof v);
    if (kind(current) !== kind(value)) throw new UserError(`${where}: must be ${kind(current) === 'object' ? 'an object' : `a ${kind(current)}`}, got ${JSON.stringify(value)?.slice(0, 60)}`);
    self[key] = value;
  }

  /** A state attribute as JSON. */
  protected attribute(key: string): Json {
    const value = (this as unknown as Record<string, unknown>)[key];
    return value instanceof Map ? idObject(value as Map<number, Json>) : (value as Json);
  }

  /** The saved attributes as JSON, e.g. `{ inbox: { "1": {…} } }`. */
  snapshot(): Record<string, Json> {
    return Object.fromEntries(this.savedAttributes.map((key) => [key, structuredClone(this.attribute(key))]));
  }

  /** Runs a method whose arguments already passed signatureProblem. */
  invoke(name: string, args: Args): Json {
    const method = (this as unknown as Record<string, (args: Args) => Json>)[name];
    return method.call(this, args);
  }
}

/** Reads a boolean setting of an initial_config entry, or the default when absent. */
export function configBoolean(config: Record<string, Json>, key: string, fallback: boolean, where: string): boolean {
  if (!Object.hasOwn(config, key)) return fallback;
  const value = config[key];
  if (typeof value !== 'boolean') throw new UserError(`${where}.${key}: must be true or false, got ${JSON.stringify(value)}`);
  return value;
}

/** A JSON object whose keys are integer ids (`{"1": …}`) as a Map in key order. */
export function idMap<T>(value: Json, where: string): Map<number, T> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new UserError(`${where}: must be an object keyed by integer ids`);
  const map = new Map<number, T>();
  for (const [key, item] of Object.entries(value)) {
    if (!/^-?\d+$/.test(key)) throw new UserError(`${where}: key '${key}' is not an integer id`);
    map.set(Number(key), item as T);
  }
  return map;
}

/** A Map keyed by integer ids as JSON (`{"1": …}`), in the Map's order. */
export function idObject<T extends Json>(map: Map<number, T>): Json {
  const out: Record<string, Json> = {};
  for (const [key, value] of map) out[String(key)] = value;
  return out;
}

/** Shorthand for a parameter with the same text in both languages' signature (descriptions vary). */
export function param(type: ParamType, en: string, zh: string, extra: Partial<ParamSpec> = {}): ParamSpec {
  return { type, description: { en, zh }, ...extra };
}
