import AjvModule, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { stableStringify } from './hash.ts';

/**
 * Function definitions in the JSON-Schema dialect tool benchmarks use (`{name, description,
 * parameters: {type: "object", properties, required}}`), checked two ways: is the definition itself
 * a valid, usable schema, and do a call's arguments satisfy it. Both answer with problems that name
 * the path inside the definition or the arguments, so a message can say exactly what is wrong.
 */

// ajv ships CommonJS with a default export; under ESM the class sits on `.default`.
const Ajv = ((AjvModule as unknown as { default?: typeof AjvModule }).default ?? AjvModule) as unknown as typeof AjvModule.default;
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as typeof addFormatsModule.default;

export interface SchemaProblem {
  /** Where: `parameters.properties.dateRange.required[1]`, or `dateRange.startDate` for an argument. */
  path: string;
  message: string;
}

/** Renders problems as one line: `path: message; path: message`. */
export function describeProblems(problems: SchemaProblem[]): string {
  return problems.map((p) => (p.path ? `${p.path}: ${p.message}` : p.message)).join('; ');
}

/**
 * Type names outside JSON Schema that released benchmark files use (`dict` in ACEBench's agent
 * functions, Python's `list`, `float`, …), mapped to the JSON-Schema type they mean.
 */
export const TYPE_ALIASES: Record<string, string> = {
  dict: 'object',
  list: 'array',
  tuple: 'array',
  float: 'number',
  int: 'integer',
  bool: 'boolean',
  str: 'string',
  any: '',
};
const JSON_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'object', 'array', 'null']);

/** The JSON-Schema type a declared type means (aliases resolved), or undefined when it has none. */
export function jsonTypeOf(declared: unknown): string | undefined {
  if (typeof declared !== 'string') return undefined;
  const type = TYPE_ALIASES[declared] ?? declared;
  return type || undefined;
}

/** A copy of `schema` with aliased type names replaced, so a standard validator reads it. */
export function normaliseSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(normaliseSchema);
  if (!schema || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'type' && typeof value === 'string') {
      const type = jsonTypeOf(value);
      if (type) out.type = type;
    } else if (key === 'properties' && value && typeof value === 'object' && !Array.isArray(value)) {
      out.properties = Object.fromEntries(Object.entries(value).map(([name, property]) => [name, normaliseSchema(property)]));
    } else if (key === 'items' || key === 'additionalProperties') {
      out[key] = normaliseSchema(value);
    } else if (key === 'format' && typeof value === 'string' && !KNOWN_FORMATS.has(value)) {
      // A format nobody defined (`HH:mm`, `percentage`) is documentation, not a rule.
      continue;
    } else {
      out[key] = value;
    }
  }
  return out;
}

// ------------------------------------------------------------------ definitions

/**
 * Problems of one function definition: a name, a description, `parameters` an object schema whose
 * `required` names only its properties (at every depth), every property typed and described at the
 * top level, enums non-empty and of the declared type, ranges ordered, patterns that compile,
 * defaults valid against their own property, arrays with `items`. Empty when the definition is usable.
 */
export function checkFunctionDefinition(fn: unknown): SchemaProblem[] {
  const problems: SchemaProblem[] = [];
  if (!fn || typeof fn !== 'object' || Array.isArray(fn)) return [{ path: '', message: 'a function definition must be a JSON object' }];
  const def = fn as Record<string, unknown>;
  if (typeof def.name !== 'string' || !/^[A-Za-z_][A-Za-z0-9_.-]*$/.test(def.name)) {
    problems.push({ path: 'name', message: `must be an identifier (letters, digits, _ . -), got ${JSON.stringify(def.name)}` });
  }
  if (typeof def.description !== 'string' || !def.description.trim()) problems.push({ path: 'description', message: 'is missing or empty' });
  const parameters = def.parameters;
  if (!parameters || typeof parameters !== 'object' || Array.isArray(parameters)) {
    problems.push({ path: 'parameters', message: 'must be an object schema {type: "object", properties, required}' });
    return problems;
  }
  const params = parameters as Record<string, unknown>;
  if (jsonTypeOf(params.type) !== 'object') problems.push({ path: 'parameters.type', message: `must be "object", got ${JSON.stringify(params.type)}` });
  checkProperty(params, 'parameters', problems, true);
  if (problems.length === 0) {
    const meta = metaSchemaValidator();
    if (!meta.validateSchema(normaliseSchema(params) as object)) {
      for (const error of meta.errors ?? []) problems.push({ path: `parameters${pointerToPath(error.instancePath)}`, message: error.message ?? 'is not valid JSON Schema' });
    }
  }
  return problems;
}

function checkProperty(schema: Record<string, unknown>, path: string, problems: SchemaProblem[], topLevel: boolean): void {
  const type = jsonTypeOf(schema.type);
  if (schema.type !== undefined && (typeof schema.type !== 'string' || (type && !JSON_TYPES.has(type)))) {
    problems.push({ path: `${path}.type`, message: `unknown type ${JSON.stringify(schema.type)}: use one of ${[...JSON_TYPES].join(', ')}` });
    return;
  }
  if (type === 'object' || schema.properties !== undefined) {
    const properties = schema.properties ?? {};
    if (typeof properties !== 'object' || Array.isArray(properties)) {
      problems.push({ path: `${path}.properties`, message: 'must be an object of named property schemas' });
      return;
    }
    const names = new Set(Object.keys(properties as object));
    const required = schema.required ?? [];
    if (!Array.isArray(required)) problems.push({ path: `${path}.required`, message: 'must be a list of property names' });
    else {
      required.forEach((name, i) => {
        if (typeof name !== 'string' || !names.has(name)) problems.push({ path: `${path}.required[${i}]`, message: `"${String(name)}" is not among the properties (${[...names].join(', ') || 'none'})` });
      });
      if (new Set(required).size !== required.length) problems.push({ path: `${path}.required`, message: 'names a property twice' });
    }
    for (const [name, property] of Object.entries(properties as Record<string, unknown>)) {
      const at = `${path}.properties.${name}`;
      if (!property || typeof property !== 'object' || Array.isArray(property)) {
        problems.push({ path: at, message: 'must be a property schema object' });
        continue;
      }
      const prop = property as Record<string, unknown>;
      if (topLevel && prop.type === undefined && prop.enum === undefined && prop.anyOf === undefined && prop.oneOf === undefined) {
        problems.push({ path: `${at}.type`, message: 'is missing: say what kind of value the parameter takes' });
      }
      if (topLevel && (typeof prop.description !== 'string' || !prop.description.trim())) problems.push({ path: `${at}.description`, message: 'is missing or empty' });
      checkProperty(prop, at, problems, false);
    }
  }
  if (type === 'array') {
    if (schema.items === undefined) problems.push({ path: `${path}.items`, message: 'is missing: say what the list holds' });
    else if (schema.items && typeof schema.items === 'object' && !Array.isArray(schema.items)) checkProperty(schema.items as Record<string, unknown>, `${path}.items`, problems, false);
  }
  if (schema.enum !== undefined) {
    if (!Array.isArray(schema.enum) || schema.enum.length === 0) problems.push({ path: `${path}.enum`, message: 'must be a non-empty list' });
    else if (type) {
      schema.enum.forEach((value, i) => {
        if (!hasType(value, type)) problems.push({ path: `${path}.enum[${i}]`, message: `${JSON.stringify(value)} is not of type ${type}` });
      });
    }
  }
  for (const [low, high] of [
    ['minimum', 'maximum'],
    ['minLength', 'maxLength'],
    ['minItems', 'maxItems'],
  ] as const) {
    const a = schema[low];
    const b = schema[high];
    if (typeof a === 'number' && typeof b === 'number' && a > b) problems.push({ path: `${path}.${low}`, message: `${a} is above ${high} ${b}` });
  }
  if (schema.pattern !== undefined) {
    try {
      new RegExp(String(schema.pattern));
    } catch (error) {
      problems.push({ path: `${path}.pattern`, message: `does not compile: ${(error as Error).message}` });
    }
  }
  if (schema.default !== undefined && type && !hasType(schema.default, type)) {
    problems.push({ path: `${path}.default`, message: `${JSON.stringify(schema.default)} is not of type ${type}` });
  }
}

/** Whether a value has a JSON-Schema type (aliases such as `dict`, `list` resolved by `jsonTypeOf` first). */
export function hasType(value: unknown, type: string): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'object':
      return !!value && typeof value === 'object' && !Array.isArray(value);
    case 'array':
      return Array.isArray(value);
    case 'null':
      return value === null;
    default:
      return true;
  }
}

// ------------------------------------------------------------------ arguments

/**
 * Validates a call's arguments against a function's `parameters`: required present, no unknown
 * names (at any depth of declared objects), types, enums, ranges, patterns and standard formats.
 * Problems name the argument path (`dateRange.startDate`, `items[2].quantity`).
 */
export class ArgumentValidator {
  // Patterns compile without the u flag, as released schemas are written (`\-` inside a class). A schema is
  // compiled once and cached; compiling is most of the cost of a one-off check (see docs/benchmarks.md, ACEBench),
  // so the generated code is not optimised and the schema is not checked again here (checkFunctionDefinition does).
  private readonly ajv = new Ajv({ allErrors: true, strict: false, logger: false, validateFormats: true, unicodeRegExp: false, validateSchema: false, code: { optimize: false } });
  private readonly compiled = new Map<string, { check: ValidateFunction; schema: object }>();

  /** `maxCompiled`: how many compiled schemas are kept (the oldest go first), for a pass over a dataset of many tools; default: all. */
  constructor(private readonly options: { maxCompiled?: number } = {}) {
    addFormats(this.ajv, ['date', 'email', 'uri', 'ipv4', 'ipv6', 'hostname', 'uuid', 'duration']);
    // Benchmarks write date-times and times without seconds or zone ("2023-08-01 10:00", "18:00").
    this.ajv.addFormat('date-time', /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/i);
    this.ajv.addFormat('time', /^\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/i);
  }

  validate(parameters: unknown, args: unknown): SchemaProblem[] {
    return this.checker(parameters)(args);
  }

  /** The check of calls against `parameters` (compiled once per schema), to keep for many calls of one tool. */
  checker(parameters: unknown): (args: unknown) => SchemaProblem[] {
    const schema = closeObjects(normaliseSchema(parameters));
    const key = stableStringify(schema);
    let check = this.compiled.get(key)?.check;
    if (!check) {
      try {
        check = this.ajv.compile(schema as object);
      } catch (error) {
        const unusable = [{ path: '', message: `the function's parameters are not a usable schema: ${(error as Error).message}` }];
        return () => unusable;
      }
      this.compiled.set(key, { check, schema: schema as object });
      if (this.options.maxCompiled !== undefined && this.compiled.size > this.options.maxCompiled) {
        const [oldest, { schema: dropped }] = this.compiled.entries().next().value!;
        this.compiled.delete(oldest);
        this.ajv.removeSchema(dropped);
      }
    }
    const compiled = check;
    return (args) => (compiled(args) ? [] : (compiled.errors ?? []).map(argumentProblem));
  }
}

/** Declared objects accept only their declared properties (a call with an invented argument is wrong). */
function closeObjects(schema: unknown): unknown {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return schema;
  const s = { ...(schema as Record<string, unknown>) };
  if (s.properties && typeof s.properties === 'object' && !Array.isArray(s.properties)) {
    s.properties = Object.fromEntries(Object.entries(s.properties).map(([k, v]) => [k, closeObjects(v)]));
    if (s.additionalProperties === undefined && Object.keys(s.properties as object).length > 0) s.additionalProperties = false;
  }
  if (s.items) s.items = closeObjects(s.items);
  return s;
}

function argumentProblem(error: ErrorObject): SchemaProblem {
  const at = pointerToPath(error.instancePath).replace(/^\./, '');
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return { path: at, message: `required argument "${String(params.missingProperty)}" is missing` };
    case 'additionalProperties':
      return { path: at, message: `"${String(params.additionalProperty)}" is not a parameter of this function` };
    case 'enum':
      return { path: at, message: `must be one of ${JSON.stringify(params.allowedValues)}` };
    default:
      return { path: at, message: error.message ?? 'is invalid' };
  }
}

/** `/dateRange/items/0` → `.dateRange.items[0]` */
function pointerToPath(pointer: string): string {
  if (!pointer) return '';
  return pointer
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((part) => (/^\d+$/.test(part) ? `[${part}]` : `.${part}`))
    .join('');
}

const KNOWN_FORMATS = new Set(['date', 'date-time', 'time', 'email', 'uri', 'ipv4', 'ipv6', 'hostname', 'uuid', 'duration']);

let metaValidator: InstanceType<typeof Ajv> | undefined;
function metaSchemaValidator(): InstanceType<typeof Ajv> {
  metaValidator ??= new Ajv({ strict: false, logger: false, validateFormats: false });
  return metaValidator;
}

/**
 * Why a schema is not usable JSON Schema (it fails the meta-schema, or a validator cannot compile
 * it: an unknown format aside), or null when it is. For schemas from outside, such as imported tools.
 */
export function checkJsonSchema(schema: unknown): string | null {
  const meta = metaSchemaValidator();
  if (!meta.validateSchema(schema as object)) return (meta.errors ?? []).map((e) => `${pointerToPath(e.instancePath) || '(root)'} ${e.message ?? 'is invalid'}`).join('; ');
  try {
    compileValidator ??= new Ajv({ strict: false, logger: false, validateFormats: false, unicodeRegExp: false, validateSchema: false, code: { optimize: false } });
    compileValidator.compile(normaliseSchema(schema) as object);
    compileValidator.removeSchema();
  } catch (error) {
    return (error as Error).message;
  }
  return null;
}

let compileValidator: InstanceType<typeof Ajv> | undefined;
