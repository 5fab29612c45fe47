import { z } from 'zod';
import { hashOf } from './hash.ts';
import { sharedByRecords } from './validate.ts';

/**
 * Canonical records: one internal shape for every benchmark. Importers and exporters translate
 * at the edges; every record that crosses a stage boundary is validated by these schemas.
 */

// ---------------------------------------------------------------- JSON values

export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

/** Whether a value is a JSON object: not null, not an array. */
export function isJsonObject(value: unknown): value is Record<string, Json> {
  return !!value && typeof value === 'object' && !Array.isArray(value);
}
export const JsonValue: z.ZodType<Json> = z.lazy(() =>
  z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(JsonValue), z.record(z.string(), JsonValue)]),
);

// ---------------------------------------------------------------- tools

/** One property of a JSON-Schema object: type, description, enum, format/pattern, default, … */
export const PropertySchema = z
  .object({
    type: z.union([z.string(), z.array(z.string())]).optional(),
    description: z.string().optional(),
    enum: z.array(JsonValue).optional(),
    format: z.string().optional(),
    pattern: z.string().optional(),
    default: JsonValue.optional(),
    items: z.record(z.string(), z.unknown()).optional(),
  })
  .passthrough();
export type PropertySchema = z.infer<typeof PropertySchema>;

export const ObjectSchema = z
  .object({
    type: z.literal('object').default('object'),
    properties: z.record(z.string(), PropertySchema).default({}),
    required: z.array(z.string()).default([]),
  })
  .passthrough()
  .superRefine((schema, ctx) => {
    for (const name of schema.required) {
      if (!(name in schema.properties)) {
        ctx.addIssue({ code: 'custom', path: ['required'], message: `required parameter "${name}" is not among the properties` });
      }
    }
  });
export type ObjectSchema = z.infer<typeof ObjectSchema>;

export const Provenance = z
  .object({
    source: z.string(),
    id: z.string().optional(),
    file: z.string().optional(),
  })
  .passthrough();
export type Provenance = z.infer<typeof Provenance>;

// Samples offer the tools of one library: each tool object is checked once (core/validate.ts).
export const ToolSpec = sharedByRecords(z.object({
  name: z.string().min(1, 'a tool needs a name'),
  description: z.string().default(''),
  parameters: ObjectSchema.default({ type: 'object', properties: {}, required: [] }),
  returns: ObjectSchema.default({ type: 'object', properties: {}, required: [] }),
  domain: z.string().optional(),
  plugin: z.string().optional(),
  isAction: z.boolean().optional(),
  provenance: Provenance.optional(),
}));
export type ToolSpec = z.infer<typeof ToolSpec>;

// ---------------------------------------------------------------- calls

/** A reference to an earlier call's result: `{ "$ref": "<callId>.<returnField>" }`. */
const REF_PATTERN = /^[^.\s]+\.[^\s]+$/;
export const Ref = z.object({ $ref: z.string().regex(REF_PATTERN, 'a $ref reads "<callId>.<returnField>"') }).strict();
export type Ref = z.infer<typeof Ref>;

export type ArgValue = Json | Ref | ArgValue[];
/** A literal JSON value, a reference, or a list that holds references among literals. */
export const ArgValue: z.ZodType<ArgValue> = z.lazy(() =>
  z.union([Ref, z.array(ArgValue), JsonValue]).superRefine((value, ctx) => {
    // An object that tries to be a reference but is malformed must not pass as a literal.
    const bad = malformedRef(value);
    if (bad) ctx.addIssue({ code: 'custom', message: `malformed reference ${JSON.stringify(bad)}: write {"$ref": "<callId>.<returnField>"}` });
  }),
);

function malformedRef(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(malformedRef).find((v) => v !== undefined);
  if (value && typeof value === 'object') {
    if ('$ref' in value) return isRef(value) ? undefined : value;
    return Object.values(value).map(malformedRef).find((v) => v !== undefined);
  }
  return undefined;
}

export function isRef(value: unknown): value is Ref {
  return (
    !!value && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 1 && typeof (value as Ref).$ref === 'string' && REF_PATTERN.test((value as Ref).$ref)
  );
}

/** Splits `"call_1.temperature"` into its call id and field. */
export function parseRef(ref: Ref): { callId: string; field: string } {
  const dot = ref.$ref.indexOf('.');
  return { callId: ref.$ref.slice(0, dot), field: ref.$ref.slice(dot + 1) };
}

export const Call = z.object({
  id: z.string().min(1),
  tool: z.string().min(1),
  arguments: z.record(z.string(), ArgValue).default({}),
});
export type Call = z.infer<typeof Call>;

// ---------------------------------------------------------------- dialogue

export const Turn = z.object({
  role: z.enum(['user', 'assistant']),
  content: z.string(),
  thought: z.string().optional(),
  calls: z.array(Call).optional(),
  /** Results per call id. */
  observations: z.record(z.string(), JsonValue).optional(),
  response: z.string().optional(),
});
export type Turn = z.infer<typeof Turn>;

export const Check = z.object({
  name: z.string(),
  pass: z.boolean(),
  reason: z.string().optional(),
  /** Soft checks flag a record for review; hard ones reject it. */
  soft: z.boolean().optional(),
});
export type Check = z.infer<typeof Check>;

/** One step of a record's history: the stage at its version and, for an LLM answer, the prompt and the model. */
export const LineageEntry = z.object({ stage: z.string(), version: z.number().int(), prompt: z.string().optional(), promptHash: z.string().optional(), model: z.string().optional() });
export type LineageEntry = z.infer<typeof LineageEntry>;

export const SampleMeta = z
  .object({
    source: z.object({ dataset: z.string(), id: z.string().optional(), file: z.string().optional() }).passthrough().optional(),
    lineage: z.array(LineageEntry).default([]),
    checks: z.array(Check).default([]),
    tags: z.array(z.string()).default([]),
    review: z.array(z.record(z.string(), z.unknown())).optional(),
  })
  .passthrough();
export type SampleMeta = z.infer<typeof SampleMeta>;

/** Gold answer: calls per assistant turn (index into the dialogue) or labels (classification tasks). */
export const Expected = z
  .object({
    calls: z.array(Call).optional(),
    /** For multi-turn samples: gold calls of each assistant turn, keyed by its dialogue index. */
    turns: z.record(z.string(), z.array(Call)).optional(),
    labels: z.array(z.string()).optional(),
  })
  .passthrough();
export type Expected = z.infer<typeof Expected>;

export const Sample = z.object({
  id: z.string().min(1),
  benchmark: z.string().min(1),
  category: z.string().min(1),
  split: z.string().min(1),
  tools: z.array(ToolSpec),
  dialogue: z.array(Turn),
  expected: Expected,
  meta: SampleMeta,
});
export type Sample = z.infer<typeof Sample>;

/**
 * A stable id: a hash of what the sample is derived from (its source record, or its content when it
 * has no source), so the same input gives the same id on every run and a reviewed edit keeps its id.
 */
export function sampleId(benchmark: string, origin: unknown): string {
  return `${benchmark}-${hashOf(origin, 16)}`;
}

// ---------------------------------------------------------------- rejects and manifests

export const Rejection = z.object({
  stage: z.string(),
  reason: z.string().min(1),
  detail: z.string().optional(),
  /** Id of the rejected record when it has one (sample id, tool name, …). */
  recordId: z.string().optional(),
  /** The id this record duplicates, for de-duplication rejects. */
  duplicateOf: z.string().optional(),
  record: z.unknown(),
});
export type Rejection = z.infer<typeof Rejection>;

export const StageStats = z.object({
  stage: z.string(),
  version: z.number().int(),
  in: z.number().int(),
  out: z.number().int(),
  rejected: z.number().int(),
  /** out + rejected − in: extra records a fan-out stage emitted (negative for a fan-in stage). */
  fanned: z.number().int(),
  rejectsByReason: z.record(z.string(), z.number().int()),
  seconds: z.number(),
});
export type StageStats = z.infer<typeof StageStats>;

export const Usage = z.object({
  requests: z.number().int(),
  cached: z.number().int(),
  promptTokens: z.number().int(),
  completionTokens: z.number().int(),
  costUsd: z.number().nullable(),
});
export type Usage = z.infer<typeof Usage>;

export const Manifest = z
  .object({
    name: z.string(),
    version: z.string().regex(/^v\d+$/),
    pipeline: z.string(),
    config: z.unknown(),
    fingerprint: z.string(),
    parent: z.string().nullable(),
    stages: z.array(StageStats),
    usage: z.object({ total: Usage, byStage: z.record(z.string(), Usage), byModel: z.record(z.string(), Usage) }),
    models: z.array(z.string()),
    prompts: z.record(z.string(), z.string()),
    sources: z.record(z.string(), z.string()),
    counts: z.object({
      samples: z.number().int(),
      rejects: z.number().int(),
      tools: z.number().int(),
      bySplit: z.record(z.string(), z.number().int()),
      byCategory: z.record(z.string(), z.number().int()),
    }),
    stats: z.record(z.string(), z.unknown()).default({}),
    files: z.record(z.string(), z.string()),
    createdAt: z.string(),
    toolkilnVersion: z.string(),
    /** How the version's JSONL records are written (core/line-form.ts); absent: plain JSON records (before toolkiln 0.2.0). */
    lineForm: z.number().int().optional(),
  })
  .passthrough();
export type Manifest = z.infer<typeof Manifest>;

// ---------------------------------------------------------------- OpenAI function tools

export interface OpenAIFunctionTool {
  type: 'function';
  function: { name: string; description?: string; parameters: Record<string, unknown> };
}

/**
 * ToolSpec → OpenAI function tool. Fields OpenAI has no slot for (returns, domain, plugin, isAction,
 * provenance) travel under `x-toolkiln` in the parameters object so the round trip loses nothing.
 */
export function toOpenAITool(tool: ToolSpec): OpenAIFunctionTool {
  const extra: Record<string, unknown> = {};
  if (Object.keys(tool.returns.properties).length || tool.returns.required.length) extra.returns = tool.returns;
  for (const key of ['domain', 'plugin', 'isAction', 'provenance'] as const) if (tool[key] !== undefined) extra[key] = tool[key];
  const parameters: Record<string, unknown> = { ...tool.parameters };
  if (Object.keys(extra).length) parameters['x-toolkiln'] = extra;
  return { type: 'function', function: { name: tool.name, description: tool.description, parameters } };
}

export function fromOpenAITool(json: OpenAIFunctionTool): ToolSpec {
  const { 'x-toolkiln': extra = {}, ...parameters } = json.function.parameters as Record<string, unknown> & { 'x-toolkiln'?: Record<string, unknown> };
  return ToolSpec.parse({ name: json.function.name, description: json.function.description ?? '', parameters, ...extra });
}

/** Readable one-line summary of a zod error: `path: message; path: message`. */
export function formatZodError(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.length ? issue.path.join('.') : '(root)'}: ${issue.message}`).join('; ');
}
