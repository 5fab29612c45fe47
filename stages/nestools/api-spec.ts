import { z } from 'zod';
import { ToolSpec, type PropertySchema } from '../../core/records.ts';
import { isLosslessPythonType, jsonTypeOfPython, pythonTypeOfJson } from '../../prompts/nestools-python-types.ts';

/**
 * The tool format NesTools (`api` entries) and Seal-Tools (`tool.jsonl`) share:
 * `{api_name, api_description, parameters{name:{type, description}}, required[], responses{}}`,
 * Python type names, and ↔ canonical ToolSpecs (JSON-Schema types). Conversion is lossless: a type
 * name that JSON Schema would not give back travels as `x-python-type`.
 */

export const ApiField = z.object({ type: z.string(), description: z.string().optional() }).passthrough();
export type ApiField = z.infer<typeof ApiField>;

export const ApiSpec = z
  .object({
    api_name: z.string().min(1),
    api_description: z.string(),
    parameters: z.record(z.string(), ApiField),
    required: z.array(z.string()),
    responses: z.record(z.string(), ApiField),
  })
  .passthrough();
export type ApiSpec = z.infer<typeof ApiSpec>;

const PYTHON_TYPE_KEY = 'x-python-type';

function propertyOfField(field: ApiField): PropertySchema {
  const { type, ...rest } = field;
  const property: PropertySchema = { type: jsonTypeOfPython(type), ...rest };
  if (!isLosslessPythonType(type)) property[PYTHON_TYPE_KEY] = type;
  return property;
}

function fieldOfProperty(property: PropertySchema): ApiField {
  const { type, description, [PYTHON_TYPE_KEY]: pythonType, ...rest } = property as PropertySchema & { [PYTHON_TYPE_KEY]?: string };
  const jsonType = Array.isArray(type) ? (type.find((t) => t !== 'null') ?? 'any') : (type ?? 'any');
  const field: ApiField = { type: typeof pythonType === 'string' ? pythonType : pythonTypeOfJson(jsonType) };
  if (description !== undefined) field.description = description;
  return Object.assign(field, rest);
}

function mapValues<A, B>(record: Record<string, A>, fn: (value: A) => B): Record<string, B> {
  return Object.fromEntries(Object.entries(record).map(([key, value]) => [key, fn(value)]));
}

const API_KEYS = new Set(['api_name', 'api_description', 'parameters', 'required', 'responses', 'field']);

/**
 * NesTools / Seal-Tools api entry → ToolSpec. `field` (the Seal-Tools domain) becomes `domain`;
 * other keys of the entry (one Seal-Tools tool has an `example`) travel in `provenance.apiExtra`.
 */
export function toolSpecOfApi(api: ApiSpec, provenance?: ToolSpec['provenance'], domain?: string): ToolSpec {
  return ToolSpec.parse(toolSpecDraft(api, provenance, domain));
}

/** The same, unvalidated: for importers that validate the whole Sample once. */
export function toolSpecDraft(api: ApiSpec, provenance?: ToolSpec['provenance'], domain?: string): ToolSpec {
  const field = typeof api.field === 'string' ? api.field : undefined;
  const extra = Object.fromEntries(Object.entries(api).filter(([key]) => !API_KEYS.has(key)));
  if (Object.keys(extra).length) provenance = { source: 'api', ...provenance, apiExtra: extra };
  return {
    name: api.api_name,
    description: api.api_description,
    parameters: { type: 'object', properties: mapValues(api.parameters, propertyOfField), required: api.required },
    returns: { type: 'object', properties: mapValues(api.responses, propertyOfField), required: [] },
    ...(domain ?? field ? { domain: domain ?? field } : {}),
    ...(provenance ? { provenance } : {}),
  };
}

/** ToolSpec → the NesTools api entry (keys in the order the released files use). */
export function apiOfToolSpec(tool: ToolSpec): ApiSpec {
  return {
    api_name: tool.name,
    api_description: tool.description,
    parameters: mapValues(tool.parameters.properties, fieldOfProperty),
    required: [...tool.parameters.required],
    responses: mapValues(tool.returns.properties, fieldOfProperty),
    ...((tool.provenance?.apiExtra as Record<string, unknown> | undefined) ?? {}),
  };
}
