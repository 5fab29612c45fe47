import { basename } from 'node:path';
import { UserError } from '../../../core/errors.ts';
import type { RawTool, ReportLine } from './convert.ts';

/**
 * OpenAPI 3.0 / 3.1 documents: one tool per operation. Its parameters are the path item's and the
 * operation's parameters (path, query, header, cookie; the operation's win by name and place) and
 * the JSON request body's properties, merged into one object (a body property that a parameter
 * already names is prefixed `body_`; a body that is not an object becomes the parameter `body`).
 * Its results are the first 2xx response's JSON schema. GET, HEAD and OPTIONS read; the other
 * methods act. The name is the `operationId`, else `<method>_<path>`.
 */

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
const READING = new Set(['get', 'head', 'options']);

const isObject = (value: unknown): value is Record<string, unknown> => !!value && typeof value === 'object' && !Array.isArray(value);

export function isOpenApiDocument(doc: unknown): boolean {
  return isObject(doc) && (typeof doc.openapi === 'string' || typeof doc.swagger === 'string');
}

/** Follows a `$ref` to a component (parameters, request bodies, responses), one level at a time. */
function deref(doc: Record<string, unknown>, value: unknown, seen: string[] = []): unknown {
  if (!isObject(value) || typeof value.$ref !== 'string') return value;
  const ref = value.$ref;
  if (!ref.startsWith('#/') || seen.includes(ref)) return value;
  let node: unknown = doc;
  for (const part of ref.slice(2).split('/')) node = isObject(node) ? node[part.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined;
  return node === undefined ? value : deref(doc, node, [...seen, ref]);
}

/** The JSON media type's schema of a content map (`application/json`, `…+json`, else the first with a schema). */
function jsonSchemaOf(content: unknown): { schema: unknown; json: boolean } | undefined {
  if (!isObject(content)) return undefined;
  const entries = Object.entries(content).filter(([, media]) => isObject(media) && media.schema !== undefined);
  const json = entries.find(([type]) => /^application\/(.+\+)?json\b/i.test(type));
  if (json) return { schema: (json[1] as Record<string, unknown>).schema, json: true };
  return entries.length ? { schema: (entries[0][1] as Record<string, unknown>).schema, json: false } : undefined;
}

function operationName(method: string, path: string): string {
  return `${method}_${path.replace(/[{}]/g, '').replace(/[^a-zA-Z0-9]+/g, '_').replace(/^_+|_+$/g, '')}`;
}

/** The operations of an OpenAPI document as tools to convert; references into `components` resolve against the whole document. */
export function readOpenApiDocument(doc: unknown, shown: string, name?: string): (RawTool | ReportLine)[] {
  if (!isObject(doc)) throw new UserError(`${shown}: not an OpenAPI document`);
  if (typeof doc.swagger === 'string') throw new UserError(`${shown}: Swagger ${doc.swagger} is not read, only OpenAPI 3.0 and 3.1: convert it first (for example with swagger2openapi)`);
  if (!/^3\.[01]\./.test(String(doc.openapi))) throw new UserError(`${shown}: OpenAPI version ${JSON.stringify(doc.openapi)} is not read, only 3.0.x and 3.1.x`);
  if (!isObject(doc.paths)) throw new UserError(`${shown}: the document has no "paths" object, so no operation to make a tool of`);
  const info = isObject(doc.info) ? doc.info : {};
  const server = name ?? (typeof info.title === 'string' && info.title.trim() ? info.title.trim() : basename(shown).replace(/\.(json|ya?ml)$/i, ''));
  const entries: (RawTool | ReportLine)[] = [];
  for (const [path, rawItem] of Object.entries(doc.paths)) {
    const item = deref(doc, rawItem);
    if (!isObject(item)) {
      entries.push({ server, where: `${shown}: paths["${path}"]`, tool: path, outcome: 'refused', reason: 'not-an-operation', detail: `path item ${path} is not an object`, notes: [] });
      continue;
    }
    for (const method of METHODS) {
      const operation = item[method];
      if (operation === undefined) continue;
      const where = `${shown}: ${method.toUpperCase()} ${path}`;
      if (!isObject(operation)) {
        entries.push({ server, where, tool: `${method} ${path}`, outcome: 'refused', reason: 'not-an-operation', detail: `${method.toUpperCase()} ${path} is not an operation object`, notes: [] });
        continue;
      }
      entries.push(operationTool(doc, server, shown, path, method, item, operation, where));
    }
  }
  return entries;
}

function operationTool(doc: Record<string, unknown>, server: string, shown: string, path: string, method: string, item: Record<string, unknown>, operation: Record<string, unknown>, where: string): RawTool {
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  const places: Record<string, string> = {};
  const byKey = new Map<string, Record<string, unknown>>();
  for (const raw of [...(Array.isArray(item.parameters) ? item.parameters : []), ...(Array.isArray(operation.parameters) ? operation.parameters : [])]) {
    const parameter = deref(doc, raw);
    if (isObject(parameter) && typeof parameter.name === 'string') byKey.set(`${parameter.in}:${parameter.name}`, parameter);
  }
  for (const parameter of byKey.values()) {
    const place = String(parameter.in ?? 'query');
    let key = parameter.name as string;
    if (key in properties) key = `${place}_${key}`;
    const schema = isObject(parameter.schema) ? parameter.schema : (jsonSchemaOf(parameter.content)?.schema ?? {});
    properties[key] = { ...(isObject(schema) ? schema : {}), ...(typeof parameter.description === 'string' ? { description: parameter.description } : {}) };
    places[key] = place;
    if (parameter.required === true || place === 'path') required.push(key);
  }
  const body = deref(doc, operation.requestBody);
  let bodyPlace: string | undefined;
  if (isObject(body)) {
    const media = jsonSchemaOf(body.content);
    const schema = media ? deref(doc, media.schema) : undefined;
    const bodyRequired = body.required === true;
    if (isObject(schema) && (schema.type === 'object' || isObject(schema.properties)) && isObject(schema.properties) && !schema.allOf && !schema.anyOf && !schema.oneOf) {
      bodyPlace = 'properties';
      const bodyRequiredNames = Array.isArray(schema.required) ? schema.required : [];
      for (const [name, property] of Object.entries(schema.properties)) {
        const key = name in properties ? `body_${name}` : name;
        properties[key] = property;
        places[key] = 'body';
        if (bodyRequired && bodyRequiredNames.includes(name)) required.push(key);
      }
    } else if (media) {
      bodyPlace = 'body';
      properties.body = { ...(isObject(media.schema) ? media.schema : {}), ...(typeof body.description === 'string' ? { description: body.description } : {}) };
      places.body = 'body';
      if (bodyRequired) required.push('body');
    }
  }
  const responses = isObject(operation.responses) ? operation.responses : {};
  const success = Object.keys(responses)
    .filter((code) => /^2(\d\d|XX)$/i.test(code))
    .sort()[0];
  const response = success ? deref(doc, responses[success]) : undefined;
  const outputSchema = isObject(response) ? jsonSchemaOf(response.content)?.schema : undefined;
  const summary = typeof operation.summary === 'string' ? operation.summary.trim() : '';
  const description = typeof operation.description === 'string' ? operation.description.trim() : '';
  return {
    kind: 'openapi',
    server,
    where,
    file: basename(shown),
    originalName: typeof operation.operationId === 'string' && operation.operationId.trim() ? operation.operationId : operationName(method, path),
    description: [summary, description].filter((text, i, all) => text && all.indexOf(text) === i).join('. ').replace(/\.\./g, '.'),
    inputSchema: { type: 'object', properties, required },
    outputSchema,
    root: doc,
    original: { path, method, parameters: item.parameters ?? null, operation },
    isAction: !READING.has(method),
    domain: server,
    extra: { method: method.toUpperCase(), path, parameterPlaces: places, ...(bodyPlace ? { body: bodyPlace } : {}), ...(success ? { response: success } : {}) },
  };
}
