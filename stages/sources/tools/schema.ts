import { checkJsonSchema } from '../../../core/json-schema.ts';

/**
 * A tool's JSON Schema made into what the recipes read and OpenAI's function schema accepts:
 * references inlined (a cycle refused, naming the reference), `allOf` of objects merged,
 * `anyOf`/`oneOf` kept (ajv, the recipes' validator, checks them) with a `type` beside them when
 * the branches agree on one, the optional-value pattern `anyOf [X, null]` read as X, OpenAPI 3.0's
 * `nullable` as a type list, `required` names without a property dropped. Every change is named in
 * `changes` (the import report counts them); what cannot be made usable throws a
 * {@link SchemaRefused} with the reason.
 */

type Schema = Record<string, unknown>;

export class SchemaRefused extends Error {
  constructor(
    readonly reason: string,
    detail: string,
  ) {
    super(detail);
    this.name = 'SchemaRefused';
  }
}

export interface SchemaContext {
  /** The document local references (`#/…`) point into: the tool's own schema (MCP), the OpenAPI document. */
  root: unknown;
  /** Names of the changes made, counted by the report. */
  changes: Set<string>;
}

const isObject = (value: unknown): value is Schema => !!value && typeof value === 'object' && !Array.isArray(value);

/** Reads `#/a/b~1c` in `root`. */
function pointer(root: unknown, ref: string): unknown {
  if (ref === '#') return root;
  let node: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    const part = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (!isObject(node) && !Array.isArray(node)) return undefined;
    node = (node as Record<string, unknown>)[part];
  }
  return node;
}

/** Keywords that only carry definitions for references: gone once the references are inlined. */
const DEFINITION_KEYS = ['$defs', 'definitions'];
/** Keywords the converted schema does not keep (identifiers and dialect of a standalone document). */
const DROPPED_KEYS = ['$schema', '$id', '$comment'];

/**
 * The schema with every local reference inlined. `stack` is the references being expanded (a
 * reference met again inside itself is a cycle).
 */
export function resolveRefs(schema: unknown, ctx: SchemaContext, stack: string[] = []): unknown {
  if (Array.isArray(schema)) return schema.map((item) => resolveRefs(item, ctx, stack));
  if (!isObject(schema)) return schema;
  if (typeof schema.$ref === 'string') {
    const ref = schema.$ref;
    if (!ref.startsWith('#')) throw new SchemaRefused('external-ref', `reference ${ref} points outside the document (only local "#/…" references are resolved)`);
    if (stack.includes(ref)) throw new SchemaRefused('recursive-ref', `reference ${ref} refers to itself (${[...stack.slice(stack.indexOf(ref)), ref].join(' → ')}): a recursive schema has no finite inline form`);
    const target = pointer(ctx.root, ref);
    if (target === undefined) throw new SchemaRefused('dangling-ref', `reference ${ref} points at nothing in the document`);
    ctx.changes.add('ref-inlined');
    const { $ref: _, ...siblings } = schema;
    const resolved = resolveRefs(target, ctx, [...stack, ref]);
    // Keywords beside a reference (a description) refine what it points at.
    return isObject(resolved) ? { ...resolved, ...(resolveRefs(siblings, ctx, stack) as Schema) } : resolved;
  }
  const out: Schema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (DEFINITION_KEYS.includes(key)) continue;
    // Property names and enum/const/default/example values are data, not schemas: copy them as they are.
    if (key === 'enum' || key === 'const' || key === 'default' || key === 'examples' || key === 'example') out[key] = value;
    else if (key === 'properties' && isObject(value)) out[key] = Object.fromEntries(Object.entries(value).map(([name, property]) => [name, resolveRefs(property, ctx, stack)]));
    else out[key] = resolveRefs(value, ctx, stack);
  }
  return out;
}

/** The JSON type a schema says it has, when it says exactly one (not counting `null`). */
function singleType(schema: Schema): string | undefined {
  const types = (Array.isArray(schema.type) ? schema.type : [schema.type]).filter((t): t is string => typeof t === 'string' && t !== 'null');
  if (types.length === 1) return types[0];
  if (schema.type === undefined && (isObject(schema.properties) || schema.additionalProperties !== undefined)) return 'object';
  if (schema.type === undefined && schema.items !== undefined) return 'array';
  if (schema.type === undefined && schema.const !== undefined) return jsonTypeOfValue(schema.const);
  if (schema.type === undefined && Array.isArray(schema.enum) && schema.enum.length) {
    const kinds = new Set(schema.enum.map(jsonTypeOfValue));
    if (kinds.size === 1) return [...kinds][0];
  }
  return undefined;
}

function jsonTypeOfValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

const isNullSchema = (schema: unknown) => isObject(schema) && (schema.type === 'null' || (schema.const === null && Object.keys(schema).length === 1) || (Array.isArray(schema.enum) && schema.enum.length === 1 && schema.enum[0] === null));

/** Merges `allOf` branches that are all objects (or plain annotations) into one object schema. */
function mergeAllOf(schema: Schema, branches: unknown[]): Schema {
  const { allOf: _, ...rest } = schema;
  if (branches.length === 1 && isObject(branches[0])) return { ...branches[0], ...rest };
  const merged: Schema = { type: 'object', properties: {}, required: [] as string[] };
  for (const [i, branch] of [...branches, rest].entries()) {
    if (!isObject(branch)) throw new SchemaRefused('allOf-unmergeable', `allOf branch ${i} is not a schema object`);
    const type = singleType(branch);
    if (type !== undefined && type !== 'object') throw new SchemaRefused('allOf-unmergeable', `allOf joins a ${type} schema with others: only objects are merged`);
    for (const [key, value] of Object.entries(branch)) {
      if (key === 'properties' && isObject(value)) {
        const properties = merged.properties as Schema;
        for (const [name, property] of Object.entries(value)) {
          if (name in properties && JSON.stringify(properties[name]) !== JSON.stringify(property)) throw new SchemaRefused('allOf-unmergeable', `allOf branches give property "${name}" two different schemas`);
          properties[name] = property;
        }
      } else if (key === 'required' && Array.isArray(value)) (merged.required as string[]).push(...value.filter((name): name is string => typeof name === 'string' && !(merged.required as string[]).includes(name)));
      else if (key !== 'type') merged[key] = value;
    }
  }
  return merged;
}

/**
 * Simplifies one resolved schema node and its children. `at` names the node in messages
 * (`properties.filter.anyOf[1]`).
 */
export function simplifySchema(schema: unknown, ctx: SchemaContext, at = ''): unknown {
  if (schema === true) {
    ctx.changes.add('boolean-schema-true');
    return {};
  }
  if (schema === false) throw new SchemaRefused('false-schema', `${at || 'the schema'} is false: no value can satisfy it`);
  if (!isObject(schema)) throw new SchemaRefused('not-a-schema', `${at || 'the schema'} is ${JSON.stringify(schema)}, not a schema object`);
  let node: Schema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (DROPPED_KEYS.includes(key)) {
      // A sub-schema's dialect and ids mean nothing once it is inlined into a function's parameters.
      ctx.changes.add('schema-id-keywords-dropped');
      continue;
    }
    node[key] = value;
  }
  if (Array.isArray(node.allOf)) {
    node = mergeAllOf(node, node.allOf.map((branch, i) => simplifySchema(branch, ctx, `${at}.allOf[${i}]`)));
    ctx.changes.add('allOf-merged');
  }
  for (const combinator of ['anyOf', 'oneOf'] as const) {
    const branches = node[combinator];
    if (!Array.isArray(branches)) continue;
    const simplified = branches.map((branch, i) => simplifySchema(branch, ctx, `${at}.${combinator}[${i}]`));
    const nonNull = simplified.filter((branch) => !isNullSchema(branch));
    if (nonNull.length === 1 && simplified.length === 2) {
      // Optional<X> as pydantic and zod write it: the value is X or absent.
      const { [combinator]: _, ...rest } = node;
      node = { ...(nonNull[0] as Schema), ...rest };
      ctx.changes.add(`${combinator}-optional-null-read-as-type`);
      continue;
    }
    if (simplified.every((branch) => isObject(branch) && branch.const !== undefined && Object.keys(branch).every((k) => k === 'const' || k === 'description' || k === 'title'))) {
      const { [combinator]: _, ...rest } = node;
      node = { ...rest, enum: simplified.map((branch) => (branch as Schema).const) };
      const type = node.type === undefined ? singleType(node) : undefined;
      if (type) node.type = type;
      ctx.changes.add(`${combinator}-of-constants-read-as-enum`);
      continue;
    }
    node[combinator] = simplified;
    // A type beside the combinator when every branch has the same one, for the recipes that read `type`.
    const types = new Set(nonNull.map((branch) => singleType(branch as Schema)));
    const only = [...types][0];
    if (node.type === undefined && types.size === 1 && only) node.type = only;
    ctx.changes.add(`${combinator}-kept`);
  }
  if (Array.isArray(node.enum)) {
    const seen = new Set<string>();
    const distinct = node.enum.filter((value) => !seen.has(JSON.stringify(value)) && !!seen.add(JSON.stringify(value)));
    if (distinct.length !== node.enum.length) {
      node.enum = distinct;
      ctx.changes.add('enum-duplicates-dropped');
    }
  }
  if (node.nullable === true) {
    // OpenAPI 3.0's nullable: JSON Schema says it with a type list.
    const type = node.type;
    delete node.nullable;
    if (typeof type === 'string') node.type = [type, 'null'];
    ctx.changes.add('nullable-as-type-list');
  } else if (node.nullable === false) delete node.nullable;
  if (node.type === undefined && isObject(node.properties)) {
    node.type = 'object';
    ctx.changes.add('object-type-added');
  }
  if (isObject(node.properties)) {
    node.properties = Object.fromEntries(Object.entries(node.properties).map(([name, property]) => [name, simplifySchema(property, ctx, `${at}.properties.${name}`)]));
  }
  if (Array.isArray(node.required)) {
    const names = new Set(Object.keys(isObject(node.properties) ? node.properties : {}));
    const kept = [...new Set(node.required.filter((name): name is string => typeof name === 'string' && names.has(name)))];
    if (kept.length !== node.required.length) ctx.changes.add('required-without-property-dropped');
    node.required = kept;
  }
  if (node.items !== undefined && !Array.isArray(node.items)) node.items = simplifySchema(node.items, ctx, `${at}.items`);
  if (isObject(node.additionalProperties)) node.additionalProperties = simplifySchema(node.additionalProperties, ctx, `${at}.additionalProperties`);
  if (isObject(node.not)) node.not = simplifySchema(node.not, ctx, `${at}.not`);
  return node;
}

/** An object schema as `parameters` / `returns`: `{type: "object", properties, required}` plus the keywords it had. */
export interface ObjectLike {
  type: 'object';
  properties: Record<string, Record<string, unknown>>;
  required: string[];
  [key: string]: unknown;
}

/**
 * The converted top-level schema of parameters or results. `{}` or absent is an empty object; a
 * top-level schema that is not an object is refused (`parameters`), or wrapped as the field
 * `result` (`returns`, where a response may be a list or a text).
 */
export function convertObjectSchema(schema: unknown, ctx: SchemaContext, role: 'parameters' | 'returns'): ObjectLike {
  if (schema === undefined || schema === null) return { type: 'object', properties: {}, required: [] };
  const resolved = resolveRefs(schema, ctx);
  let node = simplifySchema(resolved, ctx, role) as Schema;
  const type = singleType(node);
  if (type !== 'object' || node.anyOf || node.oneOf) {
    if (role === 'parameters') {
      if (type === undefined && !node.anyOf && !node.oneOf && !node.properties && Object.keys(node).every((k) => k === 'description' || k === 'title' || k === 'type')) {
        ctx.changes.add('empty-parameters-schema');
        node = { type: 'object', properties: {} };
      } else throw new SchemaRefused('parameters-not-object', `the parameters schema is ${node.anyOf || node.oneOf ? 'a choice of schemas' : `of type ${JSON.stringify(node.type ?? 'any')}`}: a function's parameters must be one object`);
    } else {
      ctx.changes.add('returns-wrapped-as-result');
      node = { type: 'object', properties: { result: node }, required: [] };
    }
  }
  const properties = isObject(node.properties) ? (node.properties as Record<string, Record<string, unknown>>) : {};
  const out: ObjectLike = { ...node, type: 'object', properties, required: Array.isArray(node.required) ? (node.required as string[]) : [] };
  const problem = checkJsonSchema(out);
  if (problem) throw new SchemaRefused('invalid-json-schema', `the ${role} schema is not valid JSON Schema: ${problem}`);
  return out;
}
