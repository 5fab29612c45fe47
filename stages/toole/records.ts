import { z } from 'zod';
import { hashOf } from '../../core/hash.ts';
import { Check, LineageEntry, Provenance, type Sample } from '../../core/records.ts';

/**
 * The records a ToolE run passes between its generation stages. One stream holds three kinds of
 * item: the tool library (`tool`), generation requests not yet answered (`job`) and generated user
 * queries (`query`). Each stage works on the kind it is about and passes the others through, so the
 * library travels with the queries and every LLM request is a record of its own: a failed one is
 * rejected with its reason, the queries it would have produced are never silently missing. Once the
 * single-tool queries are filtered they become canonical samples (samples.ts) for the shared
 * de-duplication and merging stages and everything after them.
 */

/** Splits of the ToolE dataset itself (task sets have their own, `task-<name>`). */
export const SINGLE_TOOL_SPLIT = 'single-tool';
export const MULTI_TOOL_SPLIT = 'multi-tool';

export const GENERATION_METHODS = ['direct', 'emotional', 'keyword', 'details'] as const;
export type GenerationMethod = (typeof GENERATION_METHODS)[number];
export const QUERY_METHODS = [...GENERATION_METHODS, 'multi-tool'] as const;
export type QueryMethod = (typeof QUERY_METHODS)[number];
export const JOB_METHODS = ['direct', 'emotional', 'keyword-extract', 'keyword', 'details'] as const;
export type JobMethod = (typeof JOB_METHODS)[number];

/** A tool of the library: a plugin, or a tool that several plugins were merged into. */
export const TooleTool = z.object({
  /** The label queries carry (a plugin's `name_for_model`, or the merged tool's new name). */
  name: z.string().min(1),
  nameForHuman: z.string(),
  /** The definitive description (the user-facing one, as the paper chose). */
  description: z.string(),
  /** The model-facing description, also shown to generation prompts. */
  descriptionForModel: z.string(),
  provenance: Provenance,
  checks: z.array(Check).default([]),
  tags: z.array(z.string()).default([]),
});
export type TooleTool = z.infer<typeof TooleTool>;

/** What a generation prompt needs to know of a tool. */
export const ToolBrief = TooleTool.pick({ name: true, nameForHuman: true, description: true, descriptionForModel: true });
export type ToolBrief = z.infer<typeof ToolBrief>;

/** One user query and the tool(s) that answer it. */
export const TooleQuery = z.object({
  text: z.string(),
  /** The label: the tool that answers the query (the first of `tools` for a multi-tool query). */
  tool: z.string().min(1),
  /** Every label of a multi-tool query (both tools); absent for single-tool queries. */
  tools: z.array(z.string()).optional(),
  method: z.enum(QUERY_METHODS),
  emotion: z.string().optional(),
  keyword: z.string().optional(),
  round: z.number().int().optional(),
  /** Id of the direct query a details query augments. */
  basedOn: z.string().optional(),
  /** Parallel or causal use of the two tools of a multi-tool query, as the model said. */
  usage: z.enum(['parallel', 'causal']).optional(),
  /** The label the query was generated for, before overlap resolution relabelled it. */
  generatedFor: z.string().min(1),
  checks: z.array(Check).default([]),
  tags: z.array(z.string()).default([]),
  lineage: z.array(LineageEntry).default([]),
});
export type TooleQuery = z.infer<typeof TooleQuery>;

/** One LLM request still to be made. */
export const GenerationJob = z.object({
  method: z.enum(JOB_METHODS),
  /** The tool the request is about. */
  tools: z.array(ToolBrief).min(1),
  /** How many items to ask for. */
  count: z.number().int().min(1),
  round: z.number().int().min(1).optional(),
  emotion: z.string().optional(),
  keywords: z.array(z.string()).optional(),
  /** The query a details job augments. */
  base: TooleQuery.extend({ id: z.string() }).optional(),
});
export type GenerationJob = z.infer<typeof GenerationJob>;

export const TooleItem = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('tool'), id: z.string(), tool: TooleTool }),
  z.object({ kind: z.literal('job'), id: z.string(), job: GenerationJob }),
  z.object({ kind: z.literal('query'), id: z.string(), query: TooleQuery }),
]);
export type TooleItem = z.infer<typeof TooleItem>;
export type ToolItem = Extract<TooleItem, { kind: 'tool' }>;
export type JobItem = Extract<TooleItem, { kind: 'job' }>;
export type QueryItem = Extract<TooleItem, { kind: 'query' }>;

export function toolItem(tool: TooleTool): ToolItem {
  return { kind: 'tool', id: `tool:${tool.name}`, tool };
}

export function jobItem(job: GenerationJob): JobItem {
  const origin = { method: job.method, tools: job.tools.map((t) => t.name), round: job.round, emotion: job.emotion, keywords: job.keywords, base: job.base?.id };
  return { kind: 'job', id: `job:${job.method}:${hashOf(origin, 16)}`, job };
}

/** A query's id: stable for the same request and position, whatever the text turned out to be. */
export function queryItem(query: TooleQuery, origin: { job: string; index: number }): QueryItem {
  return { kind: 'query', id: `q:${hashOf(origin, 16)}`, query };
}

export function briefOf(tool: TooleTool): ToolBrief {
  return { name: tool.name, nameForHuman: tool.nameForHuman, description: tool.description, descriptionForModel: tool.descriptionForModel };
}

export const isTool = (item: TooleItem): item is ToolItem => item.kind === 'tool';
export const isJob = (item: TooleItem): item is JobItem => item.kind === 'job';
export const isQuery = (item: TooleItem): item is QueryItem => item.kind === 'query';

/** Appends a tag once. */
export function withTag<T extends { tags: string[] }>(record: T, tag: string): T {
  return record.tags.includes(tag) ? record : { ...record, tags: [...record.tags, tag] };
}

/** A ToolE sample's query: the text of its user turn. */
export function queryText(sample: Sample): string {
  return sample.dialogue.find((t) => t.role === 'user')?.content ?? '';
}
